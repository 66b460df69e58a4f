// The process's Vulkan instance and the devices the backend uses. Created
// on first use (not at static initialization, so programs that never touch
// a Vulkan tensor pay nothing) and never destroyed: the runtime's caching
// allocator and other static objects may free device memory during exit,
// after any destructor here would have run, and the OS reclaims the rest.
#pragma once

#include <memory>
#include <vector>

#include <vulkan/vulkan.h>

#include "devices/vulkan/validation_log.h"
#include "devices/vulkan/vulkan_context.h"

namespace tessera::vulkan {

class VulkanInstance {
 public:
  // Never throws: a machine without a working Vulkan driver gets an
  // instance with no devices.
  static VulkanInstance& get();

  int device_count() const { return static_cast<int>(contexts_.size()); }
  // ValueError when index is out of range; `op` names the caller.
  VulkanContext& context(int index, const char* op);

 private:
  VulkanInstance();
  void create_instance();
  void create_contexts();

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::unique_ptr<ValidationLog> validation_;  // set when validation is on
  std::vector<std::unique_ptr<VulkanContext>> contexts_;
};

}  // namespace tessera::vulkan
