#include "devices/vulkan/vulkan_context.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {
namespace {

// A wait longer than this is a hang (a lost device, a deadlock between
// streams), not slow work: report it instead of blocking forever.
constexpr auto kWaitLimit = std::chrono::seconds(60);
constexpr uint64_t kWaitSliceNs = 1'000'000'000;

std::string vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "Arm";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa";
    default: {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "0x%04X", vendor_id);
      return std::string("vendor ") + hex;
    }
  }
}

}  // namespace

VulkanContext::VulkanContext(const PhysicalDeviceChoice& choice, ValidationLog* validation)
    : choice_(choice), validation_(validation) {
  // Features: the two the backend needs, plus the sized shader types where
  // the device has them.
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features12.timelineSemaphore = VK_TRUE;
  features12.bufferDeviceAddress = VK_TRUE;
  features12.shaderFloat16 = choice.shader_f16;
  features12.shaderInt8 = choice.shader_int8;
  features12.storageBuffer8BitAccess = choice.shader_int8;
  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  features11.pNext = &features12;
  features11.storageBuffer16BitAccess = choice.shader_f16 && choice.shader_int16;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &features11;
  features.features.shaderInt16 = choice.shader_int16;
  features.features.shaderInt64 = choice.shader_int64;
  features.features.shaderFloat64 = choice.shader_f64;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = choice.queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  std::vector<const char*> extensions;
  if (choice.memory_budget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (choice.coopmat_m != 0) {
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coopmat.cooperativeMatrix = VK_TRUE;
    features12.vulkanMemoryModel = VK_TRUE;  // SPV_NV_cooperative_matrix requires it
    features12.pNext = &coopmat;
  }
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  check_vk(vkCreateDevice(choice.physical, &device_info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, choice.queue_family, 0, &queue_);

  // Properties.
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(choice.physical, &props);
  const VkPhysicalDeviceLimits& limits = props.properties.limits;

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(choice.physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(choice.physical, &family_count, families.data());
  timestamp_valid_bits_ = families[choice.queue_family].timestampValidBits;
  timestamp_period_ns_ = limits.timestampPeriod;
  max_workgroups_x_ = std::min<uint32_t>(limits.maxComputeWorkGroupCount[0], 65535);
  // 256 invocations suit most GPUs; fewer where the device allows fewer.
  const uint32_t workgroup_size =
      std::min<uint32_t>({256, limits.maxComputeWorkGroupSize[0],
                          limits.maxComputeWorkGroupInvocations});

  try {
    memory_ = std::make_unique<VulkanMemory>(choice.physical, device_, choice.memory_budget);
    pipelines_ = std::make_unique<ComputePipelines>(device_, props.properties, workgroup_size);
    streams_.push_back(std::make_unique<VulkanStream>(*this));
  } catch (...) {
    streams_.clear();
    pipelines_.reset();
    memory_.reset();
    vkDestroyDevice(device_, nullptr);
    throw;
  }
  default_stream_ = streams_.front().get();

  properties_.name = props.properties.deviceName;
  properties_.vendor = vendor_name(props.properties.vendorID);
  properties_.total_memory = memory_->device_heap_size();
  // Vulkan has no portable count of compute units; 0 means "unknown".
  properties_.compute_units = 0;
  properties_.host_accessible = false;
  properties_.software = props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  // Every dtype works on the device (natively or staged through the host).
  properties_.supports_f16 = true;
  properties_.supports_f64 = true;
  properties_.supports_i64 = true;
  properties_.native_index = static_cast<int>(choice.physical_index);

  info_.driver = driver.driverName;
  info_.api_version = props.properties.apiVersion;
  info_.physical_index = choice.physical_index;
  info_.subgroup_size = subgroup.subgroupSize;
  // Reductions use subgroupAdd/Max/... and subgroupShuffle in compute
  // shaders only where the device offers them there.
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT |
                                        VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                        VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  info_.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                              (subgroup.supportedOperations & needed) == needed;
  info_.shader_f16 = choice.shader_f16 && choice.shader_int16;
  info_.shader_int8 = choice.shader_int8;
  info_.shader_int64 = choice.shader_int64;
  info_.shader_f64 = choice.shader_f64;
  info_.coopmat_m = choice.coopmat_m;
  info_.coopmat_n = choice.coopmat_n;
  info_.coopmat_k = choice.coopmat_k;
  info_.validation = validation_ != nullptr;
}

VulkanContext::~VulkanContext() {
  try {
    synchronize_all("the device being closed");
  } catch (...) {
    // Closing anyway: the device is going away with the process.
  }
  streams_.clear();
  for (const EventObjects& e : event_pool_) {
    if (e.timestamps != VK_NULL_HANDLE) vkDestroyQueryPool(device_, e.timestamps, nullptr);
    vkDestroySemaphore(device_, e.semaphore, nullptr);
  }
  event_pool_.clear();
  pipelines_.reset();
  memory_.reset();
  vkDestroyDevice(device_, nullptr);
}

bool VulkanContext::has_sized_shader_types() const {
  return info_.shader_f16 && info_.shader_int8 && info_.shader_int64;
}

VulkanContext::EventObjects VulkanContext::acquire_event_objects() {
  {
    std::lock_guard<std::mutex> lock(event_pool_mutex_);
    if (!event_pool_.empty()) {
      EventObjects e = event_pool_.back();
      event_pool_.pop_back();
      return e;
    }
  }
  EventObjects e;
  VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sem_info.pNext = &type_info;
  check_vk(vkCreateSemaphore(device_, &sem_info, nullptr, &e.semaphore),
           "vkCreateSemaphore (event)");
  if (has_timestamps()) {
    VkQueryPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    pool_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    pool_info.queryCount = 1;
    VkResult r = vkCreateQueryPool(device_, &pool_info, nullptr, &e.timestamps);
    if (r != VK_SUCCESS) {
      vkDestroySemaphore(device_, e.semaphore, nullptr);
      check_vk(r, "vkCreateQueryPool (event timestamps)");
    }
  }
  return e;
}

void VulkanContext::release_event_objects(const EventObjects& objects) {
  std::lock_guard<std::mutex> lock(event_pool_mutex_);
  event_pool_.push_back(objects);
}

void VulkanContext::submit(const VkSubmitInfo& submit) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  check_vk(vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
}

void VulkanContext::wait(TimelinePoint point, std::string_view what) {
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &point.semaphore;
  info.pValues = &point.value;
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (true) {
    VkResult r = vkWaitSemaphores(device_, &info, kWaitSliceNs);
    if (r == VK_SUCCESS) break;
    if (r != VK_TIMEOUT) check_vk(r, detail::concat("vkWaitSemaphores (waiting for ", what, ")"));
    if (std::chrono::steady_clock::now() >= deadline) {
      uint64_t reached = 0;
      vkGetSemaphoreCounterValue(device_, point.semaphore, &reached);
      throw DeviceError(detail::concat(
          "vulkan: timed out after ", kWaitLimit.count(), " s waiting for ", what, " on ",
          properties_.name, " (timeline value ", point.value, ", reached ", reached,
          "): a hung or lost device, or a stream waiting on an event never signaled"));
    }
  }
  check_validation(what);
}

void VulkanContext::check_validation(std::string_view where) {
  if (validation_ != nullptr) validation_->throw_if_errors(where);
}

VulkanStream* VulkanContext::create_stream() {
  auto stream = std::make_unique<VulkanStream>(*this);
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.push_back(std::move(stream));
  return streams_.back().get();
}

void VulkanContext::destroy_stream(VulkanStream* stream) {
  TESSERA_CHECK(stream != default_stream_, ValueError,
                "vulkan destroy_stream: the default stream cannot be destroyed");
  std::unique_ptr<VulkanStream> doomed;
  {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    auto it = std::find_if(streams_.begin(), streams_.end(),
                           [&](const auto& s) { return s.get() == stream; });
    TESSERA_CHECK(it != streams_.end(), ValueError,
                  "vulkan destroy_stream: not a live stream of this device");
    doomed = std::move(*it);
    streams_.erase(it);
  }
  doomed->synchronize("a stream being destroyed");
}

VulkanStream& VulkanContext::stream(void* native, std::string_view op) {
  TESSERA_CHECK(native != nullptr, ValueError, "vulkan ", op, ": null stream");
  std::lock_guard<std::mutex> lock(streams_mutex_);
  for (const auto& s : streams_) {
    if (s.get() == native) return *s;
  }
  throw ValueError(detail::concat("vulkan ", op, ": not a live stream of ", properties_.name));
}

void VulkanContext::synchronize_all(std::string_view what) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  for (const auto& s : streams_) s->synchronize(what);
  check_validation(what);
}

}  // namespace tessera::vulkan
