#include "devices/vulkan/kernels/launch.h"

#include <algorithm>

#include "devices/vulkan/vulkan_instance.h"
#include "devices/vulkan/vulkan_stream.h"
#include "runtime/core/error.h"

namespace tessera::vulkan {

VulkanContext& vulkan_context_of(const KernelContext& ctx) {
  return VulkanInstance::get().context(ctx.device.index, "kernel launch");
}

void launch_shader(const KernelContext& ctx, std::string_view shader,
                   std::initializer_list<uint32_t> constants, const void* params,
                   uint32_t params_size, int64_t numel) {
  if (numel <= 0) return;
  VulkanContext& context = vulkan_context_of(ctx);
  VulkanStream& stream = context.stream(ctx.stream, "kernel launch");
  ComputePipelines& pipelines = context.pipelines();
  VkPipeline pipeline = pipelines.get(shader, constants);
  const int64_t group_size = pipelines.workgroup_size();
  const uint32_t groups = static_cast<uint32_t>(
      std::min<int64_t>((numel + group_size - 1) / group_size, context.max_workgroups_x()));
  VkPipelineLayout layout = pipelines.layout();
  stream.record(
      [&](VkCommandBuffer cb) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, params_size, params);
        vkCmdDispatch(cb, groups, 1, 1);
      },
      /*is_dispatch=*/true);
}

void launch_shader_groups(const KernelContext& ctx, std::string_view shader,
                          std::initializer_list<uint32_t> constants, const void* params,
                          uint32_t params_size, uint32_t groups_x, uint32_t groups_y,
                          uint32_t groups_z) {
  for (uint32_t g : {groups_x, groups_y, groups_z}) {
    TESSERA_CHECK(g >= 1 && g <= kMaxWorkGroupsPerDim, DeviceError, "vulkan: shader '", shader,
                  "' launched with work groups (", groups_x, ", ", groups_y, ", ", groups_z,
                  "); each count must be in [1, ", kMaxWorkGroupsPerDim, "]");
  }
  VulkanContext& context = vulkan_context_of(ctx);
  VulkanStream& stream = context.stream(ctx.stream, "kernel launch");
  ComputePipelines& pipelines = context.pipelines();
  VkPipeline pipeline = pipelines.get(shader, constants);
  VkPipelineLayout layout = pipelines.layout();
  stream.record(
      [&](VkCommandBuffer cb) {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, params_size, params);
        vkCmdDispatch(cb, groups_x, groups_y, groups_z);
      },
      /*is_dispatch=*/true);
}

void copy_buffer(const KernelContext& ctx, void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  VulkanContext& context = vulkan_context_of(ctx);
  VulkanStream& stream = context.stream(ctx.stream, "copy");
  BufferRange from =
      context.memory().resolve(reinterpret_cast<uint64_t>(src), nbytes, "copy (source)");
  BufferRange to =
      context.memory().resolve(reinterpret_cast<uint64_t>(dst), nbytes, "copy (destination)");
  stream.record(
      [&](VkCommandBuffer cb) {
        VkBufferCopy region{from.offset, to.offset, nbytes};
        vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
      },
      /*is_dispatch=*/true);
}

bool fill_is_aligned(const KernelContext& ctx, void* dst, size_t nbytes) {
  if (nbytes % 4 != 0) return false;
  BufferRange to = vulkan_context_of(ctx).memory().resolve(reinterpret_cast<uint64_t>(dst),
                                                           nbytes, "fill");
  return to.offset % 4 == 0;
}

void fill_buffer(const KernelContext& ctx, void* dst, size_t nbytes, uint32_t pattern) {
  if (nbytes == 0) return;
  VulkanContext& context = vulkan_context_of(ctx);
  VulkanStream& stream = context.stream(ctx.stream, "fill");
  BufferRange to = context.memory().resolve(reinterpret_cast<uint64_t>(dst), nbytes, "fill");
  stream.record(
      [&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, to.buffer, to.offset, nbytes, pattern); },
      /*is_dispatch=*/true);
}

}  // namespace tessera::vulkan
