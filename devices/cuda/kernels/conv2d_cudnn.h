// conv2d and its backward through cuDNN (cudnn_library.h), registered over
// the im2col kernels of conv2d.cu, which still run whenever cuDNN is not
// used: switched off, not loadable, or not taking the arguments (a dtype it
// lacks, sizes beyond its 32-bit descriptors, no deterministic algorithm
// that fits the workspace limit).
//
// TESSERA_CUDA_CUDNN=1 switches it on. It is off by default until it has
// passed the conformance suite on a GPU (tools/gpu_check runs the
// convolution cases and the conv2d benchmark with it on).
//
// Only deterministic cuDNN algorithms are used, so results are the same
// bits every run, as the im2col path's are. float32 follows the runtime's
// float32_matmul_precision: FMA math at "highest", TF32 allowed otherwise.
//
// This header and cudnn_library.h are host code compiled by the C++
// compiler; no .cu file includes them (devices/cuda/BUILD keeps them out of
// the nvcc actions' inputs).
#pragma once

#include "runtime/core/device.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::cuda {

// Call after register_all_kernels: it wraps the conv2d kernels found there.
void register_cudnn_conv2d_kernels(KernelRegistry& registry, DeviceType type);

}  // namespace tessera::cuda
