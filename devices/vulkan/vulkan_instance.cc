#include "devices/vulkan/vulkan_instance.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"
#include "runtime/device/device_selection.h"

namespace tessera::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers) {
    if (std::strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

bool has_instance_extension(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(count);
  if (vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data()) != VK_SUCCESS) {
    return false;
  }
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

bool has_device_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) != VK_SUCCESS) {
    return false;
  }
  std::vector<VkExtensionProperties> exts(count);
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, exts.data()) != VK_SUCCESS) {
    return false;
  }
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    static_cast<ValidationLog*>(user)->record_error(data->pMessage ? data->pMessage : "(empty)");
  }
  return VK_FALSE;  // never abort the call that triggered it
}

// Sets choice's cooperative-matrix shape: the subgroup-scope f16 x f16 +
// f32 one that shaders/gemm_coopmat_f16.comp can tile (M divides 64, N and
// K divide 32), the largest where the driver lists several. Off unless
// TESSERA_VULKAN_COOPERATIVE_MATRIX=1: the shader has not yet been run on
// a GPU (lavapipe has no cooperative matrices).
void choose_cooperative_matrix(VkInstance instance, VkPhysicalDevice physical,
                               PhysicalDeviceChoice& choice) {
  if (!env_switch("TESSERA_VULKAN_COOPERATIVE_MATRIX").value_or(false)) return;
  if (!choice.shader_f16 || !choice.shader_int16 ||
      !has_device_extension(physical, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
    return;
  }
  // SPV_NV_cooperative_matrix requires the Vulkan memory model: the compiled
  // shader declares the VulkanMemoryModel capability, which needs the
  // feature enabled (VulkanContext enables it with the extension).
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  coopmat.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &coopmat;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!coopmat.cooperativeMatrix || !f12.vulkanMemoryModel) return;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);
  auto list_shapes = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (list_shapes == nullptr) return;
  uint32_t count = 0;
  if (list_shapes(physical, &count, nullptr) != VK_SUCCESS) return;
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(
      count, VkCooperativeMatrixPropertiesNV{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (list_shapes(physical, &count, shapes.data()) != VK_SUCCESS) return;
  shapes.resize(count);
  uint64_t best = 0;
  for (const VkCooperativeMatrixPropertiesNV& s : shapes) {
    const bool types = s.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                       s.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                       s.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                       s.DType == VK_COMPONENT_TYPE_FLOAT32_NV && s.scope == VK_SCOPE_SUBGROUP_NV;
    const bool tiles = s.MSize > 0 && s.NSize > 0 && s.KSize > 0 && 64 % s.MSize == 0 &&
                       32 % s.NSize == 0 && 32 % s.KSize == 0;
    // The shader's shared memory: A's and B's 128 x 32 f16 slices, and a
    // scratch of one M x N f32 block per subgroup (8).
    const uint64_t shared_bytes = 2 * 128 * 40 * 2 + 8 * uint64_t{s.MSize} * s.NSize * 4;
    const bool fits = shared_bytes <= props.limits.maxComputeSharedMemorySize;
    const uint64_t work = uint64_t{s.MSize} * s.NSize * s.KSize;
    if (types && tiles && fits && work > best) {
      best = work;
      choice.coopmat_m = s.MSize;
      choice.coopmat_n = s.NSize;
      choice.coopmat_k = s.KSize;
    }
  }
}

// The physical device at `index` if it can run the backend, else nullopt.
std::optional<PhysicalDeviceChoice> examine(VkInstance instance, VkPhysicalDevice physical,
                                            uint32_t index) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) return std::nullopt;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!f12.timelineSemaphore || !f12.bufferDeviceAddress) return std::nullopt;

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
  // Prefer a compute queue without graphics (a dedicated compute engine).
  std::optional<uint32_t> family;
  for (uint32_t i = 0; i < family_count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (!family || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) family = i;
  }
  if (!family) return std::nullopt;

  PhysicalDeviceChoice c;
  c.physical = physical;
  c.physical_index = index;
  c.queue_family = *family;
  c.shader_f16 = f12.shaderFloat16 && f11.storageBuffer16BitAccess;
  c.shader_int8 = f12.shaderInt8 && f12.storageBuffer8BitAccess;
  c.shader_int16 = features.features.shaderInt16;
  c.shader_int64 = features.features.shaderInt64;
  // TESSERA_VULKAN_SHADER_F64=0 keeps f64 on the host even where the
  // device has it (a driver whose f64 is wrong or very slow).
  c.shader_f64 = features.features.shaderFloat64 &&
                 env_switch("TESSERA_VULKAN_SHADER_F64").value_or(true);
  c.memory_budget = has_device_extension(physical, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  choose_cooperative_matrix(instance, physical, c);
  return c;
}

}  // namespace

VulkanInstance& VulkanInstance::get() {
  // Leaked on purpose (see the header).
  static VulkanInstance* instance = new VulkanInstance();
  return *instance;
}

VulkanInstance::VulkanInstance() {
  try {
    create_instance();
    if (instance_ != VK_NULL_HANDLE) create_contexts();
  } catch (const std::exception& e) {
    // No loader, no driver or a broken one: zero devices, with the reason
    // on stderr for whoever expected some.
    std::fprintf(stderr, "tessera: Vulkan unavailable: %s\n", e.what());
    contexts_.clear();
  }
}

void VulkanInstance::create_instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = VK_API_VERSION_1_2;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (env_switch("TESSERA_VULKAN_VALIDATION").value_or(false)) {
    if (has_layer(kValidationLayer) &&
        has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      validation_ = std::make_unique<ValidationLog>();
    } else {
      std::fprintf(stderr, "tessera: TESSERA_VULKAN_VALIDATION=1 but %s (or %s) is not "
                   "installed; running without validation\n", kValidationLayer,
                   VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  messenger_info.pfnUserCallback = on_validation_message;
  messenger_info.pUserData = validation_.get();

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Also catches messages of vkCreateInstance itself.
  if (validation_) info.pNext = &messenger_info;
  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    // VK_ERROR_INCOMPATIBLE_DRIVER is what a machine without a driver
    // returns: the normal "no Vulkan here" case, silent.
    instance_ = VK_NULL_HANDLE;
    if (r != VK_ERROR_INCOMPATIBLE_DRIVER) check_vk(r, "vkCreateInstance");
    return;
  }
  if (validation_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create != nullptr) {
      check_vk(create(instance_, &messenger_info, nullptr, &messenger_),
               "vkCreateDebugUtilsMessengerEXT");
    }
  }
}

void VulkanInstance::create_contexts() {
  uint32_t count = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  check_vk(r, "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> physical(count);
  r = vkEnumeratePhysicalDevices(instance_, &count, physical.data());
  check_vk(r, "vkEnumeratePhysicalDevices");
  physical.resize(count);

  for (int selected : selected_devices("TESSERA_VULKAN_DEVICES", static_cast<int>(count))) {
    const uint32_t index = static_cast<uint32_t>(selected);
    std::optional<PhysicalDeviceChoice> choice = examine(instance_, physical[index], index);
    if (!choice) continue;
    try {
      contexts_.push_back(std::make_unique<VulkanContext>(*choice, validation_.get()));
    } catch (const Error& e) {
      std::fprintf(stderr, "tessera: skipping Vulkan device %u: %s\n", index, e.what());
    }
  }
}

VulkanContext& VulkanInstance::context(int index, const char* op) {
  TESSERA_CHECK(index >= 0 && index < device_count(), ValueError, "vulkan ", op,
                ": device vulkan:", index, " does not exist (", device_count(),
                " vulkan device", device_count() == 1 ? "" : "s", ")");
  return *contexts_[static_cast<size_t>(index)];
}

}  // namespace tessera::vulkan
