// softmax / log_softmax and their backward for f32 and f16 (f32 math) on
// contiguous data (other inputs are made contiguous first). Along the
// innermost dim: shaders/softmax.glsl, a work group per row (a subgroup per
// row for short rows); along another dim of the [outer, n, inner] view:
// shaders/softmax_columns.comp, an invocation per line. Other dtypes
// (bf16, f64), tensors of 2^31 elements or more and devices without
// 8/16-bit storage stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

// kMode in the shaders.
enum class SoftmaxMode : uint32_t { kSoftmax, kLogSoftmax, kSoftmaxBackward, kLogSoftmaxBackward };

struct SoftmaxRowParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint32_t rows;
  uint32_t n;
};

struct SoftmaxColumnParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint32_t lines;
  uint32_t n;
  uint32_t inner;
};

bool native(const KernelContext& ctx, const Tensor& t) {
  return t.dim() > 0 && rows::native_dtype(ctx, t.dtype()) && rows::fits_offsets(t.numel());
}

// out = mode(a[, b]) along dim; a and b contiguous, of out's sizes and dtype.
void launch_softmax(const KernelContext& ctx, SoftmaxMode mode, Tensor& out, const Tensor& a,
                    const Tensor& b, int64_t dim) {
  const Shape& sizes = a.sizes();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= sizes[d];
  const int64_t n = sizes[dim];
  rows::DenseOut dst(out);
  const uint32_t half = rows::half_flag(a.dtype());
  if (inner == 1) {
    SoftmaxRowParams p{dst.address(), rows::address(a), rows::address(b),
                       static_cast<uint32_t>(outer), static_cast<uint32_t>(n)};
    const rows::RowTeams teams = rows::row_teams(ctx, "softmax", outer, n);
    launch_groups(ctx, teams.shader, {teams.subgroup_rows, half, static_cast<uint32_t>(mode)}, p,
                  teams.groups);
  } else {
    SoftmaxColumnParams p{dst.address(), rows::address(a), rows::address(b),
                          static_cast<uint32_t>(outer * inner), static_cast<uint32_t>(n),
                          static_cast<uint32_t>(inner)};
    // Constant 1 (kSubgroupRows) is unused there; the modes keep their ids.
    launch(ctx, "softmax_columns", {0, half, static_cast<uint32_t>(mode)}, p, outer * inner);
  }
  dst.finish();
}

void softmax_kernel(const KernelContext& ctx, bool log, Tensor& out, const Tensor& in,
                    int64_t dim) {
  if (out.numel() == 0) return;
  if (!native(ctx, in)) {
    run_on_host<kernels::Softmax>(ctx, log, out, in, dim);
    return;
  }
  launch_softmax(ctx, log ? SoftmaxMode::kLogSoftmax : SoftmaxMode::kSoftmax, out,
                 in.contiguous(), Tensor(), dim);
}

void softmax_backward_kernel(const KernelContext& ctx, bool log, Tensor& grad_in,
                             const Tensor& grad_out, const Tensor& output, int64_t dim) {
  if (grad_in.numel() == 0) return;
  if (!native(ctx, output)) {
    run_on_host<kernels::SoftmaxBackward>(ctx, log, grad_in, grad_out, output, dim);
    return;
  }
  launch_softmax(ctx, log ? SoftmaxMode::kLogSoftmaxBackward : SoftmaxMode::kSoftmaxBackward,
                 grad_in, grad_out.contiguous(), output.contiguous(), dim);
}

}  // namespace

void register_softmax_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Softmax>(type, softmax_kernel);
  registry.register_kernel<kernels::SoftmaxBackward>(type, softmax_backward_kernel);
}

}  // namespace tessera::vulkan
