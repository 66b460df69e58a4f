// The device GEMM that bmm and conv2d share: C[z] = A[z] @ B[z] for
// z < batch, every operand given by a pointer and element strides (batch,
// row, column; 0 broadcasts), optionally plus a per-row bias and/or added
// to C. The shader variant is chosen per device and dtype
// (choose_gemm_variant): for f32, devices with 8-wide subgroups (llvmpipe,
// where every non-uniform load is a loop over the lanes) run
// shaders/gemm_subgroup.glsl, which shares A through subgroup shuffles,
// and others the shared-memory tiled shader (shaders/gemm_tiled.glsl);
// f16 and bf16 (f32 sums) likewise where the device has 16-bit storage; f64
// (f64 sums) on the tiled shader where the device has shaderFloat64; int64
// (wrapping int64 sums) on the tiled shader where it has shaderInt64; int32,
// int16, int8 and uint8 (wrapping int32 sums) only on the subgroup shader.
// f16 on devices with cooperative matrices (VK_NV_cooperative_matrix, when
// TESSERA_VULKAN_COOPERATIVE_MATRIX=1) runs on tensor cores
// (shaders/gemm_coopmat_f16.comp).
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::vulkan {

struct GemmOperand {
  const void* data = nullptr;
  int64_t batch_stride = 0;  // in elements
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

struct GemmProblem {
  DType dtype = DType::kF32;  // of A, B, C and the bias
  int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmOperand a, b, c;  // [m, k], [k, n], [m, n]
  const void* bias = nullptr;  // bias[row * bias_stride] added to row; null: none
  int64_t bias_stride = 0;
  bool accumulate = false;  // C += A @ B (+ bias) instead of C = ...
};

enum class GemmVariant {
  kNone,       // this device cannot run it: the caller stages through the host
  kTiledF32,   // shaders/gemm_f32.comp
  kTiledF16,   // shaders/gemm_f16.comp (f16 storage, f32 sums)
  kTiledBF16,  // shaders/gemm_bf16.comp (bf16 storage, f32 sums)
  kTiledF64,   // shaders/gemm_f64.comp (f64 sums), on devices with shaderFloat64
  kTiledI64,   // shaders/gemm_i64.comp (wrapping int64 sums), on devices with shaderInt64
  kSubgroupF32,  // shaders/gemm_subgroup_f32.comp: 8-wide subgroups (llvmpipe)
  kSubgroupF16,  // shaders/gemm_subgroup_f16.comp (f16 storage, f32 sums)
  kSubgroupBF16,  // shaders/gemm_subgroup_bf16.comp (bf16 storage, f32 sums)
  kSubgroupInt,  // shaders/gemm_subgroup_{i32,i16,i8,u8}.comp (wrapping int32 sums)
  kCoopMatrixF16,  // shaders/gemm_coopmat_f16.comp: tensor cores, f32 sums
};

// The variant that runs `problem` on the kernel's device, or kNone when no
// shader takes its dtype or its sizes and strides overflow the shader's
// 32-bit offsets or the dispatch grid.
GemmVariant choose_gemm_variant(const KernelContext& ctx, const GemmProblem& problem);

// Runs `problem` with `variant` (not kNone) on the kernel's stream. Batches
// beyond the grid's z limit go in several dispatches.
void run_gemm(const KernelContext& ctx, const GemmProblem& problem, GemmVariant variant);

}  // namespace tessera::vulkan
