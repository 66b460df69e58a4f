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

}  // namespace tessera::vulkan
