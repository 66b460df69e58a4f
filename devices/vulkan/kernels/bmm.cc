// bmm: out[b] = a[b] @ b[b] natively for f32, for f16 (f32 sums, as the
// CPU) on devices with 16-bit storage, and for int32, int16, int8 and
// uint8 (wrapping int32 sums, the low bits of the CPU's int64 sums) on
// devices with 8-wide subgroups, for f64 (f64 sums) on devices with
// shaderFloat64 and for int64 (wrapping int64 sums) on devices with
// shaderInt64, through the shared GEMM (gemm.h): every operand is passed
// by its strides, so transposed, sliced and batch-broadcast operands need
// no copy. Other dtypes (bf16 where 16-bit storage is missing) and operands
// whose offsets overflow 32 bits stage through the host.
#include "devices/vulkan/kernels/gemm.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

GemmOperand operand(const Tensor& t) {
  return GemmOperand{t.data_ptr(), t.strides()[0], t.strides()[1], t.strides()[2]};
}

void bmm_kernel(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  if (a.dim() != 3 || b.dim() != 3 || out.dim() != 3) {  // the front end passes 3-D
    run_on_host<kernels::Bmm>(ctx, out, a, b);
    return;
  }
  GemmProblem problem;
  problem.dtype = out.dtype();
  problem.batch = a.size(0);
  problem.m = a.size(1);
  problem.k = a.size(2);
  problem.n = b.size(2);
  problem.a = operand(a);
  problem.b = operand(b);
  problem.c = operand(out);
  const bool one_dtype = a.dtype() == out.dtype() && b.dtype() == out.dtype();
  const GemmVariant variant = one_dtype ? choose_gemm_variant(ctx, problem) : GemmVariant::kNone;
  if (variant == GemmVariant::kNone) {
    run_on_host<kernels::Bmm>(ctx, out, a, b);
    return;
  }
  run_gemm(ctx, problem, variant);
}

}  // namespace

void register_bmm_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Bmm>(type, bmm_kernel);
}

}  // namespace tessera::vulkan
