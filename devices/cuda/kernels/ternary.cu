// Ternary ops (the Ternary kernel): where, lerp, addcmul, addcdiv, with
// the CPU device's formulas.
#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::TernaryOp;

template <typename C>
struct Where {
  __device__ C operator()(bool cond, C x, C y) const { return cond ? x : y; }
};

template <typename C>
struct Lerp {  // two forms, each exact at its end (weight 0: start, 1: end)
  __device__ C operator()(C s, C e, C w) const {
    return dm::fabs(w) < C(0.5) ? s + w * (e - s) : e - (e - s) * (C(1) - w);
  }
};

template <typename C>
struct Addcmul {
  C v;
  __device__ C operator()(C s, C x, C y) const {
    if constexpr (is_int_v<C>) return wrap_add(s, wrap_mul(v, wrap_mul(x, y)));
    else return s + v * x * y;
  }
};

template <typename C>
struct Addcdiv {
  C v;
  __device__ C operator()(C s, C x, C y) const { return s + v * x / y; }
};

template <typename T>
bool ternary_typed(const KernelContext& ctx, TernaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, const Tensor& c, const Scalar& value) {
  using C = compute_t<T>;
  const char* n = "ternary";
  switch (op) {
    case TernaryOp::kWhere:
      elementwise<T, bool, T, T>(ctx, "where", out, {a, b, c}, Where<C>{});
      return true;
    case TernaryOp::kLerp:
      if constexpr (is_float_v<T>) {
        elementwise<T, T, T, T>(ctx, "lerp", out, {a, b, c}, Lerp<C>{});
        return true;
      }
      return false;
    case TernaryOp::kAddcmul:
      if constexpr (!std::is_same_v<T, bool>) {
        elementwise<T, T, T, T>(ctx, "addcmul", out, {a, b, c}, Addcmul<C>{value.to<C>()});
        return true;
      }
      return false;
    case TernaryOp::kAddcdiv:
      if constexpr (is_float_v<T>) {
        elementwise<T, T, T, T>(ctx, "addcdiv", out, {a, b, c}, Addcdiv<C>{value.to<C>()});
        return true;
      }
      return false;
  }
  (void)n;
  return false;
}

void ternary_kernel(const KernelContext& ctx, TernaryOp op, Tensor& out, const Tensor& a,
                    const Tensor& b, const Tensor& c, Scalar value) {
  const DType adt = op == TernaryOp::kWhere ? DType::kBool : out.dtype();
  TESSERA_CHECK(a.dtype() == adt && b.dtype() == out.dtype() && c.dtype() == out.dtype(),
                TypeError, "ternary: the cuda kernel needs operands of out's dtype, got out ",
                describe(out), ", a ", describe(a), ", b ", describe(b), ", c ", describe(c));
  if (out.numel() == 0) return;
  const bool done = dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    return ternary_typed<decltype(tag)>(ctx, op, out, a, b, c, value);
  });
  TESSERA_CHECK(done, TypeError, "ternary: the cuda kernel has no such op for ", describe(out));
}

}  // namespace

void register_ternary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Ternary>(type, &ternary_kernel);
}

}  // namespace tessera::cuda
