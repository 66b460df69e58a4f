// copy (dst = src converted to dst's dtype, any strides) and fill.
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/core/scalar.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

template <typename D>
struct CastTo {
  template <typename S>
  __device__ compute_t<D> operator()(S v) const {
    return convert<compute_t<D>>(v);
  }
};

template <typename T>
struct Constant {
  T value;
  __device__ T operator()() const { return value; }
};

void copy_kernel(const KernelContext& ctx, Tensor& dst, const Tensor& src) {
  dispatch_cuda_dtype(dst.dtype(), [&](auto d) {
    using D = decltype(d);
    dispatch_cuda_dtype(src.dtype(), [&](auto s) {
      using S = decltype(s);
      elementwise<D, S>(ctx, "copy", dst, {src}, CastTo<D>{});
    });
  });
}

void fill_kernel(const KernelContext& ctx, Tensor& out, Scalar value) {
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    // As the CPU device converts: a 16-bit float through float (rounded
    // to the storage type once, when stored).
    const C v = is_half_v<T> ? static_cast<C>(value.to<double>()) : value.to<C>();
    elementwise<T>(ctx, "fill", out, {}, Constant<C>{v});
  });
}

}  // namespace

void register_copy_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Copy>(type, &copy_kernel);
  registry.register_kernel<kernels::Fill>(type, &fill_kernel);
}

}  // namespace tessera::cuda
