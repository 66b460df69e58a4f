#include "devices/vulkan/vulkan_event.h"

#include "devices/vulkan/vulkan_check.h"
#include "devices/vulkan/vulkan_context.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {

VulkanEvent::VulkanEvent(VulkanContext& context) : context_(context) {
  const VulkanContext::EventObjects objects = context_.acquire_event_objects();
  semaphore_ = objects.semaphore;
  timestamps_ = objects.timestamps;
  base_value_ = recorded_value_ = objects.value;
}

VulkanEvent::~VulkanEvent() {
  // A batch may still signal the semaphore or write the query, and batches
  // of other streams may wait on it (also ones not yet submitted): wait for
  // them first (bounded), then give the objects back to the context's pool
  // (see acquire_event_objects); on failure leak them rather than reuse
  // ones in use.
  try {
    synchronize();
    if (waited_on_) context_.synchronize_all("an event being destroyed");
  } catch (...) {
    return;
  }
  context_.release_event_objects({semaphore_, timestamps_, recorded_value_});
}

void VulkanEvent::record(VulkanStream& stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (timestamps_ != VK_NULL_HANDLE) {
    // Re-recording: the previous timestamp must be written before the reset.
    if (recorded_value_ > base_value_) {
      context_.wait(TimelinePoint{semaphore_, recorded_value_}, "an event being re-recorded");
    }
    stream.record(
        [&](VkCommandBuffer cb) {
          vkCmdResetQueryPool(cb, timestamps_, 0, 1);
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 0);
        },
        /*is_dispatch=*/false);
  }
  stream.flush(TimelinePoint{semaphore_, recorded_value_ + 1});
  ++recorded_value_;
}

TimelinePoint VulkanEvent::recorded_point() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Value 0: never recorded (the semaphore may come from the pool with a
  // value reached by an earlier event).
  return TimelinePoint{semaphore_, recorded_value_ == base_value_ ? 0 : recorded_value_};
}

void VulkanEvent::block(VulkanStream& stream) {
  TimelinePoint point = recorded_point();
  if (point.value == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waited_on_ = true;
  }
  stream.wait_for(point);
}

bool VulkanEvent::query() {
  TimelinePoint point = recorded_point();
  if (point.value == 0) return true;
  uint64_t value = 0;
  check_vk(vkGetSemaphoreCounterValue(context_.device(), semaphore_, &value),
           "vkGetSemaphoreCounterValue (event)");
  return value >= point.value;
}

void VulkanEvent::synchronize() {
  TimelinePoint point = recorded_point();
  if (point.value == 0) return;
  context_.wait(point, "an event");
}

uint64_t VulkanEvent::timestamp_ticks() {
  synchronize();
  uint64_t ticks = 0;
  check_vk(vkGetQueryPoolResults(context_.device(), timestamps_, 0, 1, sizeof(ticks), &ticks,
                                 sizeof(ticks), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults (event timestamp)");
  return ticks;
}

double VulkanEvent::elapsed_ms(VulkanEvent& end) {
  TESSERA_CHECK(recorded_point().value > 0 && end.recorded_point().value > 0, ValueError,
                "vulkan elapsed_ms: both events must be recorded first");
  TESSERA_CHECK(timestamps_ != VK_NULL_HANDLE && end.timestamps_ != VK_NULL_HANDLE, DeviceError,
                "vulkan elapsed_ms: the device's compute queue has no timestamps "
                "(timestampValidBits is 0)");
  const uint64_t start_ticks = timestamp_ticks();
  const uint64_t end_ticks = end.timestamp_ticks();
  // Timestamps have timestampValidBits significant bits and wrap there.
  const uint32_t bits = context_.timestamp_valid_bits();
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t ticks = (end_ticks - start_ticks) & mask;
  return static_cast<double>(ticks) * context_.timestamp_period_ns() / 1e6;
}

}  // namespace tessera::vulkan
