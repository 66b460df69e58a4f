// max_pool2d (with indices) and avg_pool2d with their backward, with the
// CPU device's windows, NaN rule and divisors. A thread per output element
// forward. Backward without atomics, deterministically:
//  - avg_pool2d gathers: a thread per input element sums the outputs whose
//    window covers it;
//  - max_pool2d_with_indices_backward knows no window (only the indices),
//    so it sorts (plane, index) keys stably (index_common.cuh) and sums
//    each pixel's gradients in output order, as the CPU device does.
#include <limits>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

struct Plane {
  int64_t n, c, h, w;  // input sizes
  int64_t oh, ow;      // output sizes
};

struct Window {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

struct Strides4 {
  int64_t n, c, y, x;
};

Strides4 strides_of(const Tensor& t) {
  return {t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
}

__device__ __forceinline__ void split_nchw(int64_t e, int64_t C, int64_t H, int64_t W, int64_t& n,
                                           int64_t& c, int64_t& y, int64_t& x) {
  x = e % W;
  y = (e / W) % H;
  c = (e / (W * H)) % C;
  n = e / (W * H * C);
}

template <typename T>
__device__ __forceinline__ bool nan_of(T v) {
  if constexpr (is_float_v<T>) return convert<float>(v) != convert<float>(v);
  else return false;
}

template <typename T>
__global__ void max_pool_gpu(T* out, Strides4 so, int64_t* idx, Strides4 si, const T* in,
                             Strides4 sx, Plane p, Window k) {
  using A = compute_t<T>;
  const int64_t total = p.n * p.c * p.oh * p.ow;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, oy, ox;
    split_nchw(e, p.c, p.oh, p.ow, n, c, oy, ox);
    int64_t y0 = oy * k.sh - k.ph;
    const int64_t y1 = std::min<int64_t>(y0 + (k.kh - 1) * k.dh + 1, p.h);
    while (y0 < 0) y0 += k.dh;
    int64_t x0 = ox * k.sw - k.pw;
    const int64_t x1 = std::min<int64_t>(x0 + (k.kw - 1) * k.dw + 1, p.w);
    while (x0 < 0) x0 += k.dw;
    A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    int64_t best_i = y0 * p.w + x0;
    const T* plane = in + n * sx.n + c * sx.c;
    for (int64_t iy = y0; iy < y1; iy += k.dh) {
      for (int64_t ix = x0; ix < x1; ix += k.dw) {
        const T v = plane[iy * sx.y + ix * sx.x];
        const A a = convert<A>(v);
        if (a > best || nan_of(v)) {  // NaN wins, as PyTorch
          best = a;
          best_i = iy * p.w + ix;
        }
      }
    }
    out[n * so.n + c * so.c + oy * so.y + ox * so.x] = convert<T>(best);
    idx[n * si.n + c * si.c + oy * si.y + ox * si.x] = best_i;
  }
}

// key[i] = the pixel (plane * H * W + index) that output i (row-major)
// took its maximum from.
__global__ void max_pool_keys_gpu(int64_t* keys, const int64_t* idx, Strides4 si, Plane p) {
  const int64_t total = p.n * p.c * p.oh * p.ow;
  for (int64_t e = grid_index(); e < total; e += grid_step()) {
    int64_t n, c, oy, ox;
    split_nchw(e, p.c, p.oh, p.ow, n, c, oy, ox);
    keys[e] = (n * p.c + c) * (p.h * p.w) + idx[n * si.n + c * si.c + oy * si.y + ox * si.x];
  }
}

// The first entry of each run of equal pixels sums the run's gradients in
// output order into that pixel of a zeroed contiguous grad_input.
template <typename T>
__global__ void max_pool_sum_runs_gpu(T* gi, const uint64_t* keys, const int64_t* outputs,
                                      int64_t n, const T* go, Strides4 sgo, Plane p) {
  using A = std::conditional_t<std::is_same_v<T, bool>, int64_t, compute_t<T>>;
  for (int64_t e = grid_index(); e < n; e += grid_step()) {
    if (!first_of_run(keys, e)) continue;
    const int64_t end = run_end(keys, e, n);
    A sum = 0;
    for (int64_t r = e; r < end; ++r) {
      int64_t nn, c, oy, ox;
      split_nchw(outputs[r], p.c, p.oh, p.ow, nn, c, oy, ox);
      sum += convert<A>(go[nn * sgo.n + c * sgo.c + oy * sgo.y + ox * sgo.x]);
    }
    gi[keys[e]] = convert<T>(sum);
  }
}

struct AvgParams {
  bool count_include_pad;
  int64_t divisor_override;
};

// The clipped window of output (oy, ox) and its divisor (the CPU device's
// avg_window).
__device__ __forceinline__ void avg_window(int64_t oy, int64_t ox, const Plane& p, const Window& k,
                                           const AvgParams& a, int64_t& y0, int64_t& y1, int64_t& x0,
                                           int64_t& x1, int64_t& divisor) {
  y0 = oy * k.sh - k.ph;
  x0 = ox * k.sw - k.pw;
  y1 = std::min<int64_t>(y0 + k.kh, p.h + k.ph);
  x1 = std::min<int64_t>(x0 + k.kw, p.w + k.pw);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, int64_t{0});
  x0 = std::max<int64_t>(x0, int64_t{0});
  y1 = std::min<int64_t>(y1, p.h);
  x1 = std::min<int64_t>(x1, p.w);
  divisor = a.divisor_override != 0 ? a.divisor_override
            : a.count_include_pad   ? padded
                                    : (y1 - y0) * (x1 - x0);
}

template <typename T>
__global__ void avg_pool_gpu(T* out, Strides4 so, const T* in, Strides4 sx, Plane p, Window k,
                             AvgParams a) {
  using A = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;
  const int64_t total = p.n * p.c * p.oh * p.ow;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, oy, ox;
    split_nchw(e, p.c, p.oh, p.ow, n, c, oy, ox);
    int64_t y0, y1, x0, x1, divisor;
    avg_window(oy, ox, p, k, a, y0, y1, x0, x1, divisor);
    T result = convert<T>(0);
    if (y0 < y1 && x0 < x1) {
      const T* plane = in + n * sx.n + c * sx.c;
      A sum = 0;
      for (int64_t iy = y0; iy < y1; ++iy) {
        for (int64_t ix = x0; ix < x1; ++ix) sum += convert<A>(plane[iy * sx.y + ix * sx.x]);
      }
      result = convert<T>(sum / static_cast<A>(divisor));
    }
    out[n * so.n + c * so.c + oy * so.y + ox * so.x] = result;
  }
}

template <typename T>
__global__ void avg_pool_backward_gpu(T* gi, Strides4 sgi, const T* go, Strides4 sgo, Plane p,
                                      Window k, AvgParams a) {
  using A = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;
  const int64_t total = p.n * p.c * p.h * p.w;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, iy, ix;
    split_nchw(e, p.c, p.h, p.w, n, c, iy, ix);
    // Outputs whose window [o*s - pad, o*s - pad + k) holds this pixel.
    const int64_t oy_lo = std::max<int64_t>(int64_t{0}, (iy + k.ph - k.kh + k.sh) / k.sh);
    const int64_t oy_hi = std::min<int64_t>(p.oh - 1, (iy + k.ph) / k.sh);
    const int64_t ox_lo = std::max<int64_t>(int64_t{0}, (ix + k.pw - k.kw + k.sw) / k.sw);
    const int64_t ox_hi = std::min<int64_t>(p.ow - 1, (ix + k.pw) / k.sw);
    A sum = 0;
    for (int64_t oy = oy_lo; oy <= oy_hi; ++oy) {
      for (int64_t ox = ox_lo; ox <= ox_hi; ++ox) {
        int64_t y0, y1, x0, x1, divisor;
        avg_window(oy, ox, p, k, a, y0, y1, x0, x1, divisor);
        if (iy < y0 || iy >= y1 || ix < x0 || ix >= x1) continue;
        sum += convert<A>(go[n * sgo.n + c * sgo.c + oy * sgo.y + ox * sgo.x]) / static_cast<A>(divisor);
      }
    }
    gi[n * sgi.n + c * sgi.c + iy * sgi.y + ix * sgi.x] = convert<T>(sum);
  }
}

Plane plane_of(const Tensor& input, const Tensor& output) {
  return {input.size(0), input.size(1), input.size(2), input.size(3), output.size(2), output.size(3)};
}

Window window_of(const Shape& kernel, const Shape& stride, const Shape& padding, const Shape& dilation) {
  return {kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]};
}

void check_4d(const char* op, const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.dim() == 4 && b.dim() == 4, ValueError, op, ": the cuda kernel needs 4-D tensors, got ",
                describe(a), " and ", describe(b));
}

void max_pool2d_kernel(const KernelContext& ctx, Tensor& out, Tensor& indices, const Tensor& input,
                       const Shape& kernel, const Shape& stride, const Shape& padding,
                       const Shape& dilation) {
  check_4d("max_pool2d", input, out);
  TESSERA_CHECK(input.dtype() != DType::kBool, TypeError, "max_pool2d: not supported for bool, got ",
                describe(input));
  if (out.numel() == 0) return;
  const Plane p = plane_of(input, out);
  dispatch_cuda_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      max_pool_gpu<T><<<grid_for(out.numel()), kBlockSize, 0, stream_of(ctx)>>>(
          out.data<T>(), strides_of(out), indices.data<int64_t>(), strides_of(indices),
          input.data<T>(), strides_of(input), p, window_of(kernel, stride, padding, dilation));
    }
  });
  after_launch(ctx, "max_pool2d");
}

void max_pool2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input, const Tensor& grad_out,
                                const Tensor& indices) {
  check_4d("max_pool2d_with_indices_backward", grad_input, grad_out);
  if (grad_input.numel() == 0) return;
  const Plane p = plane_of(grad_input, grad_out);
  Tensor dense = grad_input.is_contiguous() ? grad_input : empty_like(grad_input);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(dense.data_ptr(), 0, dense.nbytes(), stream_of(ctx)),
                     ctx.device.index);
  const int64_t n = grad_out.numel();
  if (n > 0) {
    Tensor keys = empty({n}, TensorOptions(DType::kI64, ctx.device));
    max_pool_keys_gpu<<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
        keys.data<int64_t>(), indices.data<int64_t>(), strides_of(indices), p);
    after_launch(ctx, "max_pool2d_with_indices_backward");
    const SortedPairs sorted =
        sort_by_destination(ctx, keys, iota(ctx, n), static_cast<uint64_t>(grad_input.numel() - 1));
    dispatch_cuda_dtype(grad_input.dtype(), [&](auto tag) {
      using T = decltype(tag);
      max_pool_sum_runs_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          dense.data<T>(), as_keys(sorted.keys), sorted.values.data<int64_t>(), n,
          grad_out.data<T>(), strides_of(grad_out), p);
    });
    after_launch(ctx, "max_pool2d_with_indices_backward");
  }
  if (!dense.is_same(grad_input)) grad_input.copy_(dense);
}

void avg_pool2d_kernel(const KernelContext& ctx, Tensor& out, const Tensor& input, const Shape& kernel,
                       const Shape& stride, const Shape& padding, bool count_include_pad,
                       int64_t divisor_override) {
  check_4d("avg_pool2d", input, out);
  if (out.numel() == 0) return;
  const Plane p = plane_of(input, out);
  dispatch_cuda_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_gpu<T><<<grid_for(out.numel()), kBlockSize, 0, stream_of(ctx)>>>(
        out.data<T>(), strides_of(out), input.data<T>(), strides_of(input), p,
        window_of(kernel, stride, padding, {1, 1}), AvgParams{count_include_pad, divisor_override});
  });
  after_launch(ctx, "avg_pool2d");
}

void avg_pool2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input, const Tensor& grad_out,
                                const Shape& kernel, const Shape& stride, const Shape& padding,
                                bool count_include_pad, int64_t divisor_override) {
  check_4d("avg_pool2d_backward", grad_input, grad_out);
  if (grad_input.numel() == 0) return;
  const Plane p = plane_of(grad_input, grad_out);
  dispatch_cuda_dtype(grad_input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward_gpu<T><<<grid_for(grad_input.numel()), kBlockSize, 0, stream_of(ctx)>>>(
        grad_input.data<T>(), strides_of(grad_input), grad_out.data<T>(), strides_of(grad_out), p,
        window_of(kernel, stride, padding, {1, 1}), AvgParams{count_include_pad, divisor_override});
  });
  after_launch(ctx, "avg_pool2d_backward");
}

}  // namespace

void register_pool2d_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaxPool2d>(type, &max_pool2d_kernel);
  registry.register_kernel<kernels::MaxPool2dBackward>(type, &max_pool2d_backward_kernel);
  registry.register_kernel<kernels::AvgPool2d>(type, &avg_pool2d_kernel);
  registry.register_kernel<kernels::AvgPool2dBackward>(type, &avg_pool2d_backward_kernel);
}

}  // namespace tessera::cuda
