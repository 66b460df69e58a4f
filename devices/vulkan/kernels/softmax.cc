// softmax / log_softmax and their backward for f32, f16 and bf16 (f32 math) on
// contiguous data (other inputs are made contiguous first). Along the
// innermost dim: shaders/softmax.glsl, a subgroup or work group per row
// (rows_common.h); along another dim of the [outer, n, inner] view:
// shaders/softmax_columns.comp, an invocation per line (lines too long for
// lavapipe's loop bound are moved innermost by a copy and run as rows).
// f64, on devices with shaderFloat64, is composed of the device's f64
// kernels (composed_f64). Other dtypes, tensors of 2^31 elements or more,
// rows beyond the loop bound (about 5M elements) and devices without
// 8/16-bit storage stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

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

bool is_backward(SoftmaxMode mode) {
  return mode == SoftmaxMode::kSoftmaxBackward || mode == SoftmaxMode::kLogSoftmaxBackward;
}

// out = mode(a[, b]) along the last dim (rows of n); a, b and out
// contiguous, of one dtype. False (nothing launched) when a row is too long
// for the loop bound (rows::kMaxLoopIterations).
bool launch_rows(const KernelContext& ctx, SoftmaxMode mode, const Tensor& out, const Tensor& a,
                 const Tensor& b, int64_t n) {
  const int64_t rows = a.numel() / n;
  const int passes = is_backward(mode) ? 2 : 3, reductions = is_backward(mode) ? 1 : 2;
  const rows::RowTeams teams =
      rows::row_teams(ctx, "softmax", rows, n, passes, reductions, /*cached=*/!is_backward(mode));
  if (!teams.fits) return false;
  SoftmaxRowParams p{rows::address(out), rows::address(a), rows::address(b),
                     static_cast<uint32_t>(rows), static_cast<uint32_t>(n)};
  launch_groups(ctx, teams.shader,
                {teams.subgroup_rows, rows::storage_kind(a.dtype()), static_cast<uint32_t>(mode)}, p,
                teams.groups);
  return true;
}

// out = mode(a[, b]) along dim, any layout; false when neither shader can
// take it (the caller stages through the host).
bool launch_softmax(const KernelContext& ctx, SoftmaxMode mode, Tensor& out, const Tensor& a_in,
                    const Tensor& b_in, int64_t dim) {
  const Shape& sizes = a_in.sizes();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
  for (int64_t d = dim + 1; d < a_in.dim(); ++d) inner *= sizes[d];
  const int64_t n = sizes[dim];
  if (inner == 1) {
    const Tensor a = a_in.contiguous();
    const Tensor b = b_in.defined() ? b_in.contiguous() : b_in;
    rows::DenseOut dst(out);
    if (!launch_rows(ctx, mode, dst.tensor(), a, b, n)) return false;
    dst.finish();
    return true;
  }
  const int passes = is_backward(mode) ? 2 : 3;
  const int64_t lines = outer * inner;
  if (rows::items_per_invocation(ctx, lines) * (passes * n + 1) <= rows::kMaxLoopIterations) {
    const Tensor a = a_in.contiguous();
    const Tensor b = b_in.defined() ? b_in.contiguous() : b_in;
    rows::DenseOut dst(out);
    SoftmaxColumnParams p{dst.address(), rows::address(a), rows::address(b),
                          static_cast<uint32_t>(lines), static_cast<uint32_t>(n),
                          static_cast<uint32_t>(inner)};
    // Constant 1 (kSubgroupRows) is unused there; the modes keep their ids.
    launch(ctx, "softmax_columns", {0, rows::storage_kind(a.dtype()), static_cast<uint32_t>(mode)},
           p, lines);
    dst.finish();
    return true;
  }
  // Long lines: move dim last (a copy) and run them as rows.
  Shape order;
  for (int64_t d = 0; d < a_in.dim(); ++d) {
    if (d != dim) order.push_back(d);
  }
  order.push_back(dim);
  const Tensor a_rows = a_in.permute(order).contiguous();
  const Tensor b_rows = b_in.defined() ? b_in.permute(order).contiguous() : b_in;
  Tensor out_rows = empty(a_rows.sizes(), TensorOptions(out.dtype(), out.device()));
  if (!launch_rows(ctx, mode, out_rows, a_rows, b_rows, n)) return false;
  Shape inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  out.copy_(out_rows.permute(inverse));
  return true;
}

// f64 as the CPU kernel computes it, from the device's f64 kernels
// (reduce_f64acc, unary_f64, binary_f64): the row max, exp(x - max), its
// sum, and the quotient or the log shift; the backward's row sums likewise.
// A pass per step where the f32 shader makes one or two, but on the device
// (staging would copy every tensor to the host and back). False where the
// device has no f64 shaders.
bool composed_f64(const KernelContext& ctx, SoftmaxMode mode, Tensor& out, const Tensor& a,
                  const Tensor& b, int64_t dim) {
  if (a.dtype() != DType::kF64 || !vulkan_context_of(ctx).has_f64_shaders()) return false;
  if (b.defined() && b.dtype() != DType::kF64) return false;
  const Shape dims{dim};
  switch (mode) {
    case SoftmaxMode::kSoftmax:
    case SoftmaxMode::kLogSoftmax: {
      const Tensor shifted = sub(a, amax(a, dims, /*keepdim=*/true));
      const Tensor e = exp(shifted);
      const Tensor s = sum(e, dims, /*keepdim=*/true);
      out.copy_(mode == SoftmaxMode::kSoftmax ? div(e, s) : sub(shifted, log(s)));
      return true;
    }
    case SoftmaxMode::kSoftmaxBackward:  // a: grad_out, b: the forward's output
      out.copy_(mul(b, sub(a, sum(mul(a, b), dims, /*keepdim=*/true))));
      return true;
    case SoftmaxMode::kLogSoftmaxBackward:
      out.copy_(sub(a, mul(exp(b), sum(a, dims, /*keepdim=*/true))));
      return true;
  }
  return false;
}

void softmax_kernel(const KernelContext& ctx, bool log, Tensor& out, const Tensor& in,
                    int64_t dim) {
  if (out.numel() == 0) return;
  const SoftmaxMode forward = log ? SoftmaxMode::kLogSoftmax : SoftmaxMode::kSoftmax;
  if (composed_f64(ctx, forward, out, in, Tensor(), dim)) return;
  if (!native(ctx, in) ||
      !launch_softmax(ctx, log ? SoftmaxMode::kLogSoftmax : SoftmaxMode::kSoftmax, out, in,
                      Tensor(), dim)) {
    run_on_host<kernels::Softmax>(ctx, log, out, in, dim);
  }
}

void softmax_backward_kernel(const KernelContext& ctx, bool log, Tensor& grad_in,
                             const Tensor& grad_out, const Tensor& output, int64_t dim) {
  if (grad_in.numel() == 0) return;
  const SoftmaxMode mode = log ? SoftmaxMode::kLogSoftmaxBackward : SoftmaxMode::kSoftmaxBackward;
  if (composed_f64(ctx, mode, grad_in, grad_out, output, dim)) return;
  if (!native(ctx, output) || !launch_softmax(ctx, mode, grad_in, grad_out, output, dim)) {
    run_on_host<kernels::SoftmaxBackward>(ctx, log, grad_in, grad_out, output, dim);
  }
}

}  // namespace

void register_softmax_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Softmax>(type, softmax_kernel);
  registry.register_kernel<kernels::SoftmaxBackward>(type, softmax_backward_kernel);
}

}  // namespace tessera::vulkan
