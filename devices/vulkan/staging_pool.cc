#include "devices/vulkan/staging_pool.h"

#include <bit>
#include <utility>

namespace tessera::vulkan {

StagingPool::StagingPool(VkDevice device, uint32_t memory_type)
    : device_(device), memory_type_(memory_type) {}

StagingBuffer StagingPool::acquire(size_t nbytes) {
  if (nbytes > kMaxPooledBytes) return StagingBuffer(device_, memory_type_, nbytes);
  const size_t size = std::bit_ceil(std::max(nbytes, kMinPooledBytes));
  StagingBuffer buffer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = idle_.find(size);
    if (it != idle_.end() && !it->second.empty()) {
      buffer = std::move(it->second.back());
      it->second.pop_back();
      idle_bytes_ -= size;
    }
  }
  if (buffer.buffer() == VK_NULL_HANDLE) buffer = StagingBuffer(device_, memory_type_, size);
  buffer.set_pool(this);
  return buffer;
}

void StagingPool::give_back(StagingBuffer&& buffer) {
  buffer.set_pool(nullptr);
  const size_t size = buffer.size();
  std::lock_guard<std::mutex> lock(mutex_);
  if (size > kMaxPooledBytes || idle_bytes_ + size > kMaxIdleBytes) return;  // freed here
  idle_bytes_ += size;
  idle_[size].push_back(std::move(buffer));
}

size_t StagingPool::idle_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_bytes_;
}

}  // namespace tessera::vulkan
