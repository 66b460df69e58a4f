// The fused optimizer steps on the GPU (kernels::AdamStep, SgdStep,
// AdagradStep): one grid-stride pass over each parameter's contiguous
// memory, the math in float for 16-bit floats and in the parameter's type
// otherwise, in the order of PyTorch's fused kernels (see
// runtime/ops/optimizer_fused.cc), over the per-call coefficients of
// runtime/ops/optimizer_coefficients.h. With a grad_scale, the unscaled
// gradient is written back rounded and used unrounded, as PyTorch's.
#include <cmath>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/optimizer_coefficients.h"

namespace tessera::cuda {
namespace {

template <typename T, typename C>
__device__ C load_grad(T* g, int64_t i, C grad_div, bool unscale) {
  C grad = static_cast<C>(g[i]);
  if (unscale) {
    grad = grad / grad_div;
    g[i] = static_cast<T>(grad);
  }
  return grad;
}

template <typename T, typename C, bool kAmsgrad>
__global__ void adam_step(T* p, T* g, T* m, T* v, T* vmax, int64_t n, AdamCoefficients<C> c,
                          bool unscale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * load_grad(g, i, c.grad_div, unscale) + c.coupled_wd * pi;
    const C mi0 = static_cast<C>(m[i]);
    const C mi = c.lerp_from_start ? mi0 + c.m_weight * (gi - mi0)
                                   : gi - (gi - mi0) * (C(1) - c.m_weight);
    m[i] = static_cast<T>(mi);
    const C vi = static_cast<C>(v[i]) * c.beta2 + c.v_weight * gi * gi;
    v[i] = static_cast<T>(vi);
    C second = vi;
    if constexpr (kAmsgrad) {
      const C old = static_cast<C>(vmax[i]);
      second = old < vi ? vi : old;  // std::max's NaN rule, as the CPU kernel
      vmax[i] = static_cast<T>(second);
    }
    const C denom = sqrt(second) * c.inv_correction2_sqrt + c.eps;
    p[i] = static_cast<T>(pi * c.param_scale - c.step_size * mi / denom);
  }
}

template <typename T, typename C>
__global__ void sgd_step(T* p, T* g, T* buf, int64_t n, SgdCoefficients<C> c, bool unscale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const C pi = static_cast<C>(p[i]);
    C gi = c.sign * load_grad(g, i, c.grad_div, unscale) + pi * c.weight_decay;
    if (buf != nullptr) {
      const C bi = c.first_step ? gi : static_cast<C>(buf[i]) * c.momentum + c.grad_weight * gi;
      buf[i] = static_cast<T>(bi);
      gi = c.nesterov ? gi + c.momentum * bi : bi;
    }
    p[i] = static_cast<T>(pi - c.lr * gi);
  }
}

template <typename T, typename C>
__global__ void adagrad_step(T* p, T* g, T* sum, int64_t n, AdagradCoefficients<C> c,
                             bool unscale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const C pi = static_cast<C>(p[i]);
    const C gi = c.sign * load_grad(g, i, c.grad_div, unscale) + pi * c.weight_decay;
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

void adam_step_kernel(const KernelContext& ctx, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& h,
                      double step, double grad_scale) {
  const int64_t n = param.numel();
  if (n == 0) return;
  for_floating(param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const auto c = adam_coefficients<C>(h, step, grad_scale);
    const bool unscale = grad_scale != 0.0;
    T *p = ptr<T>(param), *g = ptr<T>(grad), *m = ptr<T>(exp_avg), *v = ptr<T>(exp_avg_sq);
    if (h.amsgrad) {
      adam_step<T, C, true><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          p, g, m, v, ptr<T>(max_exp_avg_sq), n, c, unscale);
    } else {
      adam_step<T, C, false><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(p, g, m, v, nullptr,
                                                                              n, c, unscale);
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
    T* buf = h.momentum != 0.0 ? ptr<T>(momentum_buffer) : nullptr;
    sgd_step<T, C><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
        ptr<T>(param), ptr<T>(grad), buf, n, sgd_coefficients<C>(h, grad_scale),
        grad_scale != 0.0);
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
    adagrad_step<T, C><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
        ptr<T>(param), ptr<T>(grad), ptr<T>(state_sum), n,
        adagrad_coefficients<C>(h, step, grad_scale), grad_scale != 0.0);
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
