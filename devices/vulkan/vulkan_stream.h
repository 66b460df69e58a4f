// A stream of one Vulkan device: commands are recorded into an open
// command buffer (a batch) and submitted when the stream is synchronized
// or queried, when an event is recorded, when a copy needs the host, or
// after kMaxDispatchesPerBatch dispatches, so the device starts on long
// sequences without waiting for a sync.
//
// Each stream owns a timeline semaphore: batch k signals value k and waits
// for value k - 1, which orders the stream's batches on the shared queue
// (submission order alone does not order completion). Waits on events of
// other streams are added to the next batch.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include <vulkan/vulkan.h>

#include "devices/vulkan/staging_buffer.h"

namespace tessera::vulkan {

class VulkanContext;

// A timeline semaphore and the value a batch signals it to or waits for.
struct TimelinePoint {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};

class VulkanStream {
 public:
  explicit VulkanStream(VulkanContext& context);
  // Waits for the stream's work, then frees its objects.
  ~VulkanStream();
  VulkanStream(const VulkanStream&) = delete;
  VulkanStream& operator=(const VulkanStream&) = delete;

  // Calls record(cb) with the open command buffer, under the stream's
  // lock, then adds a barrier so the next command sees its writes. A
  // staging buffer given here lives until the batch completes.
  // `is_dispatch` counts toward the batch's dispatch limit.
  void record(const std::function<void(VkCommandBuffer)>& record, bool is_dispatch,
              StagingBuffer keep_alive = StagingBuffer());

  // Submits the open batch (if any, or if waits are pending, or if
  // `also_signal` is given) and returns the stream's last submitted
  // value. `also_signal` is signaled by the same batch (events use it).
  uint64_t flush(std::optional<TimelinePoint> also_signal = std::nullopt);

  // The next batch waits for `point` (an event recorded on another stream).
  void wait_for(TimelinePoint point);

  // Submits and waits (bounded) for everything submitted so far.
  void synchronize(std::string_view what);
  // Submits, then says whether everything submitted has completed.
  bool query();
  // True when nothing is recorded, waited for or running: the host may
  // then touch the stream's memory directly without breaking its order
  // (unified-memory copies). Submits nothing.
  bool idle();

  VulkanContext& context() const { return context_; }

 private:
  struct Batch {
    VkCommandBuffer commands = VK_NULL_HANDLE;
    uint64_t value = 0;  // the semaphore value its completion signals
    std::vector<StagingBuffer> staging;
  };

  void open_batch_locked();
  uint64_t flush_locked(std::optional<TimelinePoint> also_signal);
  // Recycles the command buffers (and staging) of completed batches.
  void reclaim_locked();
  uint64_t completed_value() const;

  VulkanContext& context_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;

  std::mutex mutex_;
  std::optional<Batch> open_;
  int dispatches_in_open_ = 0;
  std::deque<Batch> in_flight_;
  std::vector<VkCommandBuffer> free_command_buffers_;
  std::vector<TimelinePoint> pending_waits_;
  uint64_t last_submitted_ = 0;
};

}  // namespace tessera::vulkan
