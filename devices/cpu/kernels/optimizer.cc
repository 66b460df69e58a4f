// The fused optimizer steps (kernels::AdamStep, SgdStep, AdagradStep): one
// pass over each parameter's memory, split over threads, the math in float
// for 16-bit floats and in the parameter's type otherwise, in the order of
// PyTorch's fused CPU kernels (see runtime/ops/optimizer_fused.cc).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Runs body.template operator()<T>() for the parameter's floating dtype.
template <typename Body>
void for_floating(DType dtype, Body&& body) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) body(tag);
  });
}

template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// grad /= scale in place (GradScaler's unscaling, which PyTorch's kernels
// write back), as its own pass so that the update loops stay branch-free.
template <typename T, typename C>
void unscale(T* grad, int64_t n, double grad_scale) {
  const C scale = static_cast<C>(grad_scale);
  parallel_for_range(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) grad[i] = static_cast<T>(static_cast<C>(grad[i]) / scale);
  });
}

// The update loops below are uniform over the hyperparameters (a flag
// becomes a coefficient: the gradient's sign, a weight decay of 0, a
// parameter scale of 1), so the compiler vectorizes them.
template <typename T, bool kAmsgrad>
void adam_loop(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamHyper& h,
               double step) {
  using C = opmath_t<T>;
  const C sign = h.maximize ? C(-1) : C(1);
  const C coupled_wd = h.decoupled_weight_decay ? C(0) : static_cast<C>(h.weight_decay);
  const C param_scale =
      static_cast<C>(h.decoupled_weight_decay ? 1.0 - h.lr * h.weight_decay : 1.0);
  const C b2 = static_cast<C>(h.beta2), eps = static_cast<C>(h.eps);
  const C m_weight = static_cast<C>(1.0 - h.beta1), v_weight = static_cast<C>(1.0 - h.beta2);
  const bool lerp_from_start = m_weight < C(0.5);
  const C step_size = static_cast<C>(h.lr / (1.0 - std::pow(h.beta1, step)));
  const C inv_correction2_sqrt = static_cast<C>(1.0 / std::sqrt(1.0 - std::pow(h.beta2, step)));
  parallel_for_range(n, kElementwiseGrain / 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const C pi = static_cast<C>(p[i]);
      const C gi = sign * static_cast<C>(g[i]) + coupled_wd * pi;
      // lerp in PyTorch's two forms, exact at either end.
      const C mi0 = static_cast<C>(m[i]);
      const C mi = lerp_from_start ? mi0 + m_weight * (gi - mi0)
                                   : gi - (gi - mi0) * (C(1) - m_weight);
      m[i] = static_cast<T>(mi);
      const C vi = static_cast<C>(v[i]) * b2 + v_weight * gi * gi;
      v[i] = static_cast<T>(vi);
      C second = vi;
      if constexpr (kAmsgrad) {
        second = std::max(static_cast<C>(vmax[i]), vi);
        vmax[i] = static_cast<T>(second);
      }
      const C denom = std::sqrt(second) * inv_correction2_sqrt + eps;
      p[i] = static_cast<T>(pi * param_scale - step_size * mi / denom);
    }
  });
}

void adam_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = param.numel();
    if (grad_scale != 0.0) unscale<T, opmath_t<T>>(ptr<T>(grad), n, grad_scale);
    if (h.amsgrad) {
      adam_loop<T, true>(ptr<T>(param), ptr<T>(grad), ptr<T>(exp_avg), ptr<T>(exp_avg_sq),
                         ptr<T>(max_exp_avg_sq), n, h, step);
    } else {
      adam_loop<T, false>(ptr<T>(param), ptr<T>(grad), ptr<T>(exp_avg), ptr<T>(exp_avg_sq),
                          nullptr, n, h, step);
    }
  });
}

void sgd_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                     const SgdHyper& h, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const int64_t n = param.numel();
    if (grad_scale != 0.0) unscale<T, C>(ptr<T>(grad), n, grad_scale);
    T *p = ptr<T>(param), *g = ptr<T>(grad);
    T* buf = h.momentum != 0.0 ? ptr<T>(momentum_buffer) : nullptr;
    const C sign = h.maximize ? C(-1) : C(1);
    const C lr = static_cast<C>(h.lr), wd = static_cast<C>(h.weight_decay);
    const C momentum = static_cast<C>(h.momentum);
    const C grad_weight = static_cast<C>(1.0 - h.dampening);
    const bool first = h.is_first_step, nesterov = h.nesterov;
    parallel_for_range(n, kElementwiseGrain / 2, [&](int64_t begin, int64_t end) {
      if (buf == nullptr) {
        for (int64_t i = begin; i < end; ++i) {
          const C pi = static_cast<C>(p[i]);
          p[i] = static_cast<T>(pi - lr * (sign * static_cast<C>(g[i]) + pi * wd));
        }
        return;
      }
      for (int64_t i = begin; i < end; ++i) {
        const C pi = static_cast<C>(p[i]);
        const C gi = sign * static_cast<C>(g[i]) + pi * wd;
        const C bi = first ? gi : static_cast<C>(buf[i]) * momentum + grad_weight * gi;
        buf[i] = static_cast<T>(bi);
        p[i] = static_cast<T>(pi - lr * (nesterov ? gi + momentum * bi : bi));
      }
    });
  });
}

void adagrad_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& state_sum,
                         const AdagradHyper& h, double step, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const int64_t n = param.numel();
    if (grad_scale != 0.0) unscale<T, C>(ptr<T>(grad), n, grad_scale);
    T *p = ptr<T>(param), *g = ptr<T>(grad), *sum = ptr<T>(state_sum);
    const C sign = h.maximize ? C(-1) : C(1);
    const C wd = static_cast<C>(h.weight_decay), eps = static_cast<C>(h.eps);
    const C clr = static_cast<C>(h.lr / (1.0 + (step - 1.0) * h.lr_decay));
    parallel_for_range(n, kElementwiseGrain / 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const C pi = static_cast<C>(p[i]);
        const C gi = sign * static_cast<C>(g[i]) + pi * wd;
        const C si = static_cast<C>(sum[i]) + gi * gi;
        sum[i] = static_cast<T>(si);
        p[i] = static_cast<T>(pi - clr * gi / (std::sqrt(si) + eps));
      }
    });
  });
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AdamStep>(type, &adam_step_kernel);
  registry.register_kernel<kernels::SgdStep>(type, &sgd_step_kernel);
  registry.register_kernel<kernels::AdagradStep>(type, &adagrad_step_kernel);
}

}  // namespace tessera::cpu
