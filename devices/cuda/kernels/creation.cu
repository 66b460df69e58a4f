// arange and linspace with the CPU device's arithmetic: floating values in
// double, then converted; integer arange in wrapping int64; linspace from
// both ends (start + i*step below the middle, end - (n-1-i)*step above),
// integers truncated from the double.
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

template <typename T>
__global__ void arange_float_gpu(T* out, int64_t stride, int64_t n, double start, double step) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i * stride] = convert<T>(start + static_cast<double>(i) * step);
  }
}

template <typename T>
__global__ void arange_int_gpu(T* out, int64_t stride, int64_t n, int64_t start, int64_t step) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i * stride] = convert<T>(wrap_add(start, wrap_mul(i, step)));
  }
}

template <typename T>
__global__ void linspace_gpu(T* out, int64_t stride, int64_t n, double start, double end, double step) {
  const int64_t half = n / 2;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double v = (i < half || n == 1) ? start + step * static_cast<double>(i)
                                          : end - step * static_cast<double>(n - 1 - i);
    if constexpr (is_int_v<T>) out[i * stride] = static_cast<T>(static_cast<int64_t>(v));
    else out[i * stride] = convert<T>(v);
  }
}

void arange_kernel(const KernelContext& ctx, Tensor& out, Scalar start, Scalar step) {
  TESSERA_CHECK(out.dim() == 1, ValueError, "arange: the cuda kernel needs a 1-D output, got ",
                describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      arange_float_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          out.data<T>(), out.stride(0), n, start.to<double>(), step.to<double>());
    } else {
      arange_int_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          out.data<T>(), out.stride(0), n, start.to<int64_t>(), step.to<int64_t>());
    }
  });
  after_launch(ctx, "arange");
}

void linspace_kernel(const KernelContext& ctx, Tensor& out, double start, double end) {
  TESSERA_CHECK(out.dim() == 1, ValueError, "linspace: the cuda kernel needs a 1-D output, got ",
                describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  const double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    linspace_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(out.data<T>(), out.stride(0), n,
                                                                     start, end, step);
  });
  after_launch(ctx, "linspace");
}

}  // namespace

void register_creation_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Arange>(type, &arange_kernel);
  registry.register_kernel<kernels::Linspace>(type, &linspace_kernel);
}

}  // namespace tessera::cuda
