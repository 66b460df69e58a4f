// arange and linspace on the device. Where it has shaderFloat64, floating
// arange and linspace of every dtype but bool run in double as the CPU
// kernels do, bit for bit (shaders/creation_f64.comp). Elsewhere, and for
// integer arange, shaders/creation.comp: integer arange exactly in int64,
// floating values (f32, f16, bf16) in double-float arithmetic standing in
// for the CPU's double (the float nearest to it is the CPU's result except
// within ~2^-48 of a rounding boundary, i.e. at most 1 ulp, rarely). On
// such devices f64 outputs, integer linspace (its truncation would turn
// those differences into off-by-one results) and values too large for the
// double-float split (|x| >= 2^100) stage through the host; so do bool
// outputs, numel or offsets beyond 32 bits and devices without 8/16/64-bit
// shader types.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

struct CreationParams {
  uint64_t out;
  uint64_t start_int;
  uint64_t step_int;
  uint32_t numel;
  int32_t stride;
  uint32_t half_n;
  float start_hi, start_lo;
  float step_hi, step_lo;
  float end_hi, end_lo;
};

// Matches Params in shaders/creation_f64.comp.
struct CreationF64Params {
  uint64_t out;
  uint64_t start, step, end;  // the doubles' bits
  uint32_t numel;
  int32_t stride;
  uint32_t half_n;
};

// Whether double-float arithmetic can carry v (the split needs |v| < 2^100).
bool df_fits(double v) { return std::isfinite(v) && std::fabs(v) < 0x1.0p100; }

void split(double v, float* hi, float* lo) {
  *hi = static_cast<float>(v);
  *lo = static_cast<float>(v - static_cast<double>(*hi));
}

// 1-D out the shader can address: numel and every offset below 2^31.
bool addressable(const KernelContext& ctx, const Tensor& out) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  const int64_t n = out.numel();
  return vulkan_context_of(ctx).has_sized_shader_types() && out.dim() == 1 && n <= kLimit &&
         std::llabs(out.stride(0)) <= kLimit && (n - 1) * std::llabs(out.stride(0)) <= kLimit;
}

// kOp of the creation shaders.
constexpr uint32_t kArange = 0, kLinspace = 1;

// Runs arange (start + i * step) or linspace (half_n: the elements counted
// from start) in creation_f64.comp when the device has shaderFloat64;
// false, with nothing launched, otherwise.
bool launch_in_double(const KernelContext& ctx, Tensor& out, uint32_t op, double start,
                      double step, double end, int64_t half_n) {
  if (!vulkan_context_of(ctx).has_f64_shaders() || !addressable(ctx, out)) return false;
  CreationF64Params p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.start = std::bit_cast<uint64_t>(start);
  p.step = std::bit_cast<uint64_t>(step);
  p.end = std::bit_cast<uint64_t>(end);
  p.numel = static_cast<uint32_t>(out.numel());
  p.stride = static_cast<int32_t>(out.stride(0));
  p.half_n = static_cast<uint32_t>(half_n);
  launch(ctx, "creation_f64", {op, static_cast<uint32_t>(out.dtype())}, p, out.numel());
  return true;
}

void arange_kernel(const KernelContext& ctx, Tensor& out, Scalar start, Scalar step) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const DType t = out.dtype();
  const bool floating = is_floating(t);
  if (floating && launch_in_double(ctx, out, kArange, start.to<double>(), step.to<double>(), 0.0,
                                   0)) {
    return;
  }
  CreationParams p{};
  bool native = addressable(ctx, out) && t != DType::kF64 && t != DType::kBool;
  if (native && floating) {
    const double s0 = start.to<double>(), ds = step.to<double>();
    native = df_fits(s0) && df_fits(ds) && df_fits(s0 + ds * static_cast<double>(n));
    split(s0, &p.start_hi, &p.start_lo);
    split(ds, &p.step_hi, &p.step_lo);
  } else if (native) {
    p.start_int = static_cast<uint64_t>(start.to<int64_t>());
    p.step_int = static_cast<uint64_t>(step.to<int64_t>());
  }
  if (!native) {
    run_on_host<kernels::Arange>(ctx, out, start, step);
    return;
  }
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.numel = static_cast<uint32_t>(n);
  p.stride = static_cast<int32_t>(out.stride(0));
  launch(ctx, "creation", {kArange, static_cast<uint32_t>(t)}, p, n);
}

void linspace_kernel(const KernelContext& ctx, Tensor& out, double start, double end) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  if (out.dtype() != DType::kBool &&
      launch_in_double(ctx, out, kLinspace, start, step, end, n / 2)) {
    return;
  }
  // Integer dtypes truncate, which would turn the double-float's rare
  // differences from double into off-by-one results (e.g. 64.99999999999994
  // in double vs 65 here): they stage, as f64 does.
  const DType t = out.dtype();
  const bool native = addressable(ctx, out) &&
                      (t == DType::kF32 || t == DType::kF16 || t == DType::kBF16) &&
                      df_fits(start) && df_fits(end) && df_fits(step);
  if (!native) {
    run_on_host<kernels::Linspace>(ctx, out, start, end);
    return;
  }
  CreationParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.numel = static_cast<uint32_t>(n);
  p.stride = static_cast<int32_t>(out.stride(0));
  p.half_n = static_cast<uint32_t>(n / 2);
  split(start, &p.start_hi, &p.start_lo);
  split(step, &p.step_hi, &p.step_lo);
  split(end, &p.end_hi, &p.end_lo);
  launch(ctx, "creation", {kLinspace, static_cast<uint32_t>(out.dtype())}, p, n);
}

}  // namespace

void register_creation_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Arange>(type, arange_kernel);
  registry.register_kernel<kernels::Linspace>(type, linspace_kernel);
}

}  // namespace tessera::vulkan
