// Reuses staging buffers across host<->device copies: creating, binding
// and mapping a fresh VkDeviceMemory per copy costs more than a small
// copy itself. Requests up to kMaxPooledBytes are rounded up to a power of
// two (at least kMinPooledBytes) and served from idle buffers of that
// size; a buffer returns here when the batch that used it completes
// (StagingBuffer's destructor). At most kMaxIdleBytes stay idle; larger
// requests get a buffer of their own.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include <vulkan/vulkan.h>

#include "devices/vulkan/staging_buffer.h"

namespace tessera::vulkan {

class StagingPool {
 public:
  static constexpr size_t kMinPooledBytes = size_t{64} << 10;
  static constexpr size_t kMaxPooledBytes = size_t{16} << 20;
  static constexpr size_t kMaxIdleBytes = size_t{64} << 20;

  StagingPool(VkDevice device, uint32_t memory_type);
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A mapped buffer of at least nbytes; it comes back here on destruction.
  StagingBuffer acquire(size_t nbytes);
  // Called by StagingBuffer's destructor: keeps the buffer if it is of a
  // pooled size and the idle total stays within kMaxIdleBytes.
  void give_back(StagingBuffer&& buffer);

  size_t idle_bytes() const;

 private:
  VkDevice device_;
  uint32_t memory_type_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<StagingBuffer>> idle_;  // by size
  size_t idle_bytes_ = 0;
};

}  // namespace tessera::vulkan
