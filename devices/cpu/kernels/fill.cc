// Fill and Arange on the CPU.
#include <algorithm>
#include <cmath>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

void fill_kernel(const KernelContext&, Tensor& out, Scalar value) {
  if (out.numel() == 0) return;
  StridedIter<1> it({&out}, "fill");
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    it.run({static_cast<char*>(out.data_ptr())}, [v](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        std::fill_n(reinterpret_cast<T*>(p[0]), n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) at<T>(p[0], s[0], i) = v;
      }
    });
  });
}

void arange_kernel(const KernelContext&, Tensor& out, Scalar start, Scalar step) {
  TESSERA_CHECK(out.dim() == 1, ValueError, "arange: the cpu kernel needs a 1-D output, got ",
                describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  char* base = static_cast<char*>(out.data_ptr());
  const int64_t stride = out.stride(0) * static_cast<int64_t>(out.itemsize());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      // start + i * step rounded once, as PyTorch's CPU kernel computes it
      // (and whatever the compiler's contraction flags).
      const double s0 = start.to<double>(), ds = step.to<double>();
      parallel_for_range(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          at<T>(base, stride, i) = convert<T>(std::fma(static_cast<double>(i), ds, s0));
        }
      });
    } else {
      // int64 arithmetic, wrapping like the int64 it stands for.
      const int64_t s0 = start.to<int64_t>(), ds = step.to<int64_t>();
      parallel_for_range(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          at<T>(base, stride, i) = convert<T>(wrap_add(s0, wrap_mul(i, ds)));
        }
      });
    }
  });
}

}  // namespace

void register_fill_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Fill>(type, &fill_kernel);
  registry.register_kernel<kernels::Arange>(type, &arange_kernel);
}

}  // namespace tessera::cpu
