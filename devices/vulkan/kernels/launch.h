// Dispatching a compute shader on the kernel's stream: bind its pipeline,
// push its parameters, and dispatch enough work groups for numel elements
// (each invocation strides through the rest, so a dispatch never exceeds
// the device's work-group count limit).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/vulkan_context.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::vulkan {

// The device of a kernel's context.
VulkanContext& vulkan_context_of(const KernelContext& ctx);

void launch_shader(const KernelContext& ctx, std::string_view shader, const void* params,
                   uint32_t params_size, int64_t numel);

template <typename Params>
void launch(const KernelContext& ctx, std::string_view shader, const Params& params,
            int64_t numel) {
  static_assert(std::is_trivially_copyable_v<Params>);
  static_assert(sizeof(Params) <= kPushConstantBytes,
                "push constants are limited to 128 bytes (lavapipe's maxPushConstantsSize)");
  launch_shader(ctx, shader, &params, sizeof(Params), numel);
}

}  // namespace tessera::vulkan
