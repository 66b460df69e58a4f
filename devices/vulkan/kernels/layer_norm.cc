// layer_norm and rms_norm, forward and backward, for f32, f16 and bf16 x (f32
// math), x made contiguous and viewed as [M, N] (N = the normalized
// dims). Rows (the forward; the backward's grad_input) run in
// shaders/layer_norm.glsl, a subgroup or work group per row
// (rows_common.h); grad_weight / grad_bias are column sums in
// shaders/layer_norm_columns.comp, an invocation per column (and chunk of
// rows, combined by a second pass in a fixed order). f64 on devices with
// shaderFloat64 is composed of the device's f64 kernels (the composed_f64
// functions). Other dtypes, statistics or parameters in another dtype than
// the front end gives, 2^31 elements or more, rows or columns beyond
// lavapipe's loop bound (rows_common.h) and devices without 8/16-bit
// storage stage through the host.
#include <algorithm>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

// kMode in shaders/layer_norm.glsl, kStage in layer_norm_columns.comp.
enum class NormMode : uint32_t { kForward, kBackward };
enum class ColumnStage : uint32_t { kChunks, kCombine };

struct NormParams {
  uint64_t out;
  uint64_t x;
  uint64_t grad;
  uint64_t weight;
  uint64_t bias;
  uint64_t mean;
  uint64_t rstd;
  uint32_t rows;
  uint32_t n;
  float eps;
};

struct ColumnParams {
  uint64_t grad_weight;
  uint64_t grad_bias;
  uint64_t grad;
  uint64_t x;
  uint64_t mean;
  uint64_t rstd;
  uint64_t partial;
  uint32_t rows;
  uint32_t n;
  uint32_t rows_per_chunk;
  uint32_t chunks;
};

// Column sums split into chunks of rows so that there are about
// kColumnInvocations invocations, each chunk at least kMinChunkRows rows
// and (for the loop bound) at most kMaxChunkRows.
constexpr int64_t kColumnInvocations = 8192;
constexpr int64_t kMinChunkRows = 32;
constexpr int64_t kMaxChunkRows = 8192;

struct ColumnPlan {
  int64_t chunks = 1;
  int64_t rows_per_chunk = 1;
  bool fits = false;  // within rows::kMaxLoopIterations
};

ColumnPlan column_plan(const KernelContext& ctx, int64_t m, int64_t n) {
  ColumnPlan plan;
  if (m <= 0 || n <= 0) return plan;
  const int64_t max_chunks = std::max<int64_t>(1, m / kMinChunkRows);
  plan.chunks = std::clamp<int64_t>(kColumnInvocations / n, 1, max_chunks);
  plan.chunks = std::max(plan.chunks, rows::ceil_div(m, kMaxChunkRows));
  plan.rows_per_chunk = rows::ceil_div(m, plan.chunks);
  const int64_t chunk_loops =
      rows::items_per_invocation(ctx, plan.chunks * n) * (plan.rows_per_chunk + 1);
  const int64_t combine_loops =
      plan.chunks > 1 ? rows::items_per_invocation(ctx, n) * (plan.chunks + 1) : 0;
  plan.fits = std::max(chunk_loops, combine_loops) <= rows::kMaxLoopIterations &&
              rows::fits_offsets(2 * plan.chunks * n);
  return plan;
}

int64_t norm_size(const Tensor& x, int64_t norm_dims) {
  int64_t n = 1;
  for (int64_t d = x.dim() - norm_dims; d < x.dim(); ++d) n *= x.sizes()[d];
  return n;
}

// A tensor of `dtype` or undefined.
bool undefined_or(const Tensor& t, DType dtype) { return !t.defined() || t.dtype() == dtype; }

// The dtypes the front end hands over (x's for out, weight, bias, grads;
// the statistics in one floating dtype), in shapes the shaders address.
bool native(const KernelContext& ctx, const Tensor& x, const Tensor& mean, const Tensor& rstd,
            const Tensor& weight, const Tensor& bias, int64_t n) {
  const DType stat = rstd.dtype();
  return rows::native_dtype(ctx, x.dtype()) && rows::native_dtype(ctx, stat) &&
         undefined_or(mean, stat) && undefined_or(weight, x.dtype()) &&
         undefined_or(bias, x.dtype()) && x.numel() > 0 && n > 0 &&
         rows::fits_offsets(x.numel());
}

Tensor contiguous_or_undefined(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

// Whether an f64 call composes on this device: every tensor given is f64.
bool composes_f64(const KernelContext& ctx, std::initializer_list<const Tensor*> tensors) {
  if (!vulkan_context_of(ctx).has_f64_shaders()) return false;
  for (const Tensor* t : tensors) {
    if (t->defined() && t->dtype() != DType::kF64) return false;
  }
  return true;
}

// f64 layer_norm / rms_norm on x viewed as [M, N], from the device's f64
// kernels (reduce_f64acc, binary_f64, unary_f64) in the CPU kernel's math:
// mean and the biased variance per row (rms: the mean square), rstd =
// 1 / sqrt(var + eps), y = (x - mean) * rstd * weight + bias. A pass per
// step where the f32 shader makes one, but on the device.
void layer_norm_composed_f64(bool rms, Tensor& out, Tensor& mean_out, Tensor& rstd_out,
                             const Tensor& x, const Tensor& weight, const Tensor& bias,
                             int64_t n, double eps) {
  const int64_t m = x.numel() / n;
  const Tensor rows = x.contiguous().reshape({m, n});
  const Shape along{1};
  Tensor centred = rows, row_mean;
  if (!rms) {
    row_mean = tessera::mean(rows, along, /*keepdim=*/true);
    centred = sub(rows, row_mean);
  }
  // The biased variance as the mean square of the centred rows (rms: of x).
  const Tensor rstd = rsqrt(add(tessera::mean(mul(centred, centred), along, true), eps));
  Tensor y = mul(centred, rstd);
  if (weight.defined()) y = mul(y, weight.reshape({1, n}));
  if (!rms && bias.defined()) y = add(y, bias.reshape({1, n}));
  out.copy_(y.reshape(out.sizes()));
  if (mean_out.defined() && row_mean.defined()) mean_out.copy_(row_mean.reshape(mean_out.sizes()));
  if (rstd_out.defined()) rstd_out.copy_(rstd.reshape(rstd_out.sizes()));
}

// The backward of layer_norm_composed_f64: with xhat = (x - mean) * rstd
// (rms: x * rstd) and gw = grad * weight, grad_input = rstd * (gw -
// mean(gw) - xhat * mean(gw * xhat)) (rms: without mean(gw)), grad_weight
// = the column sums of grad * xhat, grad_bias those of grad.
void layer_norm_backward_composed_f64(bool rms, Tensor& grad_input, Tensor& grad_weight,
                                      Tensor& grad_bias, const Tensor& grad_out, const Tensor& x,
                                      const Tensor& mean_in, const Tensor& rstd_in,
                                      const Tensor& weight, int64_t n) {
  const int64_t m = x.numel() / n;
  const Tensor rows = x.contiguous().reshape({m, n});
  const Tensor g = grad_out.contiguous().reshape({m, n});
  const Tensor rstd = rstd_in.contiguous().reshape({m, 1});
  const Tensor centred = rms ? rows : sub(rows, mean_in.contiguous().reshape({m, 1}));
  const Tensor xhat = mul(centred, rstd);
  if (grad_input.defined()) {
    const Shape along{1};
    const Tensor gw = weight.defined() ? mul(g, weight.reshape({1, n})) : g;
    Tensor inner = sub(gw, mul(xhat, tessera::mean(mul(gw, xhat), along, /*keepdim=*/true)));
    if (!rms) inner = sub(inner, tessera::mean(gw, along, /*keepdim=*/true));
    grad_input.copy_(mul(inner, rstd).reshape(grad_input.sizes()));
  }
  const Shape down{0};
  if (grad_weight.defined()) grad_weight.copy_(sum(mul(g, xhat), down).reshape(grad_weight.sizes()));
  if (grad_bias.defined()) grad_bias.copy_(sum(g, down).reshape(grad_bias.sizes()));
}

void layer_norm_kernel(const KernelContext& ctx, bool rms, Tensor& out, Tensor& mean,
                       Tensor& rstd, const Tensor& x, const Tensor& weight, const Tensor& bias,
                       int64_t norm_dims, double eps) {
  const int64_t n = norm_size(x, norm_dims);
  if (x.numel() > 0 && n > 0 && out.dtype() == x.dtype() &&
      composes_f64(ctx, {&x, &mean, &rstd, &weight, &bias})) {
    layer_norm_composed_f64(rms, out, mean, rstd, x, weight, bias, n, eps);
    return;
  }
  if (!native(ctx, x, mean, rstd, weight, bias, n) || out.dtype() != x.dtype() ||
      (!rms && !mean.defined())) {
    run_on_host<kernels::LayerNorm>(ctx, rms, out, mean, rstd, x, weight, bias, norm_dims, eps);
    return;
  }
  const int64_t m = x.numel() / n;
  const rows::RowTeams teams = rows::row_teams(ctx, "layer_norm", m, n, 3, 2, /*cached=*/true);
  if (!teams.fits) {
    run_on_host<kernels::LayerNorm>(ctx, rms, out, mean, rstd, x, weight, bias, norm_dims, eps);
    return;
  }
  const Tensor xc = x.contiguous();
  const Tensor w = contiguous_or_undefined(weight);
  const Tensor b = rms ? Tensor() : contiguous_or_undefined(bias);
  rows::DenseOut y(out), mean_out(mean), rstd_out(rstd);
  NormParams p{y.address(),
               rows::address(xc),
               0,
               rows::address(w),
               rows::address(b),
               rms ? 0 : mean_out.address(),
               rstd_out.address(),
               static_cast<uint32_t>(m),
               static_cast<uint32_t>(n),
               static_cast<float>(eps)};
  launch_groups(ctx, teams.shader,
                {teams.subgroup_rows, rows::storage_kind(x.dtype()), rows::storage_kind(rstd.dtype()),
                 rms ? 1u : 0u, static_cast<uint32_t>(NormMode::kForward)},
                p, teams.groups);
  y.finish();
  mean_out.finish();
  rstd_out.finish();
}

void layer_norm_backward_kernel(const KernelContext& ctx, bool rms, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                const Tensor& weight, int64_t norm_dims) {
  const int64_t n = norm_size(x, norm_dims);
  const bool outputs_ok = undefined_or(grad_input, x.dtype()) &&
                          undefined_or(grad_weight, x.dtype()) &&
                          undefined_or(grad_bias, x.dtype()) && grad_out.dtype() == x.dtype();
  const int64_t m = n > 0 ? x.numel() / n : 0;
  const rows::RowTeams teams = rows::row_teams(ctx, "layer_norm", m, n, 2, 1);
  if (m > 0 && outputs_ok && (rms || mean.defined()) &&
      composes_f64(ctx, {&x, &mean, &rstd, &weight})) {
    layer_norm_backward_composed_f64(rms, grad_input, grad_weight, grad_bias, grad_out, x, mean,
                                     rstd, weight, n);
    return;
  }
  const ColumnPlan columns = column_plan(ctx, m, n);
  const bool want_columns = grad_weight.defined() || grad_bias.defined();
  const bool fits_loops = (!grad_input.defined() || teams.fits) && (!want_columns || columns.fits);
  if (!native(ctx, x, rms ? Tensor() : mean, rstd, weight, Tensor(), n) || !outputs_ok ||
      (!rms && !mean.defined()) || !fits_loops) {
    run_on_host<kernels::LayerNormBackward>(ctx, rms, grad_input, grad_weight, grad_bias,
                                            grad_out, x, mean, rstd, weight, norm_dims);
    return;
  }
  const Tensor xc = x.contiguous();
  const Tensor g = grad_out.contiguous();
  const Tensor mean_c = rms ? Tensor() : mean.contiguous();
  const Tensor rstd_c = rstd.contiguous();
  const uint32_t half = rows::storage_kind(x.dtype());
  const uint32_t stat_half = rows::storage_kind(rstd.dtype());
  const uint32_t rms_flag = rms ? 1 : 0;
  if (grad_input.defined()) {
    rows::DenseOut gi(grad_input);
    NormParams p{gi.address(),
                 rows::address(xc),
                 rows::address(g),
                 rows::address(contiguous_or_undefined(weight)),
                 0,
                 rows::address(mean_c),
                 rows::address(rstd_c),
                 static_cast<uint32_t>(m),
                 static_cast<uint32_t>(n),
                 0.0f};
    launch_groups(ctx, teams.shader,
                  {teams.subgroup_rows, half, stat_half, rms_flag,
                   static_cast<uint32_t>(NormMode::kBackward)},
                  p, teams.groups);
    gi.finish();
  }
  // grad_bias = sum(g) even for rms when asked for, as the CPU kernel.
  if (!want_columns) return;
  rows::DenseOut gw(grad_weight), gb(grad_bias);
  const int64_t chunks = columns.chunks, rows_per_chunk = columns.rows_per_chunk;
  Tensor partial;
  if (chunks > 1) partial = empty({2 * chunks * n}, TensorOptions(DType::kF32, x.device()));
  ColumnParams p{gw.address(),
                 gb.address(),
                 rows::address(g),
                 rows::address(xc),
                 rows::address(mean_c),
                 rows::address(rstd_c),
                 rows::address(partial),
                 static_cast<uint32_t>(m),
                 static_cast<uint32_t>(n),
                 static_cast<uint32_t>(rows_per_chunk),
                 static_cast<uint32_t>(chunks)};
  launch(ctx, "layer_norm_columns",
         {0, half, stat_half, rms_flag, static_cast<uint32_t>(ColumnStage::kChunks)}, p,
         chunks * n);
  if (chunks > 1) {
    launch(ctx, "layer_norm_columns",
           {0, half, stat_half, rms_flag, static_cast<uint32_t>(ColumnStage::kCombine)}, p, n);
  }
  gw.finish();
  gb.finish();
}

}  // namespace

void register_layer_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::LayerNorm>(type, layer_norm_kernel);
  registry.register_kernel<kernels::LayerNormBackward>(type, layer_norm_backward_kernel);
}

}  // namespace tessera::vulkan
