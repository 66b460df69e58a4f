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
#include "runtime/ops/optimizer_coefficients.h"

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

// grad /= scale in place: GradScaler's unscaling, which PyTorch's kernels
// write back. A pass of its own after the update, so that the update loops
// stay branch-free: they divide by the scale themselves (by 1 without
// one) and use the unrounded quotient, as PyTorch's kernels do.
template <typename T, typename C>
void unscale(T* grad, int64_t n, double grad_scale) {
  const C scale = static_cast<C>(grad_scale);
  parallel_for_range(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) grad[i] = static_cast<T>(static_cast<C>(grad[i]) / scale);
  });
}

// The element loops: restrict-qualified and branch-free over the
// coefficients (runtime/ops/optimizer_coefficients.h), so GCC vectorizes
// them; loop-invariant choices are selects.

// kScaled: grad is divided by c.grad_div (GradScaler's scale); without a
// scale the division by 1 is left out (the same values, one vector
// division fewer per element in a loop that division and sqrt bound).
template <typename T, typename C, bool kAmsgrad, bool kScaled>
void adam_range(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                T* __restrict vmax, int64_t begin, int64_t end, const AdamCoefficients<C> c) {
  for (int64_t i = begin; i < end; ++i) {
    const C pi = static_cast<C>(p[i]);
    const C g_unscaled = kScaled ? static_cast<C>(g[i]) / c.grad_div : static_cast<C>(g[i]);
    const C gi = c.sign * g_unscaled + c.coupled_wd * pi;
    // lerp in PyTorch's two forms, exact at either end.
    const C mi0 = static_cast<C>(m[i]);
    const C from_start = mi0 + c.m_weight * (gi - mi0);
    const C from_end = gi - (gi - mi0) * (C(1) - c.m_weight);
    const C mi = c.lerp_from_start ? from_start : from_end;
    m[i] = static_cast<T>(mi);
    const C vi = static_cast<C>(v[i]) * c.beta2 + c.v_weight * gi * gi;
    v[i] = static_cast<T>(vi);
    C second = vi;
    if constexpr (kAmsgrad) {
      second = std::max(static_cast<C>(vmax[i]), vi);
      vmax[i] = static_cast<T>(second);
    }
    const C denom = std::sqrt(second) * c.inv_correction2_sqrt + c.eps;
    p[i] = static_cast<T>(pi * c.param_scale - c.step_size * mi / denom);
  }
}

void adam_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const int64_t n = param.numel();
    const auto c = adam_coefficients<C>(h, step, grad_scale);
    T *p = ptr<T>(param), *g = ptr<T>(grad), *m = ptr<T>(exp_avg), *v = ptr<T>(exp_avg_sq);
    T* vmax = h.amsgrad ? ptr<T>(max_exp_avg_sq) : nullptr;
    const bool scaled = c.grad_div != C(1);
    parallel_for_range(n, kElementwiseGrain / 4, [&](int64_t begin, int64_t end) {
      if (vmax != nullptr) {
        if (scaled) adam_range<T, C, true, true>(p, g, m, v, vmax, begin, end, c);
        else adam_range<T, C, true, false>(p, g, m, v, vmax, begin, end, c);
      } else if (scaled) {
        adam_range<T, C, false, true>(p, g, m, v, nullptr, begin, end, c);
      } else {
        adam_range<T, C, false, false>(p, g, m, v, nullptr, begin, end, c);
      }
    });
    if (grad_scale != 0.0) unscale<T, C>(g, n, grad_scale);
  });
}

// buf is null without momentum.
template <typename T, typename C>
void sgd_range(T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t begin,
               int64_t end, const SgdCoefficients<C> c) {
  if (buf == nullptr) {
    for (int64_t i = begin; i < end; ++i) {
      const C pi = static_cast<C>(p[i]);
      const C gi = c.sign * (static_cast<C>(g[i]) / c.grad_div) + pi * c.weight_decay;
      p[i] = static_cast<T>(pi - c.lr * gi);
    }
    return;
  }
  for (int64_t i = begin; i < end; ++i) {
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * (static_cast<C>(g[i]) / c.grad_div) + pi * c.weight_decay;
    const C later = static_cast<C>(buf[i]) * c.momentum + c.grad_weight * gi;
    const C bi = c.first_step ? gi : later;
    buf[i] = static_cast<T>(bi);
    const C with_nesterov = gi + c.momentum * bi;
    p[i] = static_cast<T>(pi - c.lr * (c.nesterov ? with_nesterov : bi));
  }
}

void sgd_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                     const SgdHyper& h, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const int64_t n = param.numel();
    const auto c = sgd_coefficients<C>(h, grad_scale);
    T *p = ptr<T>(param), *g = ptr<T>(grad);
    T* buf = h.momentum != 0.0 ? ptr<T>(momentum_buffer) : nullptr;
    parallel_for_range(n, kElementwiseGrain / 2, [&](int64_t begin, int64_t end) {
      sgd_range<T, C>(p, g, buf, begin, end, c);
    });
    if (grad_scale != 0.0) unscale<T, C>(g, n, grad_scale);
  });
}

template <typename T, typename C>
void adagrad_range(T* __restrict p, const T* __restrict g, T* __restrict sum, int64_t begin,
                   int64_t end, const AdagradCoefficients<C> c) {
  for (int64_t i = begin; i < end; ++i) {
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * (static_cast<C>(g[i]) / c.grad_div) + pi * c.weight_decay;
    const C si = static_cast<C>(sum[i]) + gi * gi;
    sum[i] = static_cast<T>(si);
    p[i] = static_cast<T>(pi - c.clr * gi / (std::sqrt(si) + c.eps));
  }
}

void adagrad_step_kernel(const KernelContext&, Tensor& param, Tensor& grad, Tensor& state_sum,
                         const AdagradHyper& h, double step, double grad_scale) {
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = opmath_t<T>;
    const int64_t n = param.numel();
    const auto c = adagrad_coefficients<C>(h, step, grad_scale);
    T *p = ptr<T>(param), *g = ptr<T>(grad), *sum = ptr<T>(state_sum);
    parallel_for_range(n, kElementwiseGrain / 2, [&](int64_t begin, int64_t end) {
      adagrad_range<T, C>(p, g, sum, begin, end, c);
    });
    if (grad_scale != 0.0) unscale<T, C>(g, n, grad_scale);
  });
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AdamStep>(type, &adam_step_kernel);
  registry.register_kernel<kernels::SgdStep>(type, &sgd_step_kernel);
  registry.register_kernel<kernels::AdagradStep>(type, &adagrad_step_kernel);
}

}  // namespace tessera::cpu
