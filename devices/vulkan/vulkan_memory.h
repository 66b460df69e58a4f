// Device memory of one Vulkan device, handed out as buffer device
// addresses: raw_allocate's "pointer" is the 64-bit GPU address of a
// VkBuffer created with SHADER_DEVICE_ADDRESS usage, so tensors carry plain
// addresses (pointer arithmetic for views just works) and shaders read
// them through GL_EXT_buffer_reference.
//
// One VkBuffer + VkDeviceMemory per allocation: the runtime's caching
// allocator above already pools and splits large segments, so a second
// sub-allocator here would only duplicate it. A map from address back to
// (buffer, offset) serves copies, which need a VkBuffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string_view>

#include <vulkan/vulkan.h>

#include "devices/vulkan/staging_buffer.h"
#include "runtime/device/device_properties.h"

namespace tessera::vulkan {

struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
};

class VulkanMemory {
 public:
  VulkanMemory(VkPhysicalDevice physical_device, VkDevice device, bool has_memory_budget);
  ~VulkanMemory();
  VulkanMemory(const VulkanMemory&) = delete;
  VulkanMemory& operator=(const VulkanMemory&) = delete;

  // The address of a new buffer of at least nbytes, or 0 when the device
  // is out of memory. Other failures throw DeviceError.
  uint64_t allocate(size_t nbytes);
  // Frees the buffer that starts at address; the caller has made sure no
  // pending work uses it. ValueError for an address it did not hand out.
  void free(uint64_t address);

  // The buffer holding [address, address + nbytes) and the offset of
  // address in it; ValueError when the range is not inside one live
  // allocation (a host pointer passed as a device one, a freed block).
  BufferRange resolve(uint64_t address, size_t nbytes, std::string_view op) const;

  StagingBuffer make_staging(size_t nbytes) const;

  MemoryInfo memory_info() const;
  size_t device_heap_size() const { return device_heap_size_; }

 private:
  struct Allocation {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    size_t size = 0;
  };

  VkPhysicalDevice physical_device_;
  VkDevice device_;
  bool has_memory_budget_;
  uint32_t device_memory_type_ = 0;
  uint32_t staging_memory_type_ = 0;
  uint32_t device_heap_ = 0;
  size_t device_heap_size_ = 0;

  mutable std::mutex mutex_;
  std::map<uint64_t, Allocation> allocations_;  // by address
  size_t allocated_bytes_ = 0;
};

}  // namespace tessera::vulkan
