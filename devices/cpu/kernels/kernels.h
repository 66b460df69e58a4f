// Registration of the CPU kernels, one function per kernel family (each in
// its own .cc file), called from CpuDevice::register_kernels.
#pragma once

#include "runtime/core/device.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::cpu {

void register_fill_kernels(KernelRegistry& registry, DeviceType type);    // fill, arange
void register_copy_kernels(KernelRegistry& registry, DeviceType type);    // copy
void register_binary_kernels(KernelRegistry& registry, DeviceType type);  // binary
void register_reduce_kernels(KernelRegistry& registry, DeviceType type);  // reduce
void register_bmm_kernels(KernelRegistry& registry, DeviceType type);     // bmm
void register_random_kernels(KernelRegistry& registry, DeviceType type);  // uniform, normal

// The rest of the op set, one family each (register_<family>.cc).
void register_pointwise_kernels(KernelRegistry& registry, DeviceType type);
void register_reduction_kernels(KernelRegistry& registry, DeviceType type);
void register_nn_kernels(KernelRegistry& registry, DeviceType type);
void register_indexing_kernels(KernelRegistry& registry, DeviceType type);
void register_optimizer_kernels(KernelRegistry& registry, DeviceType type);  // optimizer.cc

// dst = src converted to dst's dtype (the Copy kernel, for other kernels'
// use: staging through contiguous buffers).
void cpu_copy(Tensor& dst, const Tensor& src);

inline void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_fill_kernels(registry, type);
  register_copy_kernels(registry, type);
  register_binary_kernels(registry, type);
  register_reduce_kernels(registry, type);
  register_bmm_kernels(registry, type);
  register_random_kernels(registry, type);
  register_pointwise_kernels(registry, type);
  register_reduction_kernels(registry, type);
  register_nn_kernels(registry, type);
  register_indexing_kernels(registry, type);
  register_optimizer_kernels(registry, type);
}

}  // namespace tessera::cpu
