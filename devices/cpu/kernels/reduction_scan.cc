// CPU kernels of cumsum and cumprod: an inclusive scan of each row of the
// [M, N] row view (the scanned dim last), rows split across oneTBB tasks.
#include <type_traits>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "devices/cpu/kernels/reduction_rows.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

void scan_kernel(const KernelContext&, kernels::ScanOp op, Tensor& out, const Tensor& in,
                 int64_t dim) {
  const RowLayout l = row_layout(in, {dim});
  const Tensor rows = rows_of(in, l);
  RowsOut dst(out, l);
  const bool is_sum = op == kernels::ScanOp::kSum;
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // f32 / f64 accumulate in double (a running sum is exposed at every
    // step, so its error must not grow with the row), halves in float,
    // integers in int64 with wrap-around.
    using A = std::conditional_t<is_half_v<T>, float,
                                 std::conditional_t<is_float_v<T>, double, int64_t>>;
    const T* x = static_cast<const T*>(rows.data_ptr());
    T* y = dst.data<T>();
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(l.n, 1));
    parallel_for_range(l.m, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * l.n;
        T* yr = y + r * l.n;
        A acc = is_sum ? A(0) : A(1);
        for (int64_t i = 0; i < l.n; ++i) {
          const A v = convert<A>(xr[i]);
          if constexpr (std::is_integral_v<A>) {
            acc = static_cast<A>(is_sum ? static_cast<uint64_t>(acc) + static_cast<uint64_t>(v)
                                        : static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
          } else {
            acc = is_sum ? acc + v : acc * v;
          }
          yr[i] = convert<T>(acc);
        }
      }
    });
  });
  dst.finish();
}

}  // namespace

void register_reduction_scan_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Scan>(type, &scan_kernel);
}

}  // namespace tessera::cpu
