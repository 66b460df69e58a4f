#include "devices/vulkan/vulkan_stream.h"

#include <utility>

#include "devices/vulkan/vulkan_check.h"
#include "devices/vulkan/vulkan_context.h"

namespace tessera::vulkan {
namespace {

// Enough work for the device to chew on while the host records more, few
// enough that a long loop of small ops is not one giant batch.
constexpr int kMaxDispatchesPerBatch = 64;

// Makes every write by earlier transfers and dispatches visible to later
// ones and to the host (which reads staging buffers after a wait).
void full_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                          VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                           VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace

VulkanStream::VulkanStream(VulkanContext& context) : context_(context) {
  VkDevice device = context_.device();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = context_.queue_family();
  check_vk(vkCreateCommandPool(device, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type_info.initialValue = 0;
  VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sem_info.pNext = &type_info;
  VkResult r = vkCreateSemaphore(device, &sem_info, nullptr, &timeline_);
  if (r != VK_SUCCESS) {
    vkDestroyCommandPool(device, pool_, nullptr);
    check_vk(r, "vkCreateSemaphore (stream timeline)");
  }
}

VulkanStream::~VulkanStream() {
  // Destructors must not throw: a failed wait leaves the objects alive
  // (leaked) rather than freeing memory the device may still use.
  try {
    synchronize("a stream being destroyed");
  } catch (...) {
    return;
  }
  VkDevice device = context_.device();
  in_flight_.clear();
  open_.reset();
  vkDestroyCommandPool(device, pool_, nullptr);  // frees its command buffers
  vkDestroySemaphore(device, timeline_, nullptr);
}

void VulkanStream::record(const std::function<void(VkCommandBuffer)>& record, bool is_dispatch,
                          StagingBuffer keep_alive) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_) open_batch_locked();
  record(open_->commands);
  full_barrier(open_->commands);
  if (keep_alive.buffer() != VK_NULL_HANDLE) open_->staging.push_back(std::move(keep_alive));
  if (is_dispatch && ++dispatches_in_open_ >= kMaxDispatchesPerBatch) flush_locked(std::nullopt);
}

uint64_t VulkanStream::flush(std::optional<TimelinePoint> also_signal) {
  std::lock_guard<std::mutex> lock(mutex_);
  return flush_locked(also_signal);
}

void VulkanStream::wait_for(TimelinePoint point) {
  if (point.semaphore == timeline_) return;  // the stream's own order covers it
  std::lock_guard<std::mutex> lock(mutex_);
  pending_waits_.push_back(point);
}

void VulkanStream::synchronize(std::string_view what) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    target = flush_locked(std::nullopt);
  }
  context_.wait(TimelinePoint{timeline_, target}, what);
  std::lock_guard<std::mutex> lock(mutex_);
  reclaim_locked();
}

bool VulkanStream::query() {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t target = flush_locked(std::nullopt);
  return completed_value() >= target;
}

bool VulkanStream::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !open_ && pending_waits_.empty() && completed_value() >= last_submitted_;
}

void VulkanStream::open_batch_locked() {
  reclaim_locked();
  Batch batch;
  if (!free_command_buffers_.empty()) {
    batch.commands = free_command_buffers_.back();
    free_command_buffers_.pop_back();
  } else {
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    check_vk(vkAllocateCommandBuffers(context_.device(), &info, &batch.commands),
             "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(batch.commands, &begin);
  if (r != VK_SUCCESS) {
    free_command_buffers_.push_back(batch.commands);
    check_vk(r, "vkBeginCommandBuffer");
  }
  open_ = std::move(batch);
  dispatches_in_open_ = 0;
}

uint64_t VulkanStream::flush_locked(std::optional<TimelinePoint> also_signal) {
  if (!open_ && pending_waits_.empty() && !also_signal) return last_submitted_;
  if (!open_) open_batch_locked();
  if (VkResult r = vkEndCommandBuffer(open_->commands); r != VK_SUCCESS) {
    vkResetCommandBuffer(open_->commands, 0);
    free_command_buffers_.push_back(open_->commands);
    open_.reset();
    check_vk(r, "vkEndCommandBuffer");
  }

  const uint64_t value = last_submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  if (last_submitted_ > 0) {
    wait_semaphores.push_back(timeline_);
    wait_values.push_back(last_submitted_);
  }
  for (const TimelinePoint& p : pending_waits_) {
    wait_semaphores.push_back(p.semaphore);
    wait_values.push_back(p.value);
  }
  std::vector<VkPipelineStageFlags> wait_stages(wait_semaphores.size(),
                                                VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  VkSemaphore signal_semaphores[2] = {timeline_, VK_NULL_HANDLE};
  uint64_t signal_values[2] = {value, 0};
  uint32_t signal_count = 1;
  if (also_signal) {
    signal_semaphores[1] = also_signal->semaphore;
    signal_values[1] = also_signal->value;
    signal_count = 2;
  }
  VkTimelineSemaphoreSubmitInfo timeline_info{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline_info.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline_info.pWaitSemaphoreValues = wait_values.data();
  timeline_info.signalSemaphoreValueCount = signal_count;
  timeline_info.pSignalSemaphoreValues = signal_values;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline_info;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &open_->commands;
  submit.signalSemaphoreCount = signal_count;
  submit.pSignalSemaphores = signal_semaphores;
  try {
    context_.submit(submit);
  } catch (...) {
    // The batch's work is lost (the error says why); drop it so the next
    // command starts a fresh command buffer instead of writing to an
    // ended one.
    vkResetCommandBuffer(open_->commands, 0);
    free_command_buffers_.push_back(open_->commands);
    open_.reset();
    pending_waits_.clear();
    throw;
  }

  open_->value = value;
  in_flight_.push_back(std::move(*open_));
  open_.reset();
  pending_waits_.clear();
  last_submitted_ = value;
  return value;
}

void VulkanStream::reclaim_locked() {
  if (in_flight_.empty()) return;
  const uint64_t done = completed_value();
  while (!in_flight_.empty() && in_flight_.front().value <= done) {
    Batch& b = in_flight_.front();
    check_vk(vkResetCommandBuffer(b.commands, 0), "vkResetCommandBuffer");
    free_command_buffers_.push_back(b.commands);
    in_flight_.pop_front();  // frees its staging buffers
  }
}

uint64_t VulkanStream::completed_value() const {
  uint64_t value = 0;
  check_vk(vkGetSemaphoreCounterValue(context_.device(), timeline_, &value),
           "vkGetSemaphoreCounterValue (stream)");
  return value;
}

}  // namespace tessera::vulkan
