#include "devices/vulkan/staging_buffer.h"

#include <utility>

#include "devices/vulkan/staging_pool.h"
#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {

StagingBuffer::StagingBuffer(VkDevice device, uint32_t memory_type, size_t nbytes)
    : device_(device), size_(nbytes) {
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = nbytes;
  buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check_vk(vkCreateBuffer(device_, &buffer_info, nullptr, &buffer_), "vkCreateBuffer (staging)");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, buffer_, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type;
  VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &memory_);
  if (r != VK_SUCCESS) {
    release();
    if (is_out_of_memory(r)) {
      throw OutOfMemoryError(detail::concat("vulkan: out of host-visible memory for a ", nbytes,
                                            "-byte staging buffer of a host<->device copy"));
    }
    check_vk(r, "vkAllocateMemory (staging)");
  }
  try {
    check_vk(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory (staging)");
    check_vk(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory (staging)");
  } catch (...) {
    release();
    throw;
  }
}

StagingBuffer::~StagingBuffer() {
  // The pool either takes the buffer (leaving this one empty) or declines.
  if (pool_ != nullptr && buffer_ != VK_NULL_HANDLE) pool_->give_back(std::move(*this));
  release();
}

StagingBuffer::StagingBuffer(StagingBuffer&& other) noexcept
    : device_(std::exchange(other.device_, VK_NULL_HANDLE)),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(other.memory_, VK_NULL_HANDLE)),
      mapped_(std::exchange(other.mapped_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      pool_(std::exchange(other.pool_, nullptr)) {}

StagingBuffer& StagingBuffer::operator=(StagingBuffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    mapped_ = std::exchange(other.mapped_, nullptr);
    size_ = std::exchange(other.size_, 0);
    pool_ = std::exchange(other.pool_, nullptr);
  }
  return *this;
}

void StagingBuffer::release() {
  if (device_ == VK_NULL_HANDLE) return;
  // Freeing mapped memory unmaps it implicitly.
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
}

}  // namespace tessera::vulkan
