// One Vulkan logical device: its queue, memory, pipelines and streams.
// Created by VulkanInstance for each usable physical device and never
// destroyed (see vulkan_instance.h for why).
#pragma once

#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <vulkan/vulkan.h>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/validation_log.h"
#include "devices/vulkan/vulkan_device.h"
#include "devices/vulkan/vulkan_memory.h"
#include "devices/vulkan/vulkan_stream.h"
#include "runtime/device/device_properties.h"

namespace tessera::vulkan {

// What a physical device offers, found before creating the logical device.
struct PhysicalDeviceChoice {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  uint32_t physical_index = 0;
  uint32_t queue_family = 0;
  bool shader_f16 = false;
  bool shader_int8 = false;
  bool shader_int16 = false;
  bool shader_int64 = false;
  bool shader_f64 = false;     // shaderFloat64
  bool memory_budget = false;  // VK_EXT_memory_budget
  // The f16 cooperative-matrix shape (f32 sums, VK_NV_cooperative_matrix)
  // the GEMM uses on tensor cores; 0 x 0 x 0: none.
  uint32_t coopmat_m = 0, coopmat_n = 0, coopmat_k = 0;
};

class VulkanContext {
 public:
  // Throws DeviceError when the logical device cannot be created.
  VulkanContext(const PhysicalDeviceChoice& choice, ValidationLog* validation);
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return choice_.queue_family; }
  const DeviceProperties& properties() const { return properties_; }
  const VulkanDeviceInfo& info() const { return info_; }
  // 8-, 16- and 64-bit types in shaders (the fill and copy shaders use
  // them; without them those kernels stage through the host).
  bool has_sized_shader_types() const;
  // f64 arithmetic in shaders (the *_f64 shaders), with the sized types
  // those shaders also use; without it f64 stages through the host.
  bool has_f64_shaders() const { return info_.shader_f64 && has_sized_shader_types(); }
  bool has_timestamps() const { return timestamp_valid_bits_ > 0; }
  uint32_t timestamp_valid_bits() const { return timestamp_valid_bits_; }
  double timestamp_period_ns() const { return timestamp_period_ns_; }
  uint32_t max_workgroups_x() const { return max_workgroups_x_; }

  VulkanMemory& memory() { return *memory_; }
  ComputePipelines& pipelines() { return *pipelines_; }

  // vkQueueSubmit under the queue's lock (a VkQueue is externally
  // synchronized and every stream shares the one compute queue).
  void submit(const VkSubmitInfo& submit);
  // Waits until point's semaphore reaches its value: in 1 s slices up to a
  // limit (60 s), then DeviceError naming `what`. Also raises recorded
  // validation errors.
  void wait(TimelinePoint point, std::string_view what);
  // Raises recorded validation errors as DeviceError.
  void check_validation(std::string_view where);

  VulkanStream* default_stream() { return default_stream_; }
  VulkanStream* create_stream();
  void destroy_stream(VulkanStream* stream);
  // ValueError unless stream is a live stream of this device.
  VulkanStream& stream(void* native, std::string_view op);
  // Synchronizes every stream of the device.
  void synchronize_all(std::string_view what);

  // An event's timeline semaphore and timestamp pool (null without
  // timestamps), and the value the semaphore has reached. Events take
  // them from a pool and give them back: never destroyed while the device
  // lives, because a driver may still touch a semaphore just after a host
  // wait has seen its value (lavapipe's queue thread does, and destroying
  // it there crashed the soak test).
  struct EventObjects {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VkQueryPool timestamps = VK_NULL_HANDLE;
    uint64_t value = 0;
  };
  EventObjects acquire_event_objects();
  // objects.value: the last value signaled, which every batch that
  // signals or waits on the semaphore has passed.
  void release_event_objects(const EventObjects& objects);

 private:
  PhysicalDeviceChoice choice_;
  ValidationLog* validation_;  // null when validation is off
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  std::mutex event_pool_mutex_;
  std::vector<EventObjects> event_pool_;
  DeviceProperties properties_;
  VulkanDeviceInfo info_;
  uint32_t timestamp_valid_bits_ = 0;
  double timestamp_period_ns_ = 1.0;
  uint32_t max_workgroups_x_ = 65535;
  std::unique_ptr<VulkanMemory> memory_;
  std::unique_ptr<ComputePipelines> pipelines_;

  std::mutex streams_mutex_;
  std::vector<std::unique_ptr<VulkanStream>> streams_;  // [0] is the default
  VulkanStream* default_stream_ = nullptr;
};

}  // namespace tessera::vulkan
