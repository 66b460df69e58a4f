// Registration of the Vulkan kernels, one function per kernel (each in its
// own .cc file), called from VulkanDevice::register_kernels. Ops not
// registered here run through the runtime's CPU fallback.
#pragma once

#include "runtime/core/device.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::vulkan {

void register_fill_kernel(KernelRegistry& registry, DeviceType type);    // fill
void register_copy_kernel(KernelRegistry& registry, DeviceType type);    // copy
void register_binary_kernel(KernelRegistry& registry, DeviceType type);  // binary
void register_unary_kernel(KernelRegistry& registry, DeviceType type);   // unary
// pointwise_binary (natively: f32 comparisons, maximum/minimum, activation
// gradients)
void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type);
void register_ternary_kernel(KernelRegistry& registry, DeviceType type);  // ternary
// reduce, reduce_ext, arg_reduce, var_std
void register_reduce_kernels(KernelRegistry& registry, DeviceType type);

inline void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_fill_kernel(registry, type);
  register_copy_kernel(registry, type);
  register_binary_kernel(registry, type);
  register_unary_kernel(registry, type);
  register_pointwise_binary_kernel(registry, type);
  register_ternary_kernel(registry, type);
  register_reduce_kernels(registry, type);
}

}  // namespace tessera::vulkan
