// Dispatching a compute shader on the kernel's stream: bind its pipeline,
// push its parameters, and dispatch enough work groups for numel elements
// (each invocation strides through the rest, so a dispatch never exceeds
// the device's work-group count limit).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/vulkan_context.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::vulkan {

// The device of a kernel's context.
VulkanContext& vulkan_context_of(const KernelContext& ctx);

// `constants` are the shader's specialization constants 1, 2, ...
void launch_shader(const KernelContext& ctx, std::string_view shader,
                   std::initializer_list<uint32_t> constants, const void* params,
                   uint32_t params_size, int64_t numel);

// Dispatches exactly groups_x * groups_y * groups_z work groups, for
// shaders that map work groups to rows, tiles or outputs themselves (a
// reduction's rows, a GEMM's tiles). Each count must be at least 1 and at
// most 65535 (the smallest maxComputeWorkGroupCount Vulkan guarantees); a
// larger grid is a DeviceError naming the shader, so kernels loop over
// the excess or split the dispatch.
void launch_shader_groups(const KernelContext& ctx, std::string_view shader,
                          std::initializer_list<uint32_t> constants, const void* params,
                          uint32_t params_size, uint32_t groups_x, uint32_t groups_y = 1,
                          uint32_t groups_z = 1);

// The largest work-group count a launch_shader_groups dimension takes.
inline constexpr uint32_t kMaxWorkGroupsPerDim = 65535;

// Transfer commands for contiguous data, which drivers run as memcpy and
// memset (much faster than a shader on CPU drivers): dst = src for nbytes,
// and nbytes at dst = a 4-byte pattern (nbytes and dst's offset in its
// buffer multiples of 4, which the caller checks with fill_is_aligned).
void copy_buffer(const KernelContext& ctx, void* dst, const void* src, size_t nbytes);
bool fill_is_aligned(const KernelContext& ctx, void* dst, size_t nbytes);
void fill_buffer(const KernelContext& ctx, void* dst, size_t nbytes, uint32_t pattern);

template <typename Params>
void launch(const KernelContext& ctx, std::string_view shader,
            std::initializer_list<uint32_t> constants, const Params& params, int64_t numel) {
  static_assert(std::is_trivially_copyable_v<Params>);
  static_assert(sizeof(Params) <= kPushConstantBytes,
                "push constants are limited to 128 bytes (lavapipe's maxPushConstantsSize)");
  launch_shader(ctx, shader, constants, &params, sizeof(Params), numel);
}

template <typename Params>
void launch_groups(const KernelContext& ctx, std::string_view shader,
                   std::initializer_list<uint32_t> constants, const Params& params,
                   uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1) {
  static_assert(std::is_trivially_copyable_v<Params>);
  static_assert(sizeof(Params) <= kPushConstantBytes,
                "push constants are limited to 128 bytes (lavapipe's maxPushConstantsSize)");
  launch_shader_groups(ctx, shader, constants, &params, sizeof(Params), groups_x, groups_y,
                       groups_z);
}

}  // namespace tessera::vulkan
