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
// pointwise_binary (natively every op for f32, f16 and the integer/bool
// dtypes where the CPU kernel defines it)
void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type);
void register_ternary_kernel(KernelRegistry& registry, DeviceType type);  // ternary
// foreach_pointwise: f32, f16 and bf16 lists as one dispatch (foreach.cc)
void register_foreach_kernel(KernelRegistry& registry, DeviceType type);
// foreach_norm: f32, f16 and bf16 lists in two dispatches (foreach_norm.cc)
void register_foreach_norm_kernel(KernelRegistry& registry, DeviceType type);
// attention_forward, attention_backward (fused, f32; attention.cc)
void register_attention_kernels(KernelRegistry& registry, DeviceType type);
// softmax, softmax_backward
void register_softmax_kernels(KernelRegistry& registry, DeviceType type);
// layer_norm, layer_norm_backward (layer and rms norm)
void register_layer_norm_kernels(KernelRegistry& registry, DeviceType type);
// batch_norm, batch_norm_backward
void register_batch_norm_kernels(KernelRegistry& registry, DeviceType type);
// Indexing: index_bounds, gather, scatter, index_put, masked_fill, triangle.
void register_index_bounds_kernel(KernelRegistry& registry, DeviceType type);
void register_gather_kernel(KernelRegistry& registry, DeviceType type);
void register_scatter_kernel(KernelRegistry& registry, DeviceType type);
void register_index_put_kernel(KernelRegistry& registry, DeviceType type);
void register_masked_fill_kernel(KernelRegistry& registry, DeviceType type);
void register_triangle_kernel(KernelRegistry& registry, DeviceType type);
// embedding, embedding_dense_backward; nll_loss, nll_loss_backward.
void register_embedding_kernels(KernelRegistry& registry, DeviceType type);
void register_nll_loss_kernels(KernelRegistry& registry, DeviceType type);
void register_bmm_kernel(KernelRegistry& registry, DeviceType type);      // bmm (f32, f16)
// conv2d and conv2d_backward (f32)
void register_conv2d_kernels(KernelRegistry& registry, DeviceType type);
// max_pool2d_with_indices, avg_pool2d and their backward (f32)
void register_pool2d_kernels(KernelRegistry& registry, DeviceType type);
// reduce, reduce_ext, arg_reduce, var_std
void register_reduce_kernels(KernelRegistry& registry, DeviceType type);
// uniform, normal, randint, bernoulli (Philox in shaders/philox.glsl)
void register_random_kernels(KernelRegistry& registry, DeviceType type);
void register_creation_kernels(KernelRegistry& registry, DeviceType type);  // arange, linspace
void register_scan_kernel(KernelRegistry& registry, DeviceType type);       // scan
void register_sort_kernel(KernelRegistry& registry, DeviceType type);       // sort
void register_nonzero_kernel(KernelRegistry& registry, DeviceType type);    // nonzero
// adam_step, sgd_step, adagrad_step (the fused optimizer steps)
void register_optimizer_kernels(KernelRegistry& registry, DeviceType type);

inline void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_fill_kernel(registry, type);
  register_copy_kernel(registry, type);
  register_binary_kernel(registry, type);
  register_unary_kernel(registry, type);
  register_pointwise_binary_kernel(registry, type);
  register_ternary_kernel(registry, type);
  register_foreach_kernel(registry, type);
  register_foreach_norm_kernel(registry, type);
  register_softmax_kernels(registry, type);
  register_attention_kernels(registry, type);
  register_layer_norm_kernels(registry, type);
  register_batch_norm_kernels(registry, type);
  register_index_bounds_kernel(registry, type);
  register_gather_kernel(registry, type);
  register_scatter_kernel(registry, type);
  register_index_put_kernel(registry, type);
  register_masked_fill_kernel(registry, type);
  register_triangle_kernel(registry, type);
  register_embedding_kernels(registry, type);
  register_nll_loss_kernels(registry, type);
  register_bmm_kernel(registry, type);
  register_conv2d_kernels(registry, type);
  register_pool2d_kernels(registry, type);
  register_reduce_kernels(registry, type);
  register_random_kernels(registry, type);
  register_creation_kernels(registry, type);
  register_scan_kernel(registry, type);
  register_sort_kernel(registry, type);
  register_nonzero_kernel(registry, type);
  register_optimizer_kernels(registry, type);
}

}  // namespace tessera::vulkan
