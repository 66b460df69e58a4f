// Batched matrix products on the GPU, shared by bmm and convolution:
// out[b] = a[b] @ b[b] for a [B, M, K], b [B, K, N] and out [B, M, N] of
// one dtype. Floating dtypes go to cuBLAS (f16/bf16 on tensor cores with
// float accumulation; f32 in float32, or TF32 when the runtime's
// float32_matmul_precision allows it); integers and bool to a tiled kernel
// accumulating in int64 with wraparound (bool: any(a && b)), as the CPU
// device computes them.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::cuda {

void batched_matmul(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b);

// The integer and bool path (gemm_int.cu); any strides.
void integer_batched_matmul(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace tessera::cuda
