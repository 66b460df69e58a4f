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
// uniform, normal, randint, bernoulli (Philox in shaders/philox.glsl)
void register_random_kernels(KernelRegistry& registry, DeviceType type);
void register_creation_kernels(KernelRegistry& registry, DeviceType type);  // arange, linspace
void register_scan_kernel(KernelRegistry& registry, DeviceType type);       // scan
void register_sort_kernel(KernelRegistry& registry, DeviceType type);       // sort
void register_nonzero_kernel(KernelRegistry& registry, DeviceType type);    // nonzero

inline void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_fill_kernel(registry, type);
  register_copy_kernel(registry, type);
  register_binary_kernel(registry, type);
  register_unary_kernel(registry, type);
  register_pointwise_binary_kernel(registry, type);
  register_ternary_kernel(registry, type);
  register_random_kernels(registry, type);
  register_creation_kernels(registry, type);
  register_scan_kernel(registry, type);
  register_sort_kernel(registry, type);
  register_nonzero_kernel(registry, type);
}

}  // namespace tessera::vulkan
