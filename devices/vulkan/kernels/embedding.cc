// embedding (every dtype, raw 1/2/4/8-byte moves) in shaders/embedding.comp
// and embedding_dense_backward in shaders/embedding_backward.glsl (f32, f16,
// bf16 accumulated in f32, on devices with 8/16/64-bit shader types; f64
// in double, on devices with shaderFloat64). Both range-check the indices
// on the device first (index_bounds.comp, a 16-byte read-back) and raise
// the CPU kernel's IndexError. Tensors whose offsets exceed 32 bits, and
// devices without those features, stage through the host.
#include <algorithm>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

struct EmbeddingParams {
  uint64_t out;
  uint64_t weight;
  uint64_t indices;
  uint32_t numel;
  uint32_t cols;
  int32_t out_strides[2];
  int32_t weight_strides[2];
  int32_t index_stride;
};

struct EmbeddingBackwardParams {
  uint64_t acc;
  uint64_t grad;
  uint64_t indices;
  uint64_t grad_weight;
  uint32_t n;
  uint32_t cols;
  uint32_t rows;
  uint32_t rows_per_block;
  int32_t padding_idx;
  int32_t index_stride;
  int32_t grad_strides[2];
  int32_t grad_weight_strides[2];
};

// Whether the shaders can address `indices` flattened to 1-D (a view where
// reshape allows, else a contiguous copy).
bool indices_fit(const Tensor& flat) {
  return (flat.dtype() == DType::kI64 || flat.dtype() == DType::kI32) && reach_fits_int32(flat);
}

// Range-checks the indices on the device; the IndexError is the CPU
// kernel's (naming the first bad index in row-major order). False when the
// bounds shader cannot address them.
bool check_indices(const KernelContext& ctx, const Tensor& flat, int64_t limit, const char* op) {
  const auto bounds = read_index_bounds(ctx, flat, nullptr);
  if (!bounds) return false;
  if (bounds->first < 0 || bounds->second >= limit) {
    const int64_t bad = first_bad_index(flat, limit, nullptr);
    TESSERA_CHECK(false, IndexError, op, ": index ", bad, " out of range in self (size ", limit,
                  ")");
  }
  return true;
}

void embedding_kernel(const KernelContext& ctx, Tensor& out, const Tensor& weight,
                      const Tensor& indices) {
  const int64_t n = indices.numel(), cols = weight.size(1);
  const Tensor flat = indices.reshape({n});
  if (!vulkan_context_of(ctx).has_sized_shader_types() || !indices_fit(flat) ||
      !reach_fits_int32(weight) || !reach_fits_int32(out) ||
      !check_indices(ctx, flat, weight.size(0), "embedding")) {
    run_on_host<kernels::Embedding>(ctx, out, weight, indices);
    return;
  }
  if (out.numel() == 0) return;
  EmbeddingParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.weight = reinterpret_cast<uint64_t>(weight.data_ptr());
  p.indices = reinterpret_cast<uint64_t>(flat.data_ptr());
  p.numel = static_cast<uint32_t>(out.numel());
  p.cols = static_cast<uint32_t>(cols);
  p.out_strides[0] = static_cast<int32_t>(out.stride(0));
  p.out_strides[1] = static_cast<int32_t>(out.stride(1));
  p.weight_strides[0] = static_cast<int32_t>(weight.stride(0));
  p.weight_strides[1] = static_cast<int32_t>(weight.stride(1));
  p.index_stride = static_cast<int32_t>(flat.stride(0));
  launch(ctx, "embedding",
         {static_cast<uint32_t>(out.itemsize()), flat.dtype() == DType::kI64 ? 1u : 0u}, p,
         out.numel());
}

// Invocations the backward's (column block x row block) grid aims for:
// row blocks are added until about this many run. Each row block scans
// every index, so more blocks cost more; on lavapipe 4096 was faster than
// 16384 (0.99 s against 1.35 s for 32768 indices into [30000, 128]).
constexpr int64_t kBackwardTargetInvocations = 4096;

void embedding_dense_backward_kernel(const KernelContext& ctx, Tensor& grad_weight,
                                     const Tensor& grad, const Tensor& indices,
                                     int64_t padding_idx) {
  VulkanContext& vk = vulkan_context_of(ctx);
  const int64_t rows = grad_weight.size(0), cols = grad_weight.size(1);
  const int64_t n = indices.numel();
  const Tensor flat = indices.reshape({n});
  const uint32_t wg = vk.pipelines().workgroup_size();
  const int64_t column_groups = (cols + wg - 1) / wg;
  const auto shader = float_shader(ctx, "embedding_backward", grad.dtype());
  if (!shader || !indices_fit(flat) ||
      column_groups > kMaxWorkGroupsPerDim ||
      !reach_fits_int32(grad) || !reach_fits_int32(grad_weight) ||
      !check_indices(ctx, flat, rows, "embedding_dense_backward")) {
    run_on_host<kernels::EmbeddingDenseBackward>(ctx, grad_weight, grad, indices, padding_idx);
    return;
  }
  if (grad_weight.numel() == 0) return;
  // Sums run in the compute type in acc: grad_weight itself when it is
  // contiguous and of that type, else a temporary converted at the end.
  const DType compute = shader->compute_dtype;
  const bool in_place = grad_weight.dtype() == compute && grad_weight.is_contiguous();
  Tensor acc = in_place ? grad_weight : empty({rows, cols}, TensorOptions(compute, ctx.device));
  acc.zero_();

  int64_t row_blocks =
      std::clamp<int64_t>(kBackwardTargetInvocations / (column_groups * wg), 1,
                          std::min<int64_t>(rows, kMaxWorkGroupsPerDim));
  const int64_t rows_per_block = (rows + row_blocks - 1) / row_blocks;
  row_blocks = (rows + rows_per_block - 1) / rows_per_block;

  EmbeddingBackwardParams p{};
  p.acc = reinterpret_cast<uint64_t>(acc.data_ptr());
  p.grad = reinterpret_cast<uint64_t>(grad.data_ptr());
  p.indices = reinterpret_cast<uint64_t>(flat.data_ptr());
  p.grad_weight = reinterpret_cast<uint64_t>(grad_weight.data_ptr());
  p.n = static_cast<uint32_t>(n);
  p.cols = static_cast<uint32_t>(cols);
  p.rows = static_cast<uint32_t>(rows);
  p.rows_per_block = static_cast<uint32_t>(rows_per_block);
  // Indices are in [0, rows), so a padding_idx outside never matches.
  p.padding_idx = padding_idx >= 0 && padding_idx < rows ? static_cast<int32_t>(padding_idx) : -1;
  p.index_stride = static_cast<int32_t>(flat.stride(0));
  p.grad_strides[0] = static_cast<int32_t>(grad.stride(0));
  p.grad_strides[1] = static_cast<int32_t>(grad.stride(1));
  p.grad_weight_strides[0] = static_cast<int32_t>(grad_weight.stride(0));
  p.grad_weight_strides[1] = static_cast<int32_t>(grad_weight.stride(1));
  const uint32_t index64 = flat.dtype() == DType::kI64 ? 1u : 0u;
  const uint32_t subgroups = vk.info().subgroup_arithmetic ? 1u : 0u;
  const uint32_t kind = static_cast<uint32_t>(shader->kind);
  launch_groups(ctx, shader->name, {index64, kind, 0u, subgroups}, p,
                static_cast<uint32_t>(column_groups), static_cast<uint32_t>(row_blocks));
  if (in_place) return;
  p.n = static_cast<uint32_t>(rows * cols);
  launch(ctx, shader->name, {index64, kind, 1u, subgroups}, p, rows * cols);
}

}  // namespace

void register_embedding_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Embedding>(type, embedding_kernel);
  registry.register_kernel<kernels::EmbeddingDenseBackward>(type, embedding_dense_backward_kernel);
}

}  // namespace tessera::vulkan
