// Ternary ops on the CPU (the Ternary kernel): where, lerp, addcmul, addcdiv.
#include <type_traits>

#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/pointwise_loops.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

using kernels::TernaryOp;
using pw::map3;

template <typename T>
void ternary_typed(TernaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c,
                   const Scalar& value) {
  using C = compute_t<T>;
  const char* n = "ternary";
  switch (op) {
    case TernaryOp::kWhere:
      return map3<bool, T>(out, a, b, c, [](auto cond, C x, C y) { return cond ? x : y; }, n);
    case TernaryOp::kLerp:
      if constexpr (is_float_v<T>) {
        // Two forms, each exact at its end (weight 0 gives start, 1 gives end).
        return map3<T, T>(out, a, b, c, [](C s, C e, C w) {
          return std::abs(w) < C(0.5) ? s + w * (e - s) : e - (e - s) * (C(1) - w);
        }, n);
      }
      break;
    case TernaryOp::kAddcmul: {
      if constexpr (std::is_same_v<T, bool>) {
        break;
      } else if constexpr (is_int_v<T>) {
        const T v = value.to<T>();
        return map3<T, T>(out, a, b, c, [v](T s, T x, T y) {
          return wrap_add(s, wrap_mul(v, wrap_mul(x, y)));
        }, n);
      } else {
        const C v = value.to<C>();
        return map3<T, T>(out, a, b, c, [v](C s, C x, C y) { return s + v * x * y; }, n);
      }
    }
    case TernaryOp::kAddcdiv:
      if constexpr (is_float_v<T>) {
        const C v = value.to<C>();
        return map3<T, T>(out, a, b, c, [v](C s, C x, C y) { return s + v * x / y; }, n);
      }
      break;
  }
  throw TypeError(detail::concat("ternary: the cpu kernel has no such op for ", describe(out)));
}

void ternary_kernel(const KernelContext&, TernaryOp op, Tensor& out, const Tensor& a,
                    const Tensor& b, const Tensor& c, Scalar value) {
  const DType adt = op == TernaryOp::kWhere ? DType::kBool : out.dtype();
  TESSERA_CHECK(a.dtype() == adt && b.dtype() == out.dtype() && c.dtype() == out.dtype(),
                TypeError, "ternary: the cpu kernel needs operands of out's dtype, got out ",
                describe(out), ", a ", describe(a), ", b ", describe(b), ", c ", describe(c));
  if (out.numel() == 0) return;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    ternary_typed<decltype(tag)>(op, out, a, b, c, value);
  });
}

}  // namespace

void register_pointwise_ternary_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Ternary>(type, &ternary_kernel);
}

}  // namespace tessera::cpu
