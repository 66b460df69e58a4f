// The Vulkan device of Tessera: device type "vulkan", one device per
// Vulkan 1.2+ physical device with a compute queue, timeline semaphores and
// buffer device addresses (others are skipped). Linking //devices/vulkan
// registers the type (a static initializer; the target is alwayslink);
// Vulkan itself is initialized on first use, and a machine with no Vulkan
// driver reports 0 devices.
//
// Environment:
//   TESSERA_VULKAN_DEVICES=2,0   the physical devices to use, in this
//                                order, by their index in
//                                vkEnumeratePhysicalDevices (vulkaninfo's
//                                GPU<n>); unset or empty: all of them.
//   TESSERA_VULKAN_VALIDATION=1  enables VK_LAYER_KHRONOS_validation; any
//                                validation error becomes a DeviceError at
//                                the next synchronization.
//   TESSERA_VULKAN_UNIFIED_MEMORY=0
//                                host<->device copies always go through
//                                staging buffers, also on integrated and
//                                CPU devices whose memory the host can map.
//   TESSERA_VULKAN_PIPELINE_CACHE=<dir>
//                                where compiled pipelines are kept between
//                                runs (default $XDG_CACHE_HOME/tessera/vulkan
//                                or ~/.cache/tessera/vulkan); "off" keeps
//                                none.
//   TESSERA_VULKAN_COOPERATIVE_MATRIX=1
//                                f16 GEMMs on tensor cores where the device
//                                has VK_NV_cooperative_matrix; off by
//                                default until a GPU run has passed it.
//
// Design, in short:
//  - memory: a data pointer is a buffer device address (vulkan_memory.h);
//  - streams batch commands into command buffers and order them with a
//    timeline semaphore (vulkan_stream.h); events are timeline semaphores
//    plus timestamp queries (vulkan_event.h);
//  - kernels are GLSL compute shaders compiled at build time
//    (shaders/*.comp, shaders.bzl); ops without one run through the
//    runtime's CPU fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::vulkan {

inline constexpr std::string_view kDeviceTypeName = "vulkan";

// What DeviceProperties does not say about a Vulkan device.
struct VulkanDeviceInfo {
  std::string driver;          // "llvmpipe", ... (VkPhysicalDeviceDriverProperties)
  uint32_t api_version = 0;    // VK_MAKE_API_VERSION form
  uint32_t physical_index = 0; // index in vkEnumeratePhysicalDevices
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;  // basic, arithmetic and shuffle ops in compute shaders
  bool shader_f16 = false;     // f16 arithmetic and 16-bit storage in shaders
  bool shader_int8 = false;    // 8-bit integers and 8-bit storage in shaders
  bool shader_int64 = false;
  // f64 arithmetic in shaders (shaderFloat64, unless TESSERA_VULKAN_SHADER_F64=0);
  // without it f64 ops stage through the host.
  bool shader_f64 = false;
  bool validation = false;     // the validation layer is on
  // The f16 x f16 + f32 cooperative-matrix shape (VK_NV_cooperative_matrix)
  // of the tensor-core GEMM; 0 x 0 x 0 where the device has none or
  // TESSERA_VULKAN_COOPERATIVE_MATRIX is not 1.
  uint32_t coopmat_m = 0, coopmat_n = 0, coopmat_k = 0;
};

// ValueError when the device does not exist.
VulkanDeviceInfo device_info(int index);

// How a device's memory is held from the driver (vulkan_memory.h).
struct VulkanMemoryStats {
  size_t blocks = 0;              // VkDeviceMemory blocks, shared and dedicated
  size_t block_bytes = 0;         // their total size
  size_t allocations = 0;         // live raw allocations inside them
  size_t staging_idle_bytes = 0;  // staging buffers kept for reuse
  bool unified = false;           // copies go through mapped device memory
};

// ValueError when the device does not exist.
VulkanMemoryStats memory_stats(int index);

// The on-disk pipeline cache of a device (TESSERA_VULKAN_PIPELINE_CACHE).
struct VulkanPipelineCacheInfo {
  std::string path;         // empty when disabled
  size_t loaded_bytes = 0;  // read at startup (0: no valid file)
  size_t saved_bytes = 0;   // written by this call (0: nothing written)
};

// Writes the device's pipeline cache now (it is also written while
// running and at exit). ValueError when the device does not exist.
VulkanPipelineCacheInfo save_pipeline_cache(int index);

// Does nothing; see tessera::cpu::link().
void link();

}  // namespace tessera::vulkan
