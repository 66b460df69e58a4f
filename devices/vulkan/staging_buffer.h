// A host-visible, persistently mapped buffer that carries the host side of
// a host<->device copy (vkCmdCopyBuffer needs a buffer on both sides). It
// lives until the command buffer that uses it has completed: the stream
// keeps it with the batch (see VulkanStream::record). One that came from a
// StagingPool goes back there instead of being freed.
#pragma once

#include <cstddef>

#include <vulkan/vulkan.h>

namespace tessera::vulkan {

class StagingPool;

class StagingBuffer {
 public:
  StagingBuffer() = default;
  // Throws DeviceError (or OutOfMemoryError when the driver is out of
  // memory) on failure.
  StagingBuffer(VkDevice device, uint32_t memory_type, size_t nbytes);
  ~StagingBuffer();
  StagingBuffer(StagingBuffer&& other) noexcept;
  StagingBuffer& operator=(StagingBuffer&& other) noexcept;
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  VkBuffer buffer() const { return buffer_; }
  void* mapped() const { return mapped_; }
  size_t size() const { return size_; }
  // Where the destructor returns the buffer (nullptr: it frees it).
  void set_pool(StagingPool* pool) { pool_ = pool; }

 private:
  void release();

  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  size_t size_ = 0;
  StagingPool* pool_ = nullptr;
};

}  // namespace tessera::vulkan
