// The fused optimizer steps (kernels::AdamStep, SgdStep, AdagradStep): one
// dispatch per parameter over its contiguous tensors, in place, with the
// CPU kernel's arithmetic (shaders/optimizer_step.glsl). The coefficients
// are computed here in double, as the CPU kernel does, and pushed as f32.
// f32 runs in optimizer_step_f32.comp (no optional shader features); f16
// and bf16 in optimizer_step.comp (math in f32, needs 8/16/64-bit shader
// types); f64, and 16-bit floats on a device without those types, stage
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

// The push constants of shaders/optimizer_step.glsl (Params); each
// optimizer sets the coefficients its update reads.
struct OptimizerStepParams {
  uint64_t param = 0;
  uint64_t grad = 0;
  uint64_t state[3] = {0, 0, 0};
  uint32_t numel = 0;
  uint32_t flags = 0;
  float grad_scale = 1;
  float sign = 1;
  float weight_decay = 0;
  float lr = 0;
  float eps = 0;
  float param_scale = 1;
  float beta2 = 0;
  float m_weight = 0;
  float v_weight = 0;
  float inv_correction2_sqrt = 0;
  float momentum = 0;
  float grad_weight = 0;
};
static_assert(sizeof(OptimizerStepParams) == 96, "must match Params in optimizer_step.glsl");

// Elements per dispatch: the shader's element offsets are 32-bit ints, so
// a larger parameter runs as several dispatches over consecutive ranges.
constexpr int64_t kMaxElementsPerDispatch = int64_t{1} << 30;

uint64_t address_of(const Tensor& t) {
  return t.defined() ? reinterpret_cast<uint64_t>(t.data_ptr()) : 0;
}

// Whether a shader takes the parameter's dtype on this device.
bool runs_natively(const KernelContext& ctx, DType dtype) {
  if (dtype == DType::kF32) return true;
  return (dtype == DType::kF16 || dtype == DType::kBF16) &&
         vulkan_context_of(ctx).has_sized_shader_types();
}

// Addresses of param, grad and the state tensors (undefined ones left 0),
// plus the unscaling shared by every optimizer.
OptimizerStepParams base_params(const Tensor& param, const Tensor& grad,
                                std::initializer_list<const Tensor*> state, double grad_scale) {
  OptimizerStepParams p;
  p.param = address_of(param);
  p.grad = address_of(grad);
  int k = 0;
  for (const Tensor* t : state) p.state[k++] = address_of(*t);
  if (grad_scale != 0.0) {
    p.flags |= kUnscale;
    p.grad_scale = static_cast<float>(grad_scale);
  }
  return p;
}

void launch_step(const KernelContext& ctx, Optimizer optimizer, bool with_state,
                 const Tensor& param, OptimizerStepParams p) {
  const int64_t numel = param.numel();
  const uint64_t itemsize = param.itemsize();
  const uint32_t optimizer_constant = static_cast<uint32_t>(optimizer);
  const uint32_t state_constant = with_state ? 1 : 0;
  for (int64_t start = 0; start < numel; start += kMaxElementsPerDispatch) {
    const int64_t count = std::min(kMaxElementsPerDispatch, numel - start);
    const uint64_t offset = static_cast<uint64_t>(start) * itemsize;
    OptimizerStepParams chunk = p;
    chunk.numel = static_cast<uint32_t>(count);
    chunk.param += offset;
    chunk.grad += offset;
    for (uint64_t& s : chunk.state) {
      if (s != 0) s += offset;
    }
    if (param.dtype() == DType::kF32) {
      launch(ctx, "optimizer_step_f32", {optimizer_constant, state_constant}, chunk, count);
    } else {
      const uint32_t kind = kind_constant(*element_kind(param.dtype()));
      launch(ctx, "optimizer_step", {optimizer_constant, state_constant, kind}, chunk, count);
    }
  }
}

void adam_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  if (param.numel() == 0) return;
  if (!runs_natively(ctx, param.dtype())) {
    run_on_host<kernels::AdamStep>(ctx, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, h,
                                   step, grad_scale);
    return;
  }
  OptimizerStepParams p =
      base_params(param, grad, {&exp_avg, &exp_avg_sq, &max_exp_avg_sq}, grad_scale);
  const auto c = adam_coefficients<float>(h, step, grad_scale);
  p.sign = c.sign;
  p.weight_decay = c.coupled_wd;
  p.param_scale = c.param_scale;
  p.beta2 = c.beta2;
  p.eps = c.eps;
  p.m_weight = c.m_weight;
  p.v_weight = c.v_weight;
  if (c.lerp_from_start) p.flags |= kLerpFromStart;
  p.lr = c.step_size;
  p.inv_correction2_sqrt = c.inv_correction2_sqrt;
  launch_step(ctx, Optimizer::kAdam, h.amsgrad, param, p);
}

void sgd_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                     const SgdHyper& h, double grad_scale) {
  if (param.numel() == 0) return;
  if (!runs_natively(ctx, param.dtype())) {
    run_on_host<kernels::SgdStep>(ctx, param, grad, momentum_buffer, h, grad_scale);
    return;
  }
  const bool with_buffer = h.momentum != 0.0;
  const Tensor no_buffer;
  OptimizerStepParams p =
      base_params(param, grad, {with_buffer ? &momentum_buffer : &no_buffer}, grad_scale);
  const auto c = sgd_coefficients<float>(h, grad_scale);
  p.sign = c.sign;
  p.lr = c.lr;
  p.weight_decay = c.weight_decay;
  p.momentum = c.momentum;
  p.grad_weight = c.grad_weight;
  if (c.first_step) p.flags |= kFirstStep;
  if (c.nesterov) p.flags |= kNesterov;
  launch_step(ctx, Optimizer::kSgd, with_buffer, param, p);
}

void adagrad_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& state_sum,
                         const AdagradHyper& h, double step, double grad_scale) {
  if (param.numel() == 0) return;
  if (!runs_natively(ctx, param.dtype())) {
    run_on_host<kernels::AdagradStep>(ctx, param, grad, state_sum, h, step, grad_scale);
    return;
  }
  OptimizerStepParams p = base_params(param, grad, {&state_sum}, grad_scale);
  const auto c = adagrad_coefficients<float>(h, step, grad_scale);
  p.sign = c.sign;
  p.weight_decay = c.weight_decay;
  p.eps = c.eps;
  p.lr = c.clr;
  launch_step(ctx, Optimizer::kAdagrad, false, param, p);
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AdamStep>(type, &adam_step_kernel);
  registry.register_kernel<kernels::SgdStep>(type, &sgd_step_kernel);
  registry.register_kernel<kernels::AdagradStep>(type, &adagrad_step_kernel);
}

}  // namespace tessera::vulkan
