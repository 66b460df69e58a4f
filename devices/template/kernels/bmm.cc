// Bmm: out[b] = a[b] @ b[b] for a [B, M, K], b [B, K, N], out [B, M, N],
// one dtype, any strides (0 on the batch dim of a broadcast operand). mm,
// matmul, linear and their gradients all arrive here.
//
// A plain loop over the output, accumulating in double: the simplest
// correct GEMM, far from fast. It runs f32 and f64; the other dtypes
// (f16, bf16, integers) are declined to the CPU fallback. A vendor
// replaces the loop by its GEMM library (the CUDA device calls cuBLAS)
// and keeps the declining for what that library lacks.
#include "devices/template/kernels/kernels.h"
#include "devices/template/kernels/strided_view.h"
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::template_device {
namespace {

template <typename T>
void bmm_loop(const StridedView& out, const StridedView& a, const StridedView& b) {
  const int64_t batches = out.sizes[0], m = out.sizes[1], n = out.sizes[2], k = a.sizes[2];
  // Strides in elements of T.
  const int64_t* os = out.strides.data();
  const int64_t* as = a.strides.data();
  const int64_t* bs = b.strides.data();
  T* o = reinterpret_cast<T*>(out.data);
  const T* x = reinterpret_cast<const T*>(a.data);
  const T* y = reinterpret_cast<const T*>(b.data);
  for (int64_t p = 0; p < batches; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;  // an empty sum (k == 0) gives 0, as it must
        for (int64_t l = 0; l < k; ++l) {
          acc += static_cast<double>(x[p * as[0] + i * as[1] + l * as[2]]) *
                 static_cast<double>(y[p * bs[0] + l * bs[1] + j * bs[2]]);
        }
        o[p * os[0] + i * os[1] + j * os[2]] = static_cast<T>(acc);
      }
    }
  }
}

void bmm_kernel(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.dtype() != DType::kF32 && out.dtype() != DType::kF64) {
    ::tessera::detail::run_kernel_on_host<kernels::Bmm>(ctx.device, out, a, b);
    return;
  }
  TESSERA_CHECK(out.dim() == 3 && a.dim() == 3 && b.dim() == 3 && a.dtype() == out.dtype() &&
                    b.dtype() == out.dtype(),
                ValueError, "bmm: the template kernel needs three 3-D tensors of one dtype, got out ",
                describe(out), ", a ", describe(a), ", b ", describe(b));
  if (out.numel() == 0) return;
  const StridedView o = StridedView::of(out), x = StridedView::of(a), y = StridedView::of(b);
  if (out.dtype() == DType::kF32) {
    launch(ctx, "bmm", [o, x, y] { bmm_loop<float>(o, x, y); });
  } else {
    launch(ctx, "bmm", [o, x, y] { bmm_loop<double>(o, x, y); });
  }
}

}  // namespace

void register_bmm_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Bmm>(type, &bmm_kernel);
}

}  // namespace tessera::template_device
