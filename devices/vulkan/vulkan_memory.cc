#include "devices/vulkan/vulkan_memory.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {
namespace {

constexpr VkBufferUsageFlags kDeviceBufferUsage =
    VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

constexpr size_t kGranule = VulkanMemory::kAllocationGranule;

// TESSERA_VULKAN_UNIFIED_MEMORY=0 forces staging copies even where device
// memory is host-visible (tests cover both paths on lavapipe this way).
bool unified_memory_allowed() {
  return env_switch("TESSERA_VULKAN_UNIFIED_MEMORY").value_or(true);
}

VkBuffer create_buffer(VkDevice device, size_t nbytes, VkBufferUsageFlags usage,
                       VkResult* result) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = nbytes;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  *result = vkCreateBuffer(device, &info, nullptr, &buffer);
  return buffer;
}

// The first type allowed by type_bits that has all of `required`,
// preferring one that also has `preferred`; -1 if none.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits,
                     VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  int fallback = -1;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

}  // namespace

VulkanMemory::VulkanMemory(VkPhysicalDevice physical_device, VkDevice device,
                           bool has_memory_budget)
    : physical_device_(physical_device), device_(device), has_memory_budget_(has_memory_budget) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &props);

  // The memory types a device buffer may use, from a probe buffer.
  VkResult r;
  VkBuffer probe = create_buffer(device_, kGranule, kDeviceBufferUsage, &r);
  check_vk(r, "vkCreateBuffer (memory type probe)");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, probe, &req);
  vkDestroyBuffer(device_, probe, nullptr);
  int device_type = find_memory_type(props, req.memoryTypeBits, 0,
                                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  TESSERA_CHECK(device_type >= 0, DeviceError,
                "vulkan: no memory type can hold a storage buffer on this device");
  device_memory_type_ = static_cast<uint32_t>(device_type);
  device_heap_ = props.memoryTypes[device_memory_type_].heapIndex;
  device_heap_size_ = props.memoryHeaps[device_heap_].size;

  VkBuffer staging_probe = create_buffer(
      device_, kGranule,
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, &r);
  check_vk(r, "vkCreateBuffer (memory type probe)");
  vkGetBufferMemoryRequirements(device_, staging_probe, &req);
  vkDestroyBuffer(device_, staging_probe, nullptr);
  // Cached memory makes the host's reads of device-to-host copies fast.
  int staging_type = find_memory_type(
      props, req.memoryTypeBits,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  TESSERA_CHECK(staging_type >= 0, DeviceError,
                "vulkan: no host-visible, coherent memory type for staging copies");
  staging_memory_type_ = static_cast<uint32_t>(staging_type);
  staging_ = std::make_unique<StagingPool>(device_, staging_memory_type_);

  // Unified memory: an integrated or CPU device whose device memory the
  // host can map coherently. (A discrete GPU's host-visible device memory
  // is a small PCIe window, not a place for every tensor.)
  VkPhysicalDeviceProperties device_props;
  vkGetPhysicalDeviceProperties(physical_device_, &device_props);
  const VkMemoryPropertyFlags host_coherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  unified_ = unified_memory_allowed() &&
             (device_props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
              device_props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) &&
             (props.memoryTypes[device_memory_type_].propertyFlags & host_coherent) ==
                 host_coherent;
}

VulkanMemory::~VulkanMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [address, block] : blocks_) destroy_block(*block);
}

std::unique_ptr<VulkanMemory::Block> VulkanMemory::create_block(size_t size, bool shared) {
  VkResult r;
  auto block = std::make_unique<Block>();
  block->size = size;
  block->buffer = create_buffer(device_, size, kDeviceBufferUsage, &r);
  if (is_out_of_memory(r)) return nullptr;
  check_vk(r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, block->buffer, &req);
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.pNext = &flags;
  info.allocationSize = req.size;
  info.memoryTypeIndex = device_memory_type_;
  r = vkAllocateMemory(device_, &info, nullptr, &block->memory);
  if (r != VK_SUCCESS) {
    destroy_block(*block);
    if (is_out_of_memory(r)) return nullptr;
    check_vk(r, "vkAllocateMemory");
  }
  try {
    check_vk(vkBindBufferMemory(device_, block->buffer, block->memory, 0), "vkBindBufferMemory");
    if (unified_) {
      check_vk(vkMapMemory(device_, block->memory, 0, VK_WHOLE_SIZE, 0, &block->mapped),
               "vkMapMemory (unified device memory)");
    }
  } catch (...) {
    destroy_block(*block);
    throw;
  }
  VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  address_info.buffer = block->buffer;
  block->address = vkGetBufferDeviceAddress(device_, &address_info);
  if (block->address == 0) {
    destroy_block(*block);
    throw DeviceError("vulkan: vkGetBufferDeviceAddress returned 0 for a new buffer");
  }
  if (shared) block->ranges = std::make_unique<RangeAllocator>(size);
  return block;
}

void VulkanMemory::destroy_block(Block& block) {
  // Freeing mapped memory unmaps it implicitly.
  if (block.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, block.buffer, nullptr);
  if (block.memory != VK_NULL_HANDLE) vkFreeMemory(device_, block.memory, nullptr);
  block.buffer = VK_NULL_HANDLE;
  block.memory = VK_NULL_HANDLE;
  block.mapped = nullptr;
}

uint64_t VulkanMemory::allocate(size_t nbytes) {
  // Rounding is overflow-checked: an impossible size is out of memory.
  if (nbytes > std::numeric_limits<size_t>::max() - kGranule) return 0;
  const size_t size = std::max(kGranule, (nbytes + kGranule - 1) / kGranule * kGranule);
  std::lock_guard<std::mutex> lock(mutex_);
  if (size <= kMaxSubAllocation) {
    for (auto& [base, block] : blocks_) {
      if (!block->ranges || block->ranges->largest_free() < size) continue;
      const uint64_t offset = *block->ranges->allocate(size);
      live_[base + offset] = Live{block.get(), size};
      return base + offset;
    }
  }
  const bool shared = size <= kMaxSubAllocation;
  std::unique_ptr<Block> block = create_block(shared ? kBlockBytes : size, shared);
  if (!block) return 0;
  Block* raw = block.get();
  const uint64_t address = raw->address;
  if (shared) raw->ranges->allocate(size);  // offset 0 of an empty block
  blocks_[address] = std::move(block);
  block_bytes_ += raw->size;
  live_[address] = Live{raw, size};
  return address;
}

void VulkanMemory::free(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(address);
  TESSERA_CHECK(it != live_.end(), ValueError, "vulkan raw_free: 0x", std::hex, address,
                " is not the start of a live allocation of this device");
  Block* block = it->second.block;
  if (block->ranges) block->ranges->free(address - block->address, it->second.size);
  live_.erase(it);
  if (block->ranges && !block->ranges->empty()) return;
  block_bytes_ -= block->size;
  destroy_block(*block);
  blocks_.erase(block->address);
}

BufferRange VulkanMemory::resolve(uint64_t address, size_t nbytes, std::string_view op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it != live_.begin()) {
    --it;
    const uint64_t base = it->first;
    if (address >= base && nbytes <= it->second.size &&
        address - base <= it->second.size - nbytes) {
      const Block& block = *it->second.block;
      const VkDeviceSize offset = address - block.address;
      void* mapped = block.mapped ? static_cast<char*>(block.mapped) + offset : nullptr;
      return BufferRange{block.buffer, offset, mapped};
    }
  }
  throw ValueError(detail::concat("vulkan ", op, ": [0x", std::hex, address, ", 0x",
                                  address + nbytes, ") is not inside one live allocation of "
                                  "this device (a host pointer or freed memory?)"));
}

StagingBuffer VulkanMemory::make_staging(size_t nbytes) {
  return staging_->acquire(std::max<size_t>(nbytes, 4));
}

void* VulkanMemory::allocate_host(size_t nbytes) {
  if (unified_ || nbytes == 0) return nullptr;
  StagingBuffer buffer;
  try {
    buffer = StagingBuffer(device_, staging_memory_type_, nbytes);
  } catch (const OutOfMemoryError&) {
    return nullptr;  // the pinned allocator frees its cache and retries
  }
  void* ptr = buffer.mapped();
  std::lock_guard<std::mutex> lock(mutex_);
  host_buffers_.emplace(reinterpret_cast<uintptr_t>(ptr), std::move(buffer));
  return ptr;
}

void VulkanMemory::free_host(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = host_buffers_.find(reinterpret_cast<uintptr_t>(ptr));
  TESSERA_CHECK(it != host_buffers_.end(), ValueError, "vulkan raw_free_host: ", ptr,
                " is not host memory of this device");
  host_buffers_.erase(it);
}

BufferRange VulkanMemory::resolve_host(const void* ptr, size_t nbytes) const {
  const uintptr_t at = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = host_buffers_.upper_bound(at);
  if (it == host_buffers_.begin()) return {};
  --it;
  const uintptr_t offset = at - it->first;
  if (offset > it->second.size() || nbytes > it->second.size() - offset) return {};
  return BufferRange{it->second.buffer(), offset, const_cast<void*>(ptr)};
}

VulkanMemoryStats VulkanMemory::stats() const {
  VulkanMemoryStats stats;
  stats.staging_idle_bytes = staging_->idle_bytes();
  stats.unified = unified_;
  std::lock_guard<std::mutex> lock(mutex_);
  stats.blocks = blocks_.size();
  stats.block_bytes = block_bytes_;
  stats.allocations = live_.size();
  return stats;
}

MemoryInfo VulkanMemory::memory_info() const {
  MemoryInfo info;
  info.total = device_heap_size_;
  if (has_memory_budget_) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    props.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(physical_device_, &props);
    const VkDeviceSize heap_budget = budget.heapBudget[device_heap_];
    const VkDeviceSize usage = budget.heapUsage[device_heap_];
    info.free = heap_budget > usage ? heap_budget - usage : 0;
    return info;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  info.free = device_heap_size_ > block_bytes_ ? device_heap_size_ - block_bytes_ : 0;
  return info;
}

}  // namespace tessera::vulkan
