#include "devices/vulkan/compute_pipelines.h"

#include <cstdlib>
#include <vector>

#include "devices/vulkan/spirv_registry.h"
#include "devices/vulkan/vulkan_check.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {
namespace {

// New pipelines reach the disk at most this often while running; the
// rest at exit.
constexpr auto kSaveInterval = std::chrono::seconds(2);

// Every device's pipelines, saved at exit. Contexts are never destroyed
// (see VulkanInstance), so the pointers stay valid.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<ComputePipelines*>& registry() {
  static std::vector<ComputePipelines*> r;
  return r;
}
void save_all_at_exit() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (ComputePipelines* p : registry()) p->save();
}

}  // namespace

ComputePipelines::ComputePipelines(VkDevice device, const VkPhysicalDeviceProperties& properties,
                                   uint32_t workgroup_size)
    : device_(device),
      workgroup_size_(workgroup_size),
      file_(std::make_unique<PipelineCacheFile>(properties)),
      last_save_(std::chrono::steady_clock::now()) {
  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = kPushConstantBytes;
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &range;
  check_vk(vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_),
           "vkCreatePipelineLayout");
  const std::vector<char> initial = file_->load();
  VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cache_info.initialDataSize = initial.size();
  cache_info.pInitialData = initial.empty() ? nullptr : initial.data();
  if (vkCreatePipelineCache(device_, &cache_info, nullptr, &cache_) != VK_SUCCESS) {
    // Data the driver rejects despite a matching header: start empty.
    cache_info.initialDataSize = 0;
    cache_info.pInitialData = nullptr;
    check_vk(vkCreatePipelineCache(device_, &cache_info, nullptr, &cache_),
             "vkCreatePipelineCache");
  }
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (registry().empty()) std::atexit(save_all_at_exit);
  registry().push_back(this);
}

ComputePipelines::~ComputePipelines() {
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::erase(registry(), this);
  }
  save();
  for (auto& [name, pipeline] : pipelines_) vkDestroyPipeline(device_, pipeline, nullptr);
  vkDestroyPipelineCache(device_, cache_, nullptr);
  vkDestroyPipelineLayout(device_, layout_, nullptr);
}

VkPipeline ComputePipelines::get(std::string_view shader,
                                 std::initializer_list<uint32_t> constants) {
  std::string key(shader);
  for (uint32_t c : constants) key += "/" + std::to_string(c);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;

  std::span<const uint32_t> spirv = find_spirv(shader);
  TESSERA_CHECK(!spirv.empty(), DeviceError, "vulkan: no shader named '", shader,
                "' is embedded in the library");
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spirv.size_bytes();
  module_info.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check_vk(vkCreateShaderModule(device_, &module_info, nullptr, &module), "vkCreateShaderModule");

  std::vector<uint32_t> values{workgroup_size_};
  values.insert(values.end(), constants.begin(), constants.end());
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < values.size(); ++i) {
    entries.push_back(VkSpecializationMapEntry{i, i * 4u, sizeof(uint32_t)});
  }
  VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(),
                                      values.size() * sizeof(uint32_t), values.data()};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &specialization;
  info.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult r = vkCreateComputePipelines(device_, cache_, 1, &info, nullptr, &pipeline);
  // The pipeline keeps what it needs; the module can go either way.
  vkDestroyShaderModule(device_, module, nullptr);
  check_vk(r, "vkCreateComputePipelines (shader " + std::string(shader) + ")");
  pipelines_.emplace(std::move(key), pipeline);
  unsaved_ = true;
  if (std::chrono::steady_clock::now() - last_save_ >= kSaveInterval) save_locked();
  return pipeline;
}

size_t ComputePipelines::save(bool force) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!unsaved_ && !force) return 0;
  return save_locked();
}

size_t ComputePipelines::save_locked() {
  last_save_ = std::chrono::steady_clock::now();
  unsaved_ = false;
  size_t size = 0;
  if (file_->path().empty() ||
      vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) {
    return 0;
  }
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device_, cache_, &size, data.data()) != VK_SUCCESS) return 0;
  data.resize(size);
  return file_->save(data) ? size : 0;
}

}  // namespace tessera::vulkan
