// The fused optimizer steps on the GPU (kernels::AdamStep, SgdStep,
// AdagradStep): one grid-stride pass over each parameter's contiguous
// memory, the math in float for 16-bit floats and in the parameter's type
// otherwise, in the order of PyTorch's fused kernels (see
// runtime/ops/optimizer_fused.cc). The hyperparameters become per-launch
// coefficients (a flag turns into a sign, a zero decay, a unit scale), so
// each kernel has one branch-free body.
#include <cmath>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

template <typename C>
struct AdamCoefficients {
  C sign, coupled_wd, param_scale, b2, eps, m_weight, v_weight, step_size, inv_correction2_sqrt;
  C grad_scale;  // 1 without one
  bool unscale, lerp_from_start;
};

template <typename T, typename C, bool kAmsgrad>
__global__ void adam_step(T* p, T* g, T* m, T* v, T* vmax, int64_t n, AdamCoefficients<C> c) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    C grad = static_cast<C>(g[i]);
    if (c.unscale) {
      // As PyTorch's fused kernels: written back rounded, used unrounded.
      grad = grad / c.grad_scale;
      g[i] = static_cast<T>(grad);
    }
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * grad + c.coupled_wd * pi;
    const C mi0 = static_cast<C>(m[i]);
    const C mi = c.lerp_from_start ? mi0 + c.m_weight * (gi - mi0)
                                   : gi - (gi - mi0) * (C(1) - c.m_weight);
    m[i] = static_cast<T>(mi);
    const C vi = static_cast<C>(v[i]) * c.b2 + c.v_weight * gi * gi;
    v[i] = static_cast<T>(vi);
    C second = vi;
    if constexpr (kAmsgrad) {
      second = max(static_cast<C>(vmax[i]), vi);
      vmax[i] = static_cast<T>(second);
    }
    const C denom = sqrt(second) * c.inv_correction2_sqrt + c.eps;
    p[i] = static_cast<T>(pi * c.param_scale - c.step_size * mi / denom);
  }
}

template <typename C>
struct SgdCoefficients {
  C sign, lr, wd, momentum, grad_weight, grad_scale;
  bool unscale, first, nesterov;
};

template <typename T, typename C>
__global__ void sgd_step(T* p, T* g, T* buf, int64_t n, SgdCoefficients<C> c) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    C grad = static_cast<C>(g[i]);
    if (c.unscale) {
      // As PyTorch's fused kernels: written back rounded, used unrounded.
      grad = grad / c.grad_scale;
      g[i] = static_cast<T>(grad);
    }
    const C pi = static_cast<C>(p[i]);
    C gi = c.sign * grad + pi * c.wd;
    if (buf != nullptr) {
      const C bi = c.first ? gi : static_cast<C>(buf[i]) * c.momentum + c.grad_weight * gi;
      buf[i] = static_cast<T>(bi);
      gi = c.nesterov ? gi + c.momentum * bi : bi;
    }
    p[i] = static_cast<T>(pi - c.lr * gi);
  }
}

template <typename C>
struct AdagradCoefficients {
  C sign, wd, eps, clr, grad_scale;
  bool unscale;
};

template <typename T, typename C>
__global__ void adagrad_step(T* p, T* g, T* sum, int64_t n, AdagradCoefficients<C> c) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    C grad = static_cast<C>(g[i]);
    if (c.unscale) {
      // As PyTorch's fused kernels: written back rounded, used unrounded.
      grad = grad / c.grad_scale;
      g[i] = static_cast<T>(grad);
    }
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * grad + pi * c.wd;
    const C si = static_cast<C>(sum[i]) + gi * gi;
    sum[i] = static_cast<T>(si);
    p[i] = static_cast<T>(pi - c.clr * gi / (sqrt(si) + c.eps));
  }
}

template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// Runs body(tag) for the parameter's floating dtype.
template <typename Body>
void for_floating(DType dtype, Body&& body) {
  dispatch_cuda_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) body(tag);
  });
}

template <typename C>
C scale_or_one(double grad_scale) {
  return grad_scale != 0.0 ? static_cast<C>(grad_scale) : C(1);
}

void adam_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  const int64_t n = param.numel();
  if (n == 0) return;
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    AdamCoefficients<C> c;
    c.sign = h.maximize ? C(-1) : C(1);
    c.coupled_wd = h.decoupled_weight_decay ? C(0) : static_cast<C>(h.weight_decay);
    c.param_scale = static_cast<C>(h.decoupled_weight_decay ? 1.0 - h.lr * h.weight_decay : 1.0);
    c.b2 = static_cast<C>(h.beta2);
    c.eps = static_cast<C>(h.eps);
    c.m_weight = static_cast<C>(1.0 - h.beta1);
    c.v_weight = static_cast<C>(1.0 - h.beta2);
    c.step_size = static_cast<C>(h.lr / (1.0 - std::pow(h.beta1, step)));
    c.inv_correction2_sqrt = static_cast<C>(1.0 / std::sqrt(1.0 - std::pow(h.beta2, step)));
    c.grad_scale = scale_or_one<C>(grad_scale);
    c.unscale = grad_scale != 0.0;
    c.lerp_from_start = c.m_weight < C(0.5);
    auto* p = ptr<T>(param);
    auto* g = ptr<T>(grad);
    auto* m = ptr<T>(exp_avg);
    auto* v = ptr<T>(exp_avg_sq);
    if (h.amsgrad) {
      adam_step<T, C, true><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          p, g, m, v, ptr<T>(max_exp_avg_sq), n, c);
    } else {
      adam_step<T, C, false><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(p, g, m, v, nullptr,
                                                                              n, c);
    }
    after_launch(ctx, "adam_step");
  });
}

void sgd_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                     const SgdHyper& h, double grad_scale) {
  const int64_t n = param.numel();
  if (n == 0) return;
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    SgdCoefficients<C> c;
    c.sign = h.maximize ? C(-1) : C(1);
    c.lr = static_cast<C>(h.lr);
    c.wd = static_cast<C>(h.weight_decay);
    c.momentum = static_cast<C>(h.momentum);
    c.grad_weight = static_cast<C>(1.0 - h.dampening);
    c.grad_scale = scale_or_one<C>(grad_scale);
    c.unscale = grad_scale != 0.0;
    c.first = h.is_first_step;
    c.nesterov = h.nesterov;
    T* buf = h.momentum != 0.0 ? ptr<T>(momentum_buffer) : nullptr;
    sgd_step<T, C><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(ptr<T>(param), ptr<T>(grad),
                                                                      buf, n, c);
    after_launch(ctx, "sgd_step");
  });
}

void adagrad_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& state_sum,
                         const AdagradHyper& h, double step, double grad_scale) {
  const int64_t n = param.numel();
  if (n == 0) return;
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    AdagradCoefficients<C> c;
    c.sign = h.maximize ? C(-1) : C(1);
    c.wd = static_cast<C>(h.weight_decay);
    c.eps = static_cast<C>(h.eps);
    c.clr = static_cast<C>(h.lr / (1.0 + (step - 1.0) * h.lr_decay));
    c.grad_scale = scale_or_one<C>(grad_scale);
    c.unscale = grad_scale != 0.0;
    adagrad_step<T, C><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
        ptr<T>(param), ptr<T>(grad), ptr<T>(state_sum), n, c);
    after_launch(ctx, "adagrad_step");
  });
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AdamStep>(type, &adam_step_kernel);
  registry.register_kernel<kernels::SgdStep>(type, &sgd_step_kernel);
  registry.register_kernel<kernels::AdagradStep>(type, &adagrad_step_kernel);
}

}  // namespace tessera::cuda
