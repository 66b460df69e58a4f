// cuBLAS for the floating batched products (gemm.h). cuBLAS is column-major
// and our tensors row-major: out = a @ b is computed as out^T = b^T @ a^T,
// where a row-major [R, C] matrix with row stride ld is, to cuBLAS, a
// column-major [C, R] matrix with leading dimension ld (no copy). An
// operand stored transposed (a column-major view, as x.t() makes) is passed
// with CUBLAS_OP_T; any other layout is made contiguous first.
#include <climits>
#include <cstdint>

#include "devices/cuda/cublas_library.h"
#include "devices/cuda/cuda_context.h"
#include "devices/cuda/kernels/gemm.h"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/matmul_precision.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// How a [B, R, C] operand looks to cuBLAS.
struct GemmOperand {
  bool usable = false;
  bool transposed = false;  // stored column-major: pass CUBLAS_OP_T
  int64_t ld = 1;
  int64_t batch_stride = 0;
};

GemmOperand layout_of(const Tensor& x) {
  const int64_t R = x.sizes()[1], C = x.sizes()[2];
  const int64_t s1 = x.strides()[1], s2 = x.strides()[2];
  GemmOperand g;
  g.batch_stride = x.sizes()[0] == 1 ? 0 : x.strides()[0];
  if ((C == 1 || s2 == 1) && (R == 1 || s1 >= std::max<int64_t>(C, 1))) {
    g.usable = true;
    g.ld = R == 1 ? std::max<int64_t>(C, 1) : s1;
  } else if ((R == 1 || s1 == 1) && (C == 1 || s2 >= std::max<int64_t>(R, 1))) {
    g.usable = true;
    g.transposed = true;
    g.ld = C == 1 ? std::max<int64_t>(R, 1) : s2;
  }
  g.usable = g.usable && g.ld <= INT_MAX && g.batch_stride >= 0;
  return g;
}

// A row-major output with rows that do not overlap across batches.
bool writable_output(const Tensor& out, const GemmOperand& g) {
  const int64_t M = out.sizes()[1];
  return g.usable && !g.transposed &&
         (out.sizes()[0] == 1 || g.batch_stride >= M * g.ld);
}

struct TypeInfo {
  cudaDataType data;
  cublasComputeType_t compute;
  bool double_scalars;
};

TypeInfo type_info(DType dt) {
  switch (dt) {
    case DType::kF32:
      return {CUDA_R_32F,
              float32_matmul_precision() == MatmulPrecision::kHighest ? CUBLAS_COMPUTE_32F
                                                                        : CUBLAS_COMPUTE_32F_FAST_TF32,
              false};
    case DType::kF64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case DType::kF16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case DType::kBF16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    default: break;
  }
  throw TypeError(detail::concat("bmm: cuBLAS has no path for ", dtype_name(dt)));
}

void cublas_bmm(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t B = out.sizes()[0], M = out.sizes()[1], N = out.sizes()[2], K = a.sizes()[2];
  TESSERA_CHECK(B <= INT_MAX && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX, ValueError,
                "bmm: the cuda kernel takes sizes below 2^31, got ", describe(a), " @ ", describe(b));
  GemmOperand ga = layout_of(a), gb = layout_of(b);
  Tensor ac = a, bc = b;
  if (!ga.usable) {
    ac = a.contiguous();
    ga = layout_of(ac);
  }
  if (!gb.usable) {
    bc = b.contiguous();
    gb = layout_of(bc);
  }
  GemmOperand go = layout_of(out);
  Tensor target = out;
  if (!writable_output(out, go)) {
    target = empty(out.sizes(), TensorOptions(out.dtype(), ctx.device));
    go = layout_of(target);
  }
  const TypeInfo t = type_info(out.dtype());
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const void* alpha = t.double_scalars ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = t.double_scalars ? static_cast<const void*>(&beta_d) : &beta_f;
  CudaContext& device = context(ctx.device.index, "bmm");
  DeviceScope scope(device);
  CublasLease lease(device, stream_of(ctx));
  check_cublas(cublas().gemm_strided_batched(
                   lease.handle(), gb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                   ga.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(N),
                   static_cast<int>(M), static_cast<int>(K), alpha, bc.data_ptr(), t.data,
                   static_cast<int>(gb.ld), gb.batch_stride, ac.data_ptr(), t.data,
                   static_cast<int>(ga.ld), ga.batch_stride, beta, target.data_ptr(), t.data,
                   static_cast<int>(go.ld), go.batch_stride, static_cast<int>(B), t.compute,
                   CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx", ctx.device.index);
  if (!target.is_same(out)) out.copy_(target);
}

void bmm_kernel(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  batched_matmul(ctx, out, a, b);
}

}  // namespace

void batched_matmul(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.dim() == 3 && b.dim() == 3 && out.dim() == 3 && a.dtype() == out.dtype() &&
                    b.dtype() == out.dtype(),
                TypeError, "bmm: the cuda kernel needs [B, M, K] @ [B, K, N] into [B, M, N] of one "
                "dtype, got ", describe(a), " @ ", describe(b), " into ", describe(out));
  if (out.numel() == 0) return;
  if (a.sizes()[2] == 0) {  // empty sums
    out.zero_();
    return;
  }
  if (is_floating(out.dtype())) {
    cublas_bmm(ctx, out, a, b);
  } else {
    integer_batched_matmul(ctx, out, a, b);
  }
}

void register_bmm_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Bmm>(type, &bmm_kernel);
}

}  // namespace tessera::cuda
