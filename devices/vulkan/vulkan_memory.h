// Device memory of one Vulkan device, handed out as buffer device
// addresses: raw_allocate's "pointer" is the 64-bit GPU address inside a
// VkBuffer created with SHADER_DEVICE_ADDRESS usage, so tensors carry plain
// addresses (pointer arithmetic for views just works) and shaders read
// them through GL_EXT_buffer_reference.
//
// Memory comes from the driver in blocks: requests up to kMaxSubAllocation
// are sub-allocated (best fit, RangeAllocator) from shared blocks of
// kBlockBytes, larger ones get a dedicated block. Drivers cap the number of
// VkDeviceMemory objects (maxMemoryAllocationCount, 4096 on many) and make
// each one slow to create; the runtime's caching allocator above pools
// segments but still asks for one per segment. A block is returned to the
// driver as soon as nothing in it is live: caching is the allocator's job.
//
// Unified memory: on integrated and CPU devices (lavapipe) whose device
// memory is also host-visible and coherent, blocks stay mapped and
// host<->device copies use the mapping instead of staging buffers
// (TESSERA_VULKAN_UNIFIED_MEMORY=0 turns this off). A map from address back
// to (block, offset) serves copies, which need a VkBuffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include <vulkan/vulkan.h>

#include "devices/vulkan/range_allocator.h"
#include "devices/vulkan/staging_pool.h"
#include "devices/vulkan/vulkan_device.h"
#include "runtime/device/device_properties.h"

namespace tessera::vulkan {

struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  void* mapped = nullptr;  // the host address of offset, on unified memory
};

class VulkanMemory {
 public:
  static constexpr size_t kBlockBytes = size_t{64} << 20;
  static constexpr size_t kMaxSubAllocation = kBlockBytes / 4;
  // Every allocation is aligned and sized to this: enough for any element
  // type, and vkCmdCopyBuffer / vkCmdFillBuffer offsets stay simple.
  static constexpr size_t kAllocationGranule = 256;

  VulkanMemory(VkPhysicalDevice physical_device, VkDevice device, bool has_memory_budget);
  ~VulkanMemory();
  VulkanMemory(const VulkanMemory&) = delete;
  VulkanMemory& operator=(const VulkanMemory&) = delete;

  // The address of at least nbytes of device memory, or 0 when the device
  // is out of memory. Other failures throw DeviceError.
  uint64_t allocate(size_t nbytes);
  // Frees the allocation that starts at address; the caller has made sure
  // no pending work uses it. ValueError for an address it did not hand out.
  void free(uint64_t address);

  // The buffer holding [address, address + nbytes) and the offset of
  // address in it; ValueError when the range is not inside one live
  // allocation (a host pointer passed as a device one, freed memory).
  BufferRange resolve(uint64_t address, size_t nbytes, std::string_view op) const;

  // A mapped buffer for the host side of a copy, from the staging pool.
  StagingBuffer make_staging(size_t nbytes);

  // Host memory that copies read and write in place, without staging: a
  // mapped buffer of the staging memory type (the runtime's pinned host
  // memory, DeviceInterface::raw_allocate_host). nullptr when the driver
  // is out of memory, and where memory is unified (the device reads the
  // host's mappings of its own memory there: nothing to gain).
  void* allocate_host(size_t nbytes);
  // ValueError for a pointer that allocate_host did not return.
  void free_host(void* ptr);
  // The host buffer holding [ptr, ptr + nbytes) and ptr's offset in it; a
  // null buffer when the range is not inside one.
  BufferRange resolve_host(const void* ptr, size_t nbytes) const;

  bool unified() const { return unified_; }
  MemoryInfo memory_info() const;
  size_t device_heap_size() const { return device_heap_size_; }
  VulkanMemoryStats stats() const;

 private:
  struct Block {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t address = 0;
    size_t size = 0;
    void* mapped = nullptr;                  // unified memory only
    std::unique_ptr<RangeAllocator> ranges;  // null for a dedicated block
  };
  struct Live {
    Block* block = nullptr;
    size_t size = 0;
  };

  // A new block of `size` bytes, or null when the device is out of memory.
  std::unique_ptr<Block> create_block(size_t size, bool shared);
  void destroy_block(Block& block);

  VkPhysicalDevice physical_device_;
  VkDevice device_;
  bool has_memory_budget_;
  bool unified_ = false;
  uint32_t device_memory_type_ = 0;
  uint32_t device_heap_ = 0;
  size_t device_heap_size_ = 0;
  std::unique_ptr<StagingPool> staging_;
  uint32_t staging_memory_type_ = 0;

  mutable std::mutex mutex_;
  std::map<uint64_t, std::unique_ptr<Block>> blocks_;  // by address
  std::map<uint64_t, Live> live_;                       // allocations, by address
  std::map<uintptr_t, StagingBuffer> host_buffers_;     // allocate_host's, by address
  size_t block_bytes_ = 0;
};

}  // namespace tessera::vulkan
