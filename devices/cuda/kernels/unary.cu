// Unary ops (the Unary kernel), with the CPU device's semantics: floating
// math in the compute type (float for f16/bf16), integer ops wrapping,
// NaN propagating through clamp, torch.round's half-to-even.
#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::UnaryOp;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

// One functor for every floating op; p0 and p1 are clamp's bounds.
template <UnaryOp OP, typename C>
struct FloatUnary {
  C p0, p1;
  __device__ auto operator()(C x) const {
    if constexpr (OP == UnaryOp::kNeg) return -x;
    else if constexpr (OP == UnaryOp::kAbs) return dm::fabs(x);
    else if constexpr (OP == UnaryOp::kSign) return static_cast<C>((C(0) < x) - (x < C(0)));
    else if constexpr (OP == UnaryOp::kExp) return dm::exp(x);
    else if constexpr (OP == UnaryOp::kExpm1) return dm::expm1(x);
    else if constexpr (OP == UnaryOp::kLog) return dm::log(x);
    else if constexpr (OP == UnaryOp::kLog1p) return dm::log1p(x);
    else if constexpr (OP == UnaryOp::kLog2) return dm::log2(x);
    else if constexpr (OP == UnaryOp::kSqrt) return dm::sqrt(x);
    else if constexpr (OP == UnaryOp::kRsqrt) return C(1) / dm::sqrt(x);
    else if constexpr (OP == UnaryOp::kReciprocal) return C(1) / x;
    else if constexpr (OP == UnaryOp::kSin) return dm::sin(x);
    else if constexpr (OP == UnaryOp::kCos) return dm::cos(x);
    else if constexpr (OP == UnaryOp::kTan) return dm::tan(x);
    else if constexpr (OP == UnaryOp::kTanh) return dm::tanh(x);
    else if constexpr (OP == UnaryOp::kSigmoid) return C(1) / (C(1) + dm::exp(-x));
    else if constexpr (OP == UnaryOp::kRelu) return x < C(0) ? C(0) : x;  // NaN, -0.0 pass
    else if constexpr (OP == UnaryOp::kGelu) return C(0.5) * x * (C(1) + dm::erf(x * C(kInvSqrt2)));
    else if constexpr (OP == UnaryOp::kGeluTanh) {
      const C inner = C(kSqrt2OverPi) * (x + C(kGeluCubic) * x * x * x);
      return C(0.5) * x * (C(1) + dm::tanh(inner));
    } else if constexpr (OP == UnaryOp::kSilu) return x / (C(1) + dm::exp(-x));
    else if constexpr (OP == UnaryOp::kErf) return dm::erf(x);
    else if constexpr (OP == UnaryOp::kFloor) return dm::floor(x);
    else if constexpr (OP == UnaryOp::kCeil) return dm::ceil(x);
    else if constexpr (OP == UnaryOp::kRound) return dm::rint(x);
    else if constexpr (OP == UnaryOp::kTrunc) return dm::trunc(x);
    else if constexpr (OP == UnaryOp::kClamp) return dm::nan_min(dm::nan_max(x, p0), p1);
    else if constexpr (OP == UnaryOp::kClampMin) return dm::nan_max(x, p0);
    else if constexpr (OP == UnaryOp::kClampMax) return dm::nan_min(x, p0);
    else if constexpr (OP == UnaryOp::kLogicalNot) return x == C(0);
    else if constexpr (OP == UnaryOp::kIsnan) return x != x;
    else if constexpr (OP == UnaryOp::kIsinf) return dm::isinf(x);
    else if constexpr (OP == UnaryOp::kIsfinite) return dm::isfinite(x);
    else if constexpr (OP == UnaryOp::kIsneginf) return dm::isinf(x) && x < C(0);
    else if constexpr (OP == UnaryOp::kIsposinf) return dm::isinf(x) && x > C(0);
    else if constexpr (OP == UnaryOp::kLog10) return dm::log10(x);
    else if constexpr (OP == UnaryOp::kSinh) return dm::sinh(x);
    else if constexpr (OP == UnaryOp::kCosh) return dm::cosh(x);
    else if constexpr (OP == UnaryOp::kAsin) return dm::asin(x);
    else if constexpr (OP == UnaryOp::kAcos) return dm::acos(x);
    else if constexpr (OP == UnaryOp::kAtan) return dm::atan(x);
    else if constexpr (OP == UnaryOp::kAsinh) return dm::asinh(x);
    else if constexpr (OP == UnaryOp::kAcosh) return dm::acosh(x);
    else if constexpr (OP == UnaryOp::kAtanh) return dm::atanh(x);
    else if constexpr (OP == UnaryOp::kHardswish)
      return x * dm::nan_min(dm::nan_max(x + C(3), C(0)), C(6)) / C(6);
    else if constexpr (OP == UnaryOp::kHardsigmoid)
      return dm::nan_min(dm::nan_max(x + C(3), C(0)), C(6)) / C(6);
    else static_assert(OP != OP, "not a floating unary op");
  }
};

// The integral and bool ops.
template <UnaryOp OP, typename T>
struct IntUnary {
  T p0, p1;
  __device__ auto operator()(T x) const {
    if constexpr (OP == UnaryOp::kLogicalNot) return x == T(0);
    else if constexpr (OP == UnaryOp::kIsnan || OP == UnaryOp::kIsinf ||
                       OP == UnaryOp::kIsneginf || OP == UnaryOp::kIsposinf) {
      return false;
    }
    else if constexpr (OP == UnaryOp::kIsfinite) return true;
    else if constexpr (OP == UnaryOp::kBitwiseNot) {
      if constexpr (std::is_same_v<T, bool>) return !x;
      else return static_cast<T>(~x);
    } else if constexpr (OP == UnaryOp::kSign) {
      if constexpr (std::is_same_v<T, bool>) return x;
      else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != T(0));
      else return static_cast<T>((T(0) < x) - (x < T(0)));
    } else if constexpr (OP == UnaryOp::kFloor || OP == UnaryOp::kCeil || OP == UnaryOp::kRound ||
                         OP == UnaryOp::kTrunc) {
      return x;
    } else if constexpr (OP == UnaryOp::kNeg) return wrap_sub(T(0), x);
    else if constexpr (OP == UnaryOp::kAbs) {
      if constexpr (std::is_unsigned_v<T>) return x;
      else return x < T(0) ? wrap_sub(T(0), x) : x;
    } else if constexpr (OP == UnaryOp::kRelu) {
      if constexpr (std::is_unsigned_v<T>) return x;
      else return x < T(0) ? T(0) : x;
    }
    else if constexpr (OP == UnaryOp::kClamp) return x < p0 ? p0 : (x > p1 ? p1 : x);
    else if constexpr (OP == UnaryOp::kClampMin) return x < p0 ? p0 : x;
    else if constexpr (OP == UnaryOp::kClampMax) return x > p0 ? p0 : x;
    else static_assert(OP != OP, "not an integral unary op");
  }
};

using kernels::is_predicate;

template <UnaryOp OP, typename T>
void run_float(const KernelContext& ctx, Tensor& out, const Tensor& in, const Scalar& p0,
               const Scalar& p1) {
  using C = compute_t<T>;
  using Out = std::conditional_t<is_predicate(OP), bool, T>;
  elementwise<Out, T>(ctx, "unary", out, {in}, FloatUnary<OP, C>{p0.to<C>(), p1.to<C>()});
}

template <UnaryOp OP, typename T>
void run_int(const KernelContext& ctx, Tensor& out, const Tensor& in, const Scalar& p0,
             const Scalar& p1) {
  using Out = std::conditional_t<is_predicate(OP), bool, T>;
  elementwise<Out, T>(ctx, "unary", out, {in}, IntUnary<OP, T>{p0.to<T>(), p1.to<T>()});
}

#define TESSERA_FLOAT_UNARY_CASE(op) \
  case UnaryOp::op: return run_float<UnaryOp::op, T>(ctx, out, in, p0, p1);
#define TESSERA_INT_UNARY_CASE(op) \
  case UnaryOp::op: return run_int<UnaryOp::op, T>(ctx, out, in, p0, p1);

template <typename T>
void float_unary(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in,
                 const Scalar& p0, const Scalar& p1) {
  switch (op) {
    TESSERA_FLOAT_UNARY_CASE(kNeg) TESSERA_FLOAT_UNARY_CASE(kAbs) TESSERA_FLOAT_UNARY_CASE(kSign)
    TESSERA_FLOAT_UNARY_CASE(kExp) TESSERA_FLOAT_UNARY_CASE(kExpm1) TESSERA_FLOAT_UNARY_CASE(kLog)
    TESSERA_FLOAT_UNARY_CASE(kLog1p) TESSERA_FLOAT_UNARY_CASE(kLog2) TESSERA_FLOAT_UNARY_CASE(kSqrt)
    TESSERA_FLOAT_UNARY_CASE(kRsqrt) TESSERA_FLOAT_UNARY_CASE(kReciprocal)
    TESSERA_FLOAT_UNARY_CASE(kSin) TESSERA_FLOAT_UNARY_CASE(kCos) TESSERA_FLOAT_UNARY_CASE(kTan)
    TESSERA_FLOAT_UNARY_CASE(kTanh) TESSERA_FLOAT_UNARY_CASE(kSigmoid)
    TESSERA_FLOAT_UNARY_CASE(kRelu) TESSERA_FLOAT_UNARY_CASE(kGelu)
    TESSERA_FLOAT_UNARY_CASE(kGeluTanh) TESSERA_FLOAT_UNARY_CASE(kSilu)
    TESSERA_FLOAT_UNARY_CASE(kErf) TESSERA_FLOAT_UNARY_CASE(kFloor) TESSERA_FLOAT_UNARY_CASE(kCeil)
    TESSERA_FLOAT_UNARY_CASE(kRound) TESSERA_FLOAT_UNARY_CASE(kTrunc)
    TESSERA_FLOAT_UNARY_CASE(kClamp) TESSERA_FLOAT_UNARY_CASE(kClampMin)
    TESSERA_FLOAT_UNARY_CASE(kClampMax) TESSERA_FLOAT_UNARY_CASE(kLogicalNot)
    TESSERA_FLOAT_UNARY_CASE(kIsnan) TESSERA_FLOAT_UNARY_CASE(kIsinf)
    TESSERA_FLOAT_UNARY_CASE(kIsfinite) TESSERA_FLOAT_UNARY_CASE(kIsneginf)
    TESSERA_FLOAT_UNARY_CASE(kIsposinf) TESSERA_FLOAT_UNARY_CASE(kLog10)
    TESSERA_FLOAT_UNARY_CASE(kSinh) TESSERA_FLOAT_UNARY_CASE(kCosh) TESSERA_FLOAT_UNARY_CASE(kAsin)
    TESSERA_FLOAT_UNARY_CASE(kAcos) TESSERA_FLOAT_UNARY_CASE(kAtan) TESSERA_FLOAT_UNARY_CASE(kAsinh)
    TESSERA_FLOAT_UNARY_CASE(kAcosh) TESSERA_FLOAT_UNARY_CASE(kAtanh)
    TESSERA_FLOAT_UNARY_CASE(kHardswish) TESSERA_FLOAT_UNARY_CASE(kHardsigmoid)
    case UnaryOp::kBitwiseNot: break;
  }
  throw TypeError(detail::concat("unary: op needs an integral or bool dtype, got ", describe(in)));
}

template <typename T>
void int_unary(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in,
               const Scalar& p0, const Scalar& p1) {
  switch (op) {
    TESSERA_INT_UNARY_CASE(kLogicalNot) TESSERA_INT_UNARY_CASE(kIsnan)
    TESSERA_INT_UNARY_CASE(kIsinf) TESSERA_INT_UNARY_CASE(kIsfinite)
    TESSERA_INT_UNARY_CASE(kIsneginf) TESSERA_INT_UNARY_CASE(kIsposinf)
    TESSERA_INT_UNARY_CASE(kBitwiseNot) TESSERA_INT_UNARY_CASE(kSign)
    TESSERA_INT_UNARY_CASE(kFloor) TESSERA_INT_UNARY_CASE(kCeil) TESSERA_INT_UNARY_CASE(kRound)
    TESSERA_INT_UNARY_CASE(kTrunc)
    default: break;
  }
  if constexpr (is_int_v<T>) {
    switch (op) {
      TESSERA_INT_UNARY_CASE(kNeg) TESSERA_INT_UNARY_CASE(kAbs) TESSERA_INT_UNARY_CASE(kRelu)
      TESSERA_INT_UNARY_CASE(kClamp) TESSERA_INT_UNARY_CASE(kClampMin)
      TESSERA_INT_UNARY_CASE(kClampMax)
      default: break;
    }
  }
  throw TypeError(detail::concat("unary: the cuda kernel has no such op for ", describe(in),
                                 " (floating ops need a floating dtype)"));
}

#undef TESSERA_FLOAT_UNARY_CASE
#undef TESSERA_INT_UNARY_CASE

void unary_kernel(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in, Scalar p0,
                  Scalar p1) {
  const DType want = is_predicate(op) ? DType::kBool : in.dtype();
  TESSERA_CHECK(out.dtype() == want, TypeError, "unary: the cuda kernel needs out of dtype ",
                dtype_name(want), ", got out ", describe(out), " for input ", describe(in));
  dispatch_cuda_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) float_unary<T>(ctx, op, out, in, p0, p1);
    else int_unary<T>(ctx, op, out, in, p0, p1);
  });
}

}  // namespace

void register_unary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Unary>(type, &unary_kernel);
}

}  // namespace tessera::cuda
