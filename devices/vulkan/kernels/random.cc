// Random ops natively on Philox4x32-10 (shaders/philox.glsl, the same
// counters and bits as runtime/random/philox.h), in shaders/random.comp:
// uniform for f32 and f16 when low and high - low are floats of similar
// magnitude (rand, uniform(-b, b), ...: the CPU's double arithmetic is then
// exact before its final rounding, and the shader rounds the exact
// low + range * u once, bit-identical), normal for f32 and f16 (Box-Muller in f32, so within a few ulp of
// the CPU's double transform, not bit-identical), randint for every dtype
// and bernoulli (hence dropout) for every out dtype with f16, bf16, f32 or
// f64 probabilities (compared exactly in integers). f64 and bf16 uniform
// and normal, other uniform ends (not floats, e.g. a bound computed in
// double such as 1 / sqrt(fan_in), or far apart in magnitude: the CPU's
// double rounding would need float64 to reproduce), ranks beyond 5 after
// coalescing, 32-bit overflow and devices without 8/16/64-bit shader types
// stage through the host.
#include <cmath>
#include <cstring>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kRandomMaxRank = 5;  // kMaxRank in shaders/random.comp

// The shader's kOp values.
enum class RandomShaderOp : uint32_t {
  kUniformF32 = 0,
  kUniformF16 = 1,
  kNormalF32 = 2,
  kNormalF16 = 3,
  kRandint = 4,
  kBernoulli = 5,
};

struct RandomParams {
  uint64_t out;
  uint64_t p;
  uint64_t seed;
  uint64_t offset;
  uint64_t low;
  uint64_t range;
  uint32_t numel;
  uint32_t rank;
  float a;
  float b;
  uint32_t sizes[kRandomMaxRank];
  int32_t out_strides[kRandomMaxRank];
  int32_t p_strides[kRandomMaxRank];
};

// Fills params with the layout of out (and p); false when the shader
// cannot address it or the device lacks 8/16/64-bit shader types.
bool random_layout(const KernelContext& ctx, const Tensor& out, const Tensor* p,
                   RandomParams* params) {
  if (!vulkan_context_of(ctx).has_sized_shader_types()) return false;
  StridedLayout layout = p ? coalesce(out.sizes(), {&out.strides(), &p->strides()})
                           : coalesce(out.sizes(), {&out.strides()});
  if (!layout.fits(kRandomMaxRank)) return false;
  params->out = reinterpret_cast<uint64_t>(out.data_ptr());
  params->p = p ? reinterpret_cast<uint64_t>(p->data_ptr()) : 0;
  params->numel = static_cast<uint32_t>(layout.numel);
  params->rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    params->sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    params->out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    params->p_strides[d] = p ? static_cast<int32_t>(layout.strides[1][d]) : 0;
  }
  return true;
}

void set_state(RandomParams* params, const PhiloxState& state) {
  params->seed = state.seed;
  params->offset = state.offset;
}

bool is_float_exact(double v) { return static_cast<double>(static_cast<float>(v)) == v; }

// True when the shader's low + range * u, rounded once to f32, equals the
// CPU's float(low + range * double(u)) for every u = U * 2^-bits, U <
// 2^bits: low and range are floats, so the product is exact in double, and
// the sum is exact in double when its bits span at most 53 places (low and
// range within ~2^24 of each other in magnitude, or low = 0); then the CPU
// rounds once too.
bool uniform_rounds_as_cpu(double low, double range, int bits) {
  if (!is_float_exact(low) || !is_float_exact(range) || !std::isfinite(range) ||
      std::fabs(range) >= 0x1.0p100) {
    return false;
  }
  if (low == 0 || range == 0) return true;
  int range_exp = 0, low_exp = 0;
  std::frexp(range, &range_exp);  // |range| < 2^range_exp
  std::frexp(low, &low_exp);
  const int top = std::max(low_exp, range_exp) + 1;  // one more for a carry
  const int bottom = std::min(low_exp - 24, range_exp - 24 - bits);
  return top - bottom <= 53;
}

void uniform_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, double low,
                    double high) {
  if (out.numel() == 0) return;
  const double range = high - low;
  const bool f32 = out.dtype() == DType::kF32;
  const bool f16 = out.dtype() == DType::kF16;
  RandomParams params{};
  if (!(f32 || f16) || !uniform_rounds_as_cpu(low, range, f32 ? 24 : 11) ||
      !random_layout(ctx, out, nullptr, &params)) {
    run_on_host<kernels::Uniform>(ctx, out, state, low, high);
    return;
  }
  set_state(&params, state);
  params.a = static_cast<float>(low);
  params.b = static_cast<float>(range);
  const auto op = f32 ? RandomShaderOp::kUniformF32 : RandomShaderOp::kUniformF16;
  launch(ctx, "random", {static_cast<uint32_t>(op)}, params, (out.numel() + 3) / 4);
}

void normal_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, double mean,
                   double std) {
  if (out.numel() == 0) return;
  const bool f32 = out.dtype() == DType::kF32;
  RandomParams params{};
  if (!(f32 || out.dtype() == DType::kF16) || !random_layout(ctx, out, nullptr, &params)) {
    run_on_host<kernels::Normal>(ctx, out, state, mean, std);
    return;
  }
  set_state(&params, state);
  params.a = static_cast<float>(mean);
  params.b = static_cast<float>(std);
  const auto op = f32 ? RandomShaderOp::kNormalF32 : RandomShaderOp::kNormalF16;
  launch(ctx, "random", {static_cast<uint32_t>(op)}, params, out.numel());
}

void randint_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, int64_t low,
                    uint64_t range) {
  if (out.numel() == 0) return;
  RandomParams params{};
  if (!random_layout(ctx, out, nullptr, &params)) {
    run_on_host<kernels::Randint>(ctx, out, state, low, range);
    return;
  }
  set_state(&params, state);
  params.low = static_cast<uint64_t>(low);
  params.range = range;
  launch(ctx, "random",
         {static_cast<uint32_t>(RandomShaderOp::kRandint), static_cast<uint32_t>(out.dtype())},
         params, (out.numel() + 1) / 2);
}

void bernoulli_kernel(const KernelContext& ctx, Tensor& out, const Tensor& p, PhiloxState state) {
  if (out.numel() == 0) return;
  RandomParams params{};
  if (!is_floating(p.dtype()) || !random_layout(ctx, out, &p, &params)) {
    run_on_host<kernels::Bernoulli>(ctx, out, p, state);
    return;
  }
  set_state(&params, state);
  launch(ctx, "random",
         {static_cast<uint32_t>(RandomShaderOp::kBernoulli), static_cast<uint32_t>(out.dtype()),
          static_cast<uint32_t>(p.dtype())},
         params, (out.numel() + 1) / 2);
}

// dtype_access.glsl's codes are DType's values.
static_assert(static_cast<int>(DType::kBool) == 0 && static_cast<int>(DType::kI64) == 5 &&
              static_cast<int>(DType::kF16) == 6 && static_cast<int>(DType::kF64) == 9);

}  // namespace

void register_random_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Uniform>(type, uniform_kernel);
  registry.register_kernel<kernels::Normal>(type, normal_kernel);
  registry.register_kernel<kernels::Randint>(type, randint_kernel);
  registry.register_kernel<kernels::Bernoulli>(type, bernoulli_kernel);
}

}  // namespace tessera::vulkan
