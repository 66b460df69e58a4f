// The compute pipelines of one Vulkan device, created on first use from
// the embedded SPIR-V (spirv_registry.h) and kept for the device's life.
// Every shader takes its arguments as push constants (addresses, sizes,
// strides; at most 128 bytes, lavapipe's limit) and has no descriptor
// sets, so one pipeline layout serves them all. The work-group size is a
// specialization constant (constant_id 0), chosen here per device; a
// shader's other specialization constants (constant_id 1, 2, ...: element
// kinds, the operator) make one pipeline per combination, so the driver
// compiles straight-line code instead of branching per element. Compiled
// pipelines persist on disk (pipeline_cache_file.h): the cache is written
// when new pipelines were made, at most every few seconds, and at exit.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <vulkan/vulkan.h>

#include "devices/vulkan/pipeline_cache_file.h"

namespace tessera::vulkan {

// The push-constant bytes every pipeline layout declares; shaders use a
// prefix of them.
inline constexpr uint32_t kPushConstantBytes = 128;

class ComputePipelines {
 public:
  ComputePipelines(VkDevice device, const VkPhysicalDeviceProperties& properties,
                   uint32_t workgroup_size);
  ~ComputePipelines();
  ComputePipelines(const ComputePipelines&) = delete;
  ComputePipelines& operator=(const ComputePipelines&) = delete;

  VkPipelineLayout layout() const { return layout_; }
  uint32_t workgroup_size() const { return workgroup_size_; }

  // The pipeline of shaders/<shader>.comp with `constants` as its
  // specialization constants 1, 2, ...; DeviceError if there is no such
  // shader or the driver cannot build it.
  VkPipeline get(std::string_view shader, std::initializer_list<uint32_t> constants = {});

  // Writes the pipeline cache to disk if pipelines were made since the
  // last write (or always, with force); returns the bytes written.
  size_t save(bool force = false);
  const PipelineCacheFile& cache_file() const { return *file_; }

 private:
  VkDevice device_;
  uint32_t workgroup_size_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  size_t save_locked();

  // Shares compiled state between pipelines and persists it.
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::unique_ptr<PipelineCacheFile> file_;
  std::mutex mutex_;
  std::map<std::string, VkPipeline> pipelines_;  // by shader and constants
  bool unsaved_ = false;
  std::chrono::steady_clock::time_point last_save_;
};

}  // namespace tessera::vulkan
