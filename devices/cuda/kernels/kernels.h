// Registration of the CUDA kernels, one function per family (each in its
// own .cu file), called from CudaDevice::register_kernels. Every kernel of
// the op set is native: none runs through the runtime's CPU fallback, and
// neither do the special functions (an optional kernel).
#pragma once

#include "runtime/core/device.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::cuda {

// Elementwise (elementwise.cuh).
void register_copy_kernels(KernelRegistry& registry, DeviceType type);      // copy, fill
void register_binary_kernel(KernelRegistry& registry, DeviceType type);     // binary
void register_unary_kernel(KernelRegistry& registry, DeviceType type);      // unary
void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type);
void register_ternary_kernel(KernelRegistry& registry, DeviceType type);    // ternary
// Reductions (reduce_engine.cuh).
void register_reduce_kernels(KernelRegistry& registry, DeviceType type);    // reduce, index_bounds
void register_reduce_ext_kernel(KernelRegistry& registry, DeviceType type); // reduce_ext
void register_arg_reduce_kernels(KernelRegistry& registry, DeviceType type);  // arg_reduce, var_std
void register_scan_kernel(KernelRegistry& registry, DeviceType type);       // scan
// Rows: softmax, layer and rms norm, batch norm, forward and backward.
void register_softmax_kernels(KernelRegistry& registry, DeviceType type);
void register_layer_norm_kernels(KernelRegistry& registry, DeviceType type);
void register_batch_norm_kernels(KernelRegistry& registry, DeviceType type);
// Linear algebra and convolution.
void register_bmm_kernel(KernelRegistry& registry, DeviceType type);        // bmm
void register_conv2d_kernels(KernelRegistry& registry, DeviceType type);    // conv2d(_backward)
void register_pool2d_kernels(KernelRegistry& registry, DeviceType type);    // max/avg pool2d(_backward)
// Indexing, sorting and losses.
void register_gather_kernel(KernelRegistry& registry, DeviceType type);
void register_scatter_kernels(KernelRegistry& registry, DeviceType type);   // scatter, index_put
void register_masked_fill_kernel(KernelRegistry& registry, DeviceType type);
void register_triangle_kernel(KernelRegistry& registry, DeviceType type);
void register_nonzero_kernel(KernelRegistry& registry, DeviceType type);
void register_sort_kernel(KernelRegistry& registry, DeviceType type);
void register_embedding_kernels(KernelRegistry& registry, DeviceType type);  // embedding(_dense_backward)
void register_nll_loss_kernels(KernelRegistry& registry, DeviceType type);   // nll_loss(_backward)
// Creation and random (Philox, bit-identical to the CPU device).
void register_creation_kernels(KernelRegistry& registry, DeviceType type);  // arange, linspace
void register_random_kernels(KernelRegistry& registry, DeviceType type);    // uniform, normal, randint, bernoulli
// Fused optimizer steps (adam_step, sgd_step, adagrad_step).
void register_optimizer_kernels(KernelRegistry& registry, DeviceType type);
// Special functions (special_function), on devices/common/special_math.
void register_special_function_kernel(KernelRegistry& registry, DeviceType type);

inline void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_copy_kernels(registry, type);
  register_binary_kernel(registry, type);
  register_unary_kernel(registry, type);
  register_pointwise_binary_kernel(registry, type);
  register_ternary_kernel(registry, type);
  register_reduce_kernels(registry, type);
  register_reduce_ext_kernel(registry, type);
  register_arg_reduce_kernels(registry, type);
  register_scan_kernel(registry, type);
  register_softmax_kernels(registry, type);
  register_layer_norm_kernels(registry, type);
  register_batch_norm_kernels(registry, type);
  register_bmm_kernel(registry, type);
  register_conv2d_kernels(registry, type);
  register_pool2d_kernels(registry, type);
  register_gather_kernel(registry, type);
  register_scatter_kernels(registry, type);
  register_masked_fill_kernel(registry, type);
  register_triangle_kernel(registry, type);
  register_nonzero_kernel(registry, type);
  register_sort_kernel(registry, type);
  register_embedding_kernels(registry, type);
  register_nll_loss_kernels(registry, type);
  register_creation_kernels(registry, type);
  register_random_kernels(registry, type);
  register_optimizer_kernels(registry, type);
  register_special_function_kernel(registry, type);
}

}  // namespace tessera::cuda
