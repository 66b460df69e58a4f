// batch_norm (training and eval) and its backward for f32, f16 and bf16 x (f32
// math), x made contiguous and viewed as [N, C, S]. Two launches: the
// per-channel statistics in shaders/batch_norm.glsl (a subgroup or work
// group per channel reducing over its N * S values, writing save_mean /
// save_invstd, the running stats, grad_weight / grad_bias and each
// channel's coefficients), then the elementwise pass in
// shaders/batch_norm_apply.comp. Per-channel vectors go to the shaders as
// f32 (others converted, and converted back for outputs). f64 x on devices
// with shaderFloat64 is composed of the device's f64 kernels (the
// composed_f64 functions; per-channel vectors of other floating dtypes are
// read as f64 and rounded once when written, as the CPU kernel's doubles).
// Other dtypes (f64 parameters of a narrower x), empty inputs, 2^31
// elements or more,
// channels beyond lavapipe's loop bound (about 7M values each;
// rows_common.h) and devices without 8/16-bit storage stage through the
// host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

// kMode in shaders/batch_norm.glsl and batch_norm_apply.comp.
enum class StatsMode : uint32_t { kTraining, kEval, kBackwardTraining, kBackwardEval };
enum class ApplyMode : uint32_t { kForward, kBackwardTraining, kBackwardEval };

struct StatsParams {
  uint64_t x;
  uint64_t grad;
  uint64_t weight;
  uint64_t bias;
  uint64_t running_mean;
  uint64_t running_var;
  uint64_t save_mean;
  uint64_t save_invstd;
  uint64_t grad_weight;
  uint64_t grad_bias;
  uint64_t coef;
  uint32_t batch;
  uint32_t channels;
  uint32_t spatial;
  float eps;
  float momentum;
};

struct ApplyParams {
  uint64_t out;
  uint64_t x;
  uint64_t grad;
  uint64_t coef;
  uint32_t numel;
  uint32_t spatial;
  uint32_t channels;
};

struct Ncs {
  int64_t n, c, s;
};

Ncs ncs_of(const Tensor& x) {
  Ncs d{x.sizes()[0], x.sizes()[1], 1};
  for (int64_t i = 2; i < x.dim(); ++i) d.s *= x.sizes()[i];
  return d;
}

// x and the tensors of x's dtype are f32, f16 or bf16; per-channel vectors
// (undefined or C elements) in either; shapes the shaders address.
bool native_x(const KernelContext& ctx, const Tensor& x) {
  return x.dim() >= 2 && x.numel() > 0 && rows::native_dtype(ctx, x.dtype()) &&
         rows::fits_offsets(x.numel());
}

bool native_vector(const KernelContext& ctx, const Tensor& t, int64_t c) {
  return !t.defined() || (rows::native_dtype(ctx, t.dtype()) && t.numel() == c);
}

// The statistics shader's team per channel (rows_common.h), for `passes`
// passes over each channel, each with a reduction.
rows::RowTeams channel_teams(const KernelContext& ctx, const Ncs& d, int passes) {
  return rows::row_teams(ctx, "batch_norm", d.c, d.n * d.s, passes, passes);
}

// A per-channel vector as f32, contiguous (f16 and bf16 convert natively).
Tensor f32_vector(const Tensor& t) {
  if (!t.defined() || (t.dtype() == DType::kF32 && t.is_contiguous())) return t;
  return t.to(DType::kF32).contiguous();
}

// A per-channel vector the shader updates in place (the running stats):
// an f32 contiguous copy when the tensor is not one, written back.
class F32InOut {
 public:
  explicit F32InOut(Tensor& t) : t_(t), f32_(f32_vector(t)) {}
  uint64_t address() const { return rows::address(f32_); }
  void finish() {
    if (f32_.defined() && !f32_.is_same(t_)) t_.copy_(f32_);
  }

 private:
  Tensor& t_;
  Tensor f32_;
};

// Whether an f64 call composes on this device: x f64 and not empty, the
// given per-channel tensors floating.
bool composes_f64(const KernelContext& ctx, const Tensor& x,
                  std::initializer_list<const Tensor*> per_channel) {
  if (x.dtype() != DType::kF64 || x.numel() == 0 || x.dim() < 2 ||
      !vulkan_context_of(ctx).has_f64_shaders()) {
    return false;
  }
  for (const Tensor* t : per_channel) {
    if (t->defined() && !is_floating(t->dtype())) return false;
  }
  return true;
}

// The dims a channel's statistics reduce over (all but 1), and a channel
// vector's shape broadcast against x ([1, C, 1, ...]).
Shape reduced_dims(const Tensor& x) {
  Shape dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}
Shape channel_shape(const Tensor& x) {
  Shape shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = x.sizes()[1];
  return shape;
}

// A channel vector as f64 [1, C, 1, ...], or `fill` where it is undefined.
Tensor channel_or(const Tensor& t, const Tensor& x, double fill) {
  if (t.defined()) return t.to(DType::kF64).reshape(channel_shape(x));
  return full(channel_shape(x), fill, TensorOptions(DType::kF64, x.device()));
}

// f64 batch_norm in the CPU kernel's math, from the device's f64 kernels:
// training takes each channel's mean and biased variance (the running
// variance the unbiased one, with momentum), eval the running statistics;
// y = x * scale + shift with scale = invstd * weight, shift = bias - mean
// * scale.
void batch_norm_composed_f64(Tensor& out, Tensor& save_mean, Tensor& save_invstd,
                             Tensor& running_mean, Tensor& running_var, const Tensor& x,
                             const Tensor& weight, const Tensor& bias, bool training,
                             double momentum, double eps) {
  const Shape dims = reduced_dims(x);
  Tensor mean_c, invstd_c;
  if (training) {
    const double count = static_cast<double>(x.numel() / x.sizes()[1]);
    mean_c = tessera::mean(x, dims, /*keepdim=*/true);
    const Tensor centred = sub(x, mean_c);
    const Tensor var_c = tessera::mean(mul(centred, centred), dims, /*keepdim=*/true);
    invstd_c = rsqrt(add(var_c, eps));
    if (save_mean.defined()) save_mean.copy_(mean_c.reshape(save_mean.sizes()));
    if (save_invstd.defined()) save_invstd.copy_(invstd_c.reshape(save_invstd.sizes()));
    if (running_mean.defined()) {  // in f64, rounded once into the running tensors
      const Tensor unbiased = mul(var_c, count / (count - 1.0));
      running_mean.copy_(add(mul(running_mean.to(DType::kF64), 1.0 - momentum),
                             mul(mean_c.reshape(running_mean.sizes()), momentum)));
      if (running_var.defined()) {
        running_var.copy_(add(mul(running_var.to(DType::kF64), 1.0 - momentum),
                              mul(unbiased.reshape(running_var.sizes()), momentum)));
      }
    }
  } else {
    mean_c = channel_or(running_mean, x, 0.0);
    invstd_c = rsqrt(add(channel_or(running_var, x, 1.0), eps));
  }
  const Tensor scale = mul(invstd_c, channel_or(weight, x, 1.0));
  const Tensor shift = sub(channel_or(bias, x, 0.0), mul(mean_c, scale));
  out.copy_(add(mul(x, scale), shift));
}

// Its backward: with xh = (x - mean) * invstd, k = weight * invstd,
// grad_input = k (g - mean(g) - xh mean(g xh)) in training, k g in eval;
// grad_weight = the channel sums of g xh, grad_bias those of g.
void batch_norm_backward_composed_f64(Tensor& grad_input, Tensor& grad_weight,
                                      Tensor& grad_bias, const Tensor& grad_out, const Tensor& x,
                                      const Tensor& weight, const Tensor& running_mean,
                                      const Tensor& running_var, const Tensor& save_mean,
                                      const Tensor& save_invstd, bool training, double eps) {
  const Shape dims = reduced_dims(x);
  Tensor mean_c, invstd_c;
  if (training) {
    mean_c = channel_or(save_mean, x, 0.0);
    invstd_c = channel_or(save_invstd, x, 1.0);
  } else {
    mean_c = channel_or(running_mean, x, 0.0);
    invstd_c = rsqrt(add(channel_or(running_var, x, 1.0), eps));
  }
  const Tensor xh = mul(sub(x, mean_c), invstd_c);
  const Tensor sum_g = sum(grad_out, dims, /*keepdim=*/true);
  const Tensor sum_gxh = sum(mul(grad_out, xh), dims, /*keepdim=*/true);
  if (grad_input.defined() && grad_input.numel() > 0) {
    const Tensor k = mul(channel_or(weight, x, 1.0), invstd_c);
    if (training) {
      const double count = static_cast<double>(x.numel() / x.sizes()[1]);
      const Tensor inner = sub(sub(grad_out, div(sum_g, count)), mul(xh, div(sum_gxh, count)));
      grad_input.copy_(mul(k, inner));
    } else {
      grad_input.copy_(mul(k, grad_out));
    }
  }
  if (grad_weight.defined()) grad_weight.copy_(sum_gxh.reshape(grad_weight.sizes()));
  if (grad_bias.defined()) grad_bias.copy_(sum_g.reshape(grad_bias.sizes()));
}

void batch_norm_kernel(const KernelContext& ctx, Tensor& out, Tensor& save_mean,
                       Tensor& save_invstd, Tensor& running_mean, Tensor& running_var,
                       const Tensor& x, const Tensor& weight, const Tensor& bias, bool training,
                       double momentum, double eps) {
  if (out.dtype() == DType::kF64 &&
      composes_f64(ctx, x, {&weight, &bias, &running_mean, &running_var})) {
    batch_norm_composed_f64(out, save_mean, save_invstd, running_mean, running_var, x, weight,
                            bias, training, momentum, eps);
    return;
  }
  const bool native =
      native_x(ctx, x) && out.dtype() == x.dtype() &&
      [&] {
        const int64_t c = x.sizes()[1];
        bool ok = native_vector(ctx, weight, c) && native_vector(ctx, bias, c) &&
                  native_vector(ctx, running_mean, c) && native_vector(ctx, running_var, c) &&
                  running_mean.defined() == running_var.defined();
        if (training) {
          ok = ok && save_mean.defined() && save_invstd.defined() &&
               native_vector(ctx, save_mean, c) && native_vector(ctx, save_invstd, c);
        } else {
          ok = ok && running_mean.defined();
        }
        return ok;
      }();
  if (!native || !channel_teams(ctx, ncs_of(x), training ? 2 : 0).fits) {
    run_on_host<kernels::BatchNorm>(ctx, out, save_mean, save_invstd, running_mean, running_var,
                                    x, weight, bias, training, momentum, eps);
    return;
  }
  const Ncs d = ncs_of(x);
  const Tensor xc = x.contiguous();
  const Tensor w = f32_vector(weight), b = f32_vector(bias);
  F32InOut rm(running_mean), rv(running_var);
  Tensor unused;  // eval leaves save_mean / save_invstd alone
  rows::DenseOut mean_out(training ? save_mean : unused, DType::kF32);
  rows::DenseOut invstd_out(training ? save_invstd : unused, DType::kF32);
  const Tensor coef = empty({d.c * 4}, TensorOptions(DType::kF32, x.device()));
  const uint32_t half = rows::storage_kind(x.dtype());
  StatsParams sp{};
  sp.x = rows::address(xc);
  sp.weight = rows::address(w);
  sp.bias = rows::address(b);
  sp.running_mean = rm.address();
  sp.running_var = rv.address();
  if (training) {
    sp.save_mean = mean_out.address();
    sp.save_invstd = invstd_out.address();
  }
  sp.coef = rows::address(coef);
  sp.batch = static_cast<uint32_t>(d.n);
  sp.channels = static_cast<uint32_t>(d.c);
  sp.spatial = static_cast<uint32_t>(d.s);
  sp.eps = static_cast<float>(eps);
  sp.momentum = static_cast<float>(momentum);
  const rows::RowTeams teams = channel_teams(ctx, d, training ? 2 : 0);
  const StatsMode mode = training ? StatsMode::kTraining : StatsMode::kEval;
  launch_groups(ctx, teams.shader, {teams.subgroup_rows, half, static_cast<uint32_t>(mode)}, sp,
                teams.groups);
  rows::DenseOut y(out);
  ApplyParams ap{y.address(),
                 rows::address(xc),
                 0,
                 rows::address(coef),
                 static_cast<uint32_t>(x.numel()),
                 static_cast<uint32_t>(d.s),
                 static_cast<uint32_t>(d.c)};
  launch(ctx, "batch_norm_apply", {0, half, static_cast<uint32_t>(ApplyMode::kForward)}, ap,
         x.numel());
  y.finish();
  if (training) {
    mean_out.finish();
    invstd_out.finish();
    rm.finish();
    rv.finish();
  }
}

void batch_norm_backward_kernel(const KernelContext& ctx, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& x, const Tensor& weight,
                                const Tensor& running_mean, const Tensor& running_var,
                                const Tensor& save_mean, const Tensor& save_invstd,
                                bool training, double eps) {
  if (grad_out.dtype() == DType::kF64 && (!grad_input.defined() || grad_input.dtype() == DType::kF64) &&
      composes_f64(ctx, x, {&weight, &running_mean, &running_var, &save_mean, &save_invstd})) {
    batch_norm_backward_composed_f64(grad_input, grad_weight, grad_bias, grad_out, x, weight,
                                     running_mean, running_var, save_mean, save_invstd, training,
                                     eps);
    return;
  }
  const bool native =
      native_x(ctx, x) && grad_out.dtype() == x.dtype() &&
      (!grad_input.defined() || grad_input.dtype() == x.dtype()) && [&] {
        const int64_t c = x.sizes()[1];
        const Tensor& mean = training ? save_mean : running_mean;
        const Tensor& spread = training ? save_invstd : running_var;
        return mean.defined() && spread.defined() && native_vector(ctx, mean, c) &&
               native_vector(ctx, spread, c) && native_vector(ctx, weight, c) &&
               native_vector(ctx, grad_weight, c) && native_vector(ctx, grad_bias, c);
      }();
  if (!native || !channel_teams(ctx, ncs_of(x), 1).fits) {
    run_on_host<kernels::BatchNormBackward>(ctx, grad_input, grad_weight, grad_bias, grad_out, x,
                                            weight, running_mean, running_var, save_mean,
                                            save_invstd, training, eps);
    return;
  }
  if (!grad_input.defined() && !grad_weight.defined() && !grad_bias.defined()) return;
  const Ncs d = ncs_of(x);
  const Tensor xc = x.contiguous();
  const Tensor g = grad_out.contiguous();
  const Tensor w = f32_vector(weight);
  const Tensor mean = f32_vector(training ? save_mean : running_mean);
  const Tensor spread = f32_vector(training ? save_invstd : running_var);
  rows::DenseOut gw(grad_weight, DType::kF32), gb(grad_bias, DType::kF32);
  Tensor coef;
  if (grad_input.defined()) coef = empty({d.c * 4}, TensorOptions(DType::kF32, x.device()));
  const uint32_t half = rows::storage_kind(x.dtype());
  StatsParams sp{};
  sp.x = rows::address(xc);
  sp.grad = rows::address(g);
  sp.weight = rows::address(w);
  if (training) {
    sp.save_mean = rows::address(mean);
    sp.save_invstd = rows::address(spread);
  } else {
    sp.running_mean = rows::address(mean);
    sp.running_var = rows::address(spread);
  }
  sp.grad_weight = gw.address();
  sp.grad_bias = gb.address();
  sp.coef = rows::address(coef);
  sp.batch = static_cast<uint32_t>(d.n);
  sp.channels = static_cast<uint32_t>(d.c);
  sp.spatial = static_cast<uint32_t>(d.s);
  sp.eps = static_cast<float>(eps);
  const rows::RowTeams teams = channel_teams(ctx, d, 1);
  const StatsMode mode = training ? StatsMode::kBackwardTraining : StatsMode::kBackwardEval;
  launch_groups(ctx, teams.shader, {teams.subgroup_rows, half, static_cast<uint32_t>(mode)}, sp,
                teams.groups);
  gw.finish();
  gb.finish();
  if (!grad_input.defined()) return;
  rows::DenseOut gi(grad_input);
  ApplyParams ap{gi.address(),
                 rows::address(xc),
                 rows::address(g),
                 rows::address(coef),
                 static_cast<uint32_t>(x.numel()),
                 static_cast<uint32_t>(d.s),
                 static_cast<uint32_t>(d.c)};
  const ApplyMode apply = training ? ApplyMode::kBackwardTraining : ApplyMode::kBackwardEval;
  launch(ctx, "batch_norm_apply", {0, half, static_cast<uint32_t>(apply)}, ap, x.numel());
  gi.finish();
}

}  // namespace

void register_batch_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::BatchNorm>(type, batch_norm_kernel);
  registry.register_kernel<kernels::BatchNormBackward>(type, batch_norm_backward_kernel);
}

}  // namespace tessera::vulkan
