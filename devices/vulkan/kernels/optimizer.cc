// The fused optimizer steps (kernels::AdamStep, SgdStep, AdagradStep): one
// dispatch per parameter over its contiguous tensors, in place, with the
// CPU kernel's arithmetic (shaders/optimizer_step.glsl). The coefficients
// are computed here in double, as the CPU kernel does, and pushed in the
// compute type: f32 for f32 (optimizer_step_f32.comp, no optional shader
// features) and for f16 and bf16 (optimizer_step.comp, needs 8/16/64-bit
// shader types); double for f64 (optimizer_step_f64.comp, needs
// shaderFloat64). A dtype whose shader the device cannot run stages
// through the host.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/optimizer_coefficients.h"

namespace tessera::vulkan {
namespace {

// kOptimizer in shaders/optimizer_step.glsl.
enum class Optimizer : uint32_t { kAdam = 0, kSgd = 1, kAdagrad = 2 };

// The flag bits of shaders/optimizer_step.glsl.
enum StepFlag : uint32_t {
  kUnscale = 1,
  kLerpFromStart = 2,
  kFirstStep = 4,
  kNesterov = 8,
};

// The coefficient slots of shaders/optimizer_step.glsl: ten, so that the
// double Params fits the 128 bytes of push constants every device has;
// SGD's two reuse slots only Adam reads.
enum Coefficient : int {
  kGradScale = 0,
  kSign = 1,
  kWeightDecay = 2,
  kLr = 3,
  kEps = 4,
  kParamScale = 5,
  kBeta2 = 6,
  kMWeight = 7,
  kVWeight = 8,
  kInvCorrection2Sqrt = 9,
  kMomentum = kBeta2,
  kGradWeight = kMWeight,
  kCoefficients = 10,
};

// The push constants of shaders/optimizer_step.glsl (Params) in compute
// type R; each optimizer sets the coefficients its update reads.
template <typename R>
struct OptimizerStepParams {
  uint64_t param = 0;
  uint64_t grad = 0;
  uint64_t state[3] = {0, 0, 0};
  uint32_t numel = 0;
  uint32_t flags = 0;
  R c[kCoefficients] = {};
};
static_assert(sizeof(OptimizerStepParams<float>) == 88, "must match Params in optimizer_step.glsl");
static_assert(sizeof(OptimizerStepParams<double>) == 128,
              "must match Params in optimizer_step.glsl, and fit 128 bytes of push constants");

// Elements per dispatch: the shader's element offsets are 32-bit ints, so
// a larger parameter runs as several dispatches over consecutive ranges.
constexpr int64_t kMaxElementsPerDispatch = int64_t{1} << 30;

uint64_t address_of(const Tensor& t) {
  return t.defined() ? reinterpret_cast<uint64_t>(t.data_ptr()) : 0;
}

// The compute type of a dtype's shader on this device: f32 (f32, and f16
// and bf16 where the device has 8/16-bit types), f64 (where it has
// shaderFloat64), or none (the host runs the step).
enum class ComputeType { kNone, kF32, kF64 };

ComputeType compute_type(const KernelContext& ctx, DType dtype) {
  const VulkanContext& vk = vulkan_context_of(ctx);
  switch (dtype) {
    case DType::kF32: return ComputeType::kF32;
    case DType::kF16:
    case DType::kBF16: return vk.has_sized_shader_types() ? ComputeType::kF32 : ComputeType::kNone;
    case DType::kF64: return vk.has_f64_shaders() ? ComputeType::kF64 : ComputeType::kNone;
    default: return ComputeType::kNone;
  }
}

// Addresses of param, grad and the state tensors (undefined ones left 0),
// plus the unscaling shared by every optimizer (grad_div: the grad_scale,
// or 1 without one).
template <typename R>
OptimizerStepParams<R> base_params(const Tensor& param, const Tensor& grad,
                                   std::initializer_list<const Tensor*> state, double grad_scale,
                                   R grad_div) {
  OptimizerStepParams<R> p;
  p.param = address_of(param);
  p.grad = address_of(grad);
  int k = 0;
  for (const Tensor* t : state) p.state[k++] = address_of(*t);
  if (grad_scale != 0.0) p.flags |= kUnscale;
  p.c[kGradScale] = grad_div;
  return p;
}

template <typename R>
void launch_step(const KernelContext& ctx, Optimizer optimizer, bool with_state,
                 const Tensor& param, OptimizerStepParams<R> p) {
  const int64_t numel = param.numel();
  const uint64_t itemsize = param.itemsize();
  const uint32_t optimizer_constant = static_cast<uint32_t>(optimizer);
  const uint32_t state_constant = with_state ? 1 : 0;
  for (int64_t start = 0; start < numel; start += kMaxElementsPerDispatch) {
    const int64_t count = std::min(kMaxElementsPerDispatch, numel - start);
    const uint64_t offset = static_cast<uint64_t>(start) * itemsize;
    OptimizerStepParams<R> chunk = p;
    chunk.numel = static_cast<uint32_t>(count);
    chunk.param += offset;
    chunk.grad += offset;
    for (uint64_t& s : chunk.state) {
      if (s != 0) s += offset;
    }
    if (param.dtype() == DType::kF64) {
      launch(ctx, "optimizer_step_f64", {optimizer_constant, state_constant}, chunk, count);
    } else if (param.dtype() == DType::kF32) {
      launch(ctx, "optimizer_step_f32", {optimizer_constant, state_constant}, chunk, count);
    } else {
      const uint32_t kind = kind_constant(*element_kind(param.dtype()));
      launch(ctx, "optimizer_step", {optimizer_constant, state_constant, kind}, chunk, count);
    }
  }
}

template <typename R>
void launch_adam(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& exp_avg,
                 Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h, double step,
                 double grad_scale) {
  const auto c = adam_coefficients<R>(h, step, grad_scale);
  auto p = base_params<R>(param, grad, {&exp_avg, &exp_avg_sq, &max_exp_avg_sq}, grad_scale,
                          c.grad_div);
  p.c[kSign] = c.sign;
  p.c[kWeightDecay] = c.coupled_wd;
  p.c[kParamScale] = c.param_scale;
  p.c[kBeta2] = c.beta2;
  p.c[kEps] = c.eps;
  p.c[kMWeight] = c.m_weight;
  p.c[kVWeight] = c.v_weight;
  p.c[kLr] = c.step_size;
  p.c[kInvCorrection2Sqrt] = c.inv_correction2_sqrt;
  if (c.lerp_from_start) p.flags |= kLerpFromStart;
  launch_step(ctx, Optimizer::kAdam, h.amsgrad, param, p);
}

void adam_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  if (param.numel() == 0) return;
  switch (compute_type(ctx, param.dtype())) {
    case ComputeType::kF32:
      return launch_adam<float>(ctx, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, h, step,
                                grad_scale);
    case ComputeType::kF64:
      return launch_adam<double>(ctx, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, h, step,
                                 grad_scale);
    case ComputeType::kNone:
      return run_on_host<kernels::AdamStep>(ctx, param, grad, exp_avg, exp_avg_sq,
                                            max_exp_avg_sq, h, step, grad_scale);
  }
}

template <typename R>
void launch_sgd(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                const SgdHyper& h, double grad_scale) {
  const bool with_buffer = h.momentum != 0.0;
  const Tensor no_buffer;
  const auto c = sgd_coefficients<R>(h, grad_scale);
  auto p = base_params<R>(param, grad, {with_buffer ? &momentum_buffer : &no_buffer},
                          grad_scale, c.grad_div);
  p.c[kSign] = c.sign;
  p.c[kLr] = c.lr;
  p.c[kWeightDecay] = c.weight_decay;
  p.c[kMomentum] = c.momentum;
  p.c[kGradWeight] = c.grad_weight;
  if (c.first_step) p.flags |= kFirstStep;
  if (c.nesterov) p.flags |= kNesterov;
  launch_step(ctx, Optimizer::kSgd, with_buffer, param, p);
}

void sgd_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                     const SgdHyper& h, double grad_scale) {
  if (param.numel() == 0) return;
  switch (compute_type(ctx, param.dtype())) {
    case ComputeType::kF32: return launch_sgd<float>(ctx, param, grad, momentum_buffer, h, grad_scale);
    case ComputeType::kF64:
      return launch_sgd<double>(ctx, param, grad, momentum_buffer, h, grad_scale);
    case ComputeType::kNone:
      return run_on_host<kernels::SgdStep>(ctx, param, grad, momentum_buffer, h, grad_scale);
  }
}

template <typename R>
void launch_adagrad(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& state_sum,
                    const AdagradHyper& h, double step, double grad_scale) {
  const auto c = adagrad_coefficients<R>(h, step, grad_scale);
  auto p = base_params<R>(param, grad, {&state_sum}, grad_scale, c.grad_div);
  p.c[kSign] = c.sign;
  p.c[kWeightDecay] = c.weight_decay;
  p.c[kEps] = c.eps;
  p.c[kLr] = c.clr;
  launch_step(ctx, Optimizer::kAdagrad, false, param, p);
}

void adagrad_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& state_sum,
                         const AdagradHyper& h, double step, double grad_scale) {
  if (param.numel() == 0) return;
  switch (compute_type(ctx, param.dtype())) {
    case ComputeType::kF32:
      return launch_adagrad<float>(ctx, param, grad, state_sum, h, step, grad_scale);
    case ComputeType::kF64:
      return launch_adagrad<double>(ctx, param, grad, state_sum, h, step, grad_scale);
    case ComputeType::kNone:
      return run_on_host<kernels::AdagradStep>(ctx, param, grad, state_sum, h, step, grad_scale);
  }
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AdamStep>(type, &adam_step_kernel);
  registry.register_kernel<kernels::SgdStep>(type, &sgd_step_kernel);
  registry.register_kernel<kernels::AdagradStep>(type, &adagrad_step_kernel);
}

}  // namespace tessera::vulkan
