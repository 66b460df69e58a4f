// VkResult handling: every failing Vulkan call becomes a tessera error that
// names the call and the result, so a driver failure reads as
// "vulkan: vkQueueSubmit failed: VK_ERROR_DEVICE_LOST" instead of a crash.
#pragma once

#include <string_view>

#include <vulkan/vulkan.h>

namespace tessera::vulkan {

// "VK_ERROR_DEVICE_LOST", ..., or "VkResult <n>" for codes it does not know.
const char* result_name(VkResult result);

// True for VK_ERROR_OUT_OF_DEVICE_MEMORY and VK_ERROR_OUT_OF_HOST_MEMORY.
bool is_out_of_memory(VkResult result);

// Throws DeviceError naming `call` unless result is VK_SUCCESS (or another
// non-error status such as VK_TIMEOUT, which callers handle themselves).
void check_vk(VkResult result, std::string_view call);

}  // namespace tessera::vulkan
