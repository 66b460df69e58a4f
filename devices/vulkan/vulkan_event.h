// An event of one Vulkan device: a timeline semaphore of its own, signaled
// by the batch that records it (base + n for the n-th record, base being
// the value the semaphore had when the event took it from the device's
// pool), plus a timestamp query written just before, for elapsed times.
// Owning the semaphore (rather than pointing at the stream's) keeps an
// event valid after its stream is destroyed.
#pragma once

#include <cstdint>
#include <mutex>

#include <vulkan/vulkan.h>

#include "devices/vulkan/vulkan_stream.h"

namespace tessera::vulkan {

class VulkanContext;

class VulkanEvent {
 public:
  explicit VulkanEvent(VulkanContext& context);
  ~VulkanEvent();
  VulkanEvent(const VulkanEvent&) = delete;
  VulkanEvent& operator=(const VulkanEvent&) = delete;

  // Marks the point after the work enqueued on stream so far.
  void record(VulkanStream& stream);
  // Makes stream's later work wait for the recorded point (a no-op when
  // never recorded, as in CUDA).
  void block(VulkanStream& stream);
  bool query();
  void synchronize();
  // Milliseconds from this event's timestamp to end's; both recorded.
  double elapsed_ms(VulkanEvent& end);

 private:
  TimelinePoint recorded_point();
  uint64_t timestamp_ticks();

  VulkanContext& context_;
  VkSemaphore semaphore_ = VK_NULL_HANDLE;
  VkQueryPool timestamps_ = VK_NULL_HANDLE;
  std::mutex mutex_;
  // The semaphore's value when this event took it; recorded_value_ equal
  // to it means never recorded. Records signal base + 1, base + 2, ...
  uint64_t base_value_ = 0;
  uint64_t recorded_value_ = 0;
  // Some stream was made to wait on the semaphore: batches that wait on it
  // must complete before it may be destroyed.
  bool waited_on_ = false;
};

}  // namespace tessera::vulkan
