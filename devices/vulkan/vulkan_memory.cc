#include "devices/vulkan/vulkan_memory.h"

#include <algorithm>

#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {
namespace {

constexpr VkBufferUsageFlags kDeviceBufferUsage =
    VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Allocations are rounded up so that every address is aligned for any
// element type and vkCmdCopyBuffer offsets stay simple.
constexpr size_t kAllocationGranule = 256;

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
  VkBuffer probe = create_buffer(device_, kAllocationGranule, kDeviceBufferUsage, &r);
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
      device_, kAllocationGranule,
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
}

VulkanMemory::~VulkanMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [address, a] : allocations_) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    vkFreeMemory(device_, a.memory, nullptr);
  }
}

uint64_t VulkanMemory::allocate(size_t nbytes) {
  const size_t size = std::max<size_t>(kAllocationGranule,
                                       (nbytes + kAllocationGranule - 1) / kAllocationGranule *
                                           kAllocationGranule);
  VkResult r;
  Allocation a;
  a.size = size;
  a.buffer = create_buffer(device_, size, kDeviceBufferUsage, &r);
  if (is_out_of_memory(r)) return 0;
  check_vk(r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, a.buffer, &req);
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.pNext = &flags;
  info.allocationSize = req.size;
  info.memoryTypeIndex = device_memory_type_;
  r = vkAllocateMemory(device_, &info, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    if (is_out_of_memory(r)) return 0;
    check_vk(r, "vkAllocateMemory");
  }
  r = vkBindBufferMemory(device_, a.buffer, a.memory, 0);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    vkFreeMemory(device_, a.memory, nullptr);
    check_vk(r, "vkBindBufferMemory");
  }
  VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  address_info.buffer = a.buffer;
  const uint64_t address = vkGetBufferDeviceAddress(device_, &address_info);
  if (address == 0) {
    vkDestroyBuffer(device_, a.buffer, nullptr);
    vkFreeMemory(device_, a.memory, nullptr);
    throw DeviceError("vulkan: vkGetBufferDeviceAddress returned 0 for a new buffer");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[address] = a;
  allocated_bytes_ += size;
  return address;
}

void VulkanMemory::free(uint64_t address) {
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = allocations_.find(address);
    TESSERA_CHECK(it != allocations_.end(), ValueError, "vulkan raw_free: 0x", std::hex, address,
                  " is not the start of a live allocation of this device");
    a = it->second;
    allocated_bytes_ -= a.size;
    allocations_.erase(it);
  }
  vkDestroyBuffer(device_, a.buffer, nullptr);
  vkFreeMemory(device_, a.memory, nullptr);
}

BufferRange VulkanMemory::resolve(uint64_t address, size_t nbytes, std::string_view op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    --it;
    const uint64_t base = it->first;
    if (address >= base && address - base + nbytes <= it->second.size) {
      return BufferRange{it->second.buffer, address - base};
    }
  }
  throw ValueError(detail::concat("vulkan ", op, ": [0x", std::hex, address, ", 0x",
                                  address + nbytes, ") is not inside one live allocation of "
                                  "this device (a host pointer or freed memory?)"));
}

StagingBuffer VulkanMemory::make_staging(size_t nbytes) const {
  return StagingBuffer(device_, staging_memory_type_, std::max<size_t>(nbytes, 4));
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
  info.free = device_heap_size_ > allocated_bytes_ ? device_heap_size_ - allocated_bytes_ : 0;
  return info;
}

}  // namespace tessera::vulkan
