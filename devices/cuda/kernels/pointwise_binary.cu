// Binary ops beyond add/sub/mul/div (the PointwiseBinary kernel) with the
// CPU device's semantics: rounding division, remainder, fmod, pow, NaN-
// propagating maximum/minimum, atan2, logaddexp(2), comparisons, logical
// and bitwise ops, shifts and activation gradients.
//
// Integer division by zero raises ValueError, as on the CPU device (PyTorch
// raises ZeroDivisionError there): the kernel sets a flag in device memory
// that is read back, so integer div, floor_divide, remainder and fmod wait
// for the GPU. Every other op stays asynchronous.
#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

using Op = kernels::PointwiseBinaryOp;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;
constexpr double kInvLn2 = 1.44269504088896340736;

// A float intermediate rounded to T's precision, as the CPU device rounds
// the steps of 16-bit floor division (see its pointwise_binary.cc).
template <typename T>
__device__ __forceinline__ float in_storage(float v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(__float2half_rn(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(__float2bfloat16_rn(v));
  else return v;
}
template <typename T>
__device__ __forceinline__ double in_storage(double v) {
  return v;
}

template <typename T, typename C>
__device__ C floor_div_float(C a, C b) {
  auto r = [](C v) { return in_storage<T>(v); };
  if (b == C(0)) return r(a / b);
  const C mod = r(dm::fmod(a, b));
  C div = r(r(a - mod) / b);
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div = r(div - C(1));
  if (div == C(0)) return dm::copysign(C(0), r(a / b));
  C q = dm::floor(div);
  if (r(div - q) > C(0.5)) q = r(q + C(1));
  return q;
}

template <typename C>
__device__ C remainder_float(C a, C b) {
  C m = dm::fmod(a, b);
  if (m != C(0) && ((b < C(0)) != (m < C(0)))) m += b;
  return m;
}

template <typename T>
__device__ T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == T(1)) return T(1);
      if (base == T(-1)) return (exp & 1) ? T(-1) : T(1);
      return T(0);
    }
  }
  T result = 1;
  using U = std::make_unsigned_t<T>;
  U e = static_cast<U>(exp);
  while (e) {
    if (e & 1u) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return result;
}

// Comparisons and logical ops, for every dtype (compute type C).
template <Op OP, typename C>
struct Compare {
  __device__ bool operator()(C x, C y) const {
    if constexpr (OP == Op::kEq) return x == y;
    else if constexpr (OP == Op::kNe) return x != y;
    else if constexpr (OP == Op::kLt) return x < y;
    else if constexpr (OP == Op::kLe) return x <= y;
    else if constexpr (OP == Op::kGt) return x > y;
    else if constexpr (OP == Op::kGe) return x >= y;
    else if constexpr (OP == Op::kLogicalAnd) return x != C(0) && y != C(0);
    else if constexpr (OP == Op::kLogicalOr) return x != C(0) || y != C(0);
    else if constexpr (OP == Op::kLogicalXor) return (x != C(0)) != (y != C(0));
    else static_assert(OP != OP, "not a comparison");
  }
};

template <Op OP, typename T, typename C>
struct FloatBinary {
  C p0;
  __device__ C operator()(C x, C y) const {
    if constexpr (OP == Op::kDivTrunc) return dm::trunc(in_storage<T>(x / y));
    else if constexpr (OP == Op::kDivFloor) return floor_div_float<T>(x, y);
    else if constexpr (OP == Op::kRemainder) return remainder_float(x, y);
    else if constexpr (OP == Op::kPow) return dm::pow(x, y);
    else if constexpr (OP == Op::kMaximum) return dm::nan_max(x, y);
    else if constexpr (OP == Op::kMinimum) return dm::nan_min(x, y);
    else if constexpr (OP == Op::kAtan2) return dm::atan2(x, y);
    else if constexpr (OP == Op::kThresholdBackward) return y <= p0 ? C(0) : x;
    else if constexpr (OP == Op::kGeluBackward) {
      const C cdf = C(0.5) * (C(1) + dm::erf(y * C(kInvSqrt2)));
      const C pdf = C(kInvSqrt2Pi) * dm::exp(C(-0.5) * y * y);
      return x * (cdf + y * pdf);
    } else if constexpr (OP == Op::kGeluTanhBackward) {
      const C y2 = y * y;
      const C inner = C(kSqrt2OverPi) * (y + C(kGeluCubic) * y2 * y);
      const C t = dm::tanh(inner);
      const C dinner = C(kSqrt2OverPi) * (C(1) + C(3 * kGeluCubic) * y2);
      return x * (C(0.5) * (C(1) + t) + C(0.5) * y * (C(1) - t * t) * dinner);
    } else if constexpr (OP == Op::kSiluBackward) {
      const C s = C(1) / (C(1) + dm::exp(-y));
      return x * s * (C(1) + y * (C(1) - s));
    } else if constexpr (OP == Op::kSigmoidBackward) return x * (C(1) - y) * y;
    else if constexpr (OP == Op::kTanhBackward) return x * (C(1) - y * y);
    else if constexpr (OP == Op::kFmod) return dm::fmod(x, y);
    else if constexpr (OP == Op::kLogaddexp) {
      // max + log1p(e^-|x - y|); equal infinities return themselves.
      if (dm::isinf(x) && x == y) return x;
      return dm::nan_max(x, y) + dm::log1p(dm::exp(-dm::fabs(x - y)));
    } else if constexpr (OP == Op::kLogaddexp2) {
      if (dm::isinf(x) && x == y) return x;
      return dm::nan_max(x, y) + dm::log1p(dm::exp2(-dm::fabs(x - y))) * C(kInvLn2);
    } else if constexpr (OP == Op::kHardswishBackward) {
      if (y <= C(-3)) return C(0);
      return y < C(3) ? x * (y / C(3) + C(0.5)) : x;
    } else if constexpr (OP == Op::kHardsigmoidBackward) {
      return y > C(-3) && y < C(3) ? x * C(1.0 / 6.0) : C(0);
    } else static_assert(OP != OP, "not a floating binary op");
  }
};

// Integral and bool ops; `zero` is set on a division by zero.
template <Op OP, typename T>
struct IntBinary {
  T p0;
  int* zero;
  __device__ T operator()(T x, T y) const {
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    if constexpr (OP == Op::kMaximum) return x < y ? y : x;
    else if constexpr (OP == Op::kMinimum) return y < x ? y : x;
    else if constexpr (OP == Op::kBitwiseAnd) return static_cast<T>(x & y);
    else if constexpr (OP == Op::kBitwiseOr) return static_cast<T>(x | y);
    else if constexpr (OP == Op::kBitwiseXor) return static_cast<T>(x ^ y);
    else if constexpr (OP == Op::kDivTrunc || OP == Op::kDivFloor || OP == Op::kRemainder ||
                       OP == Op::kFmod) {
      if (y == 0) {
        *zero = 1;
        return 0;
      }
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) {  // min / -1 overflows
          return OP == Op::kRemainder || OP == Op::kFmod ? T(0) : wrap_sub(T(0), x);
        }
        if constexpr (OP == Op::kDivTrunc) return static_cast<T>(x / y);
        else if constexpr (OP == Op::kFmod) return static_cast<T>(x % y);  // C's: dividend's sign
        else if constexpr (OP == Op::kDivFloor) {
          T q = static_cast<T>(x / y);
          if (static_cast<T>(x % y) != 0 && ((x < 0) != (y < 0))) --q;
          return q;
        } else {
          T r = static_cast<T>(x % y);
          if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
          return r;
        }
      } else {
        return OP == Op::kRemainder || OP == Op::kFmod ? static_cast<T>(x % y)
                                                       : static_cast<T>(x / y);
      }
    } else if constexpr (OP == Op::kPow) return int_pow(x, y);
    else if constexpr (OP == Op::kShiftLeft) {
      if constexpr (std::is_signed_v<T>) {
        if (y < T(0)) return 0;
      }
      if (y >= kBits) return 0;
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(x) << y));
    } else if constexpr (OP == Op::kShiftRight) {
      bool out_of_range = y >= kBits;
      if constexpr (std::is_signed_v<T>) out_of_range = out_of_range || y < T(0);
      if (out_of_range) {
        if constexpr (std::is_signed_v<T>) return x < 0 ? T(-1) : T(0);
        else return 0;
      }
      return static_cast<T>(x >> y);
    } else if constexpr (OP == Op::kThresholdBackward) return y <= p0 ? T(0) : x;
    else static_assert(OP != OP, "not an integral binary op");
  }
};

template <typename T>
struct BoolBinary {  // maximum/minimum and the bitwise ops on bool
  Op op;
  __device__ bool operator()(bool x, bool y) const {
    switch (op) {
      case Op::kMaximum:
      case Op::kBitwiseOr: return x || y;
      case Op::kMinimum:
      case Op::kBitwiseAnd: return x && y;
      default: return x != y;  // kBitwiseXor
    }
  }
};

#define TESSERA_COMPARE_CASE(name) \
  case Op::name: return elementwise<bool, T, T>(ctx, n, out, {a, b}, Compare<Op::name, C>{});
#define TESSERA_FLOAT_CASE(name) \
  case Op::name: elementwise<T, T, T>(ctx, n, out, {a, b}, FloatBinary<Op::name, T, C>{p0c}); return true;
#define TESSERA_INT_CASE(name) \
  case Op::name: elementwise<T, T, T>(ctx, n, out, {a, b}, IntBinary<Op::name, T>{p0.to<T>(), zero}); return true;

template <typename T>
void compare(const KernelContext& ctx, Op op, Tensor& out, const Tensor& a, const Tensor& b) {
  using C = compute_t<T>;
  const char* n = "compare";
  switch (op) {
    TESSERA_COMPARE_CASE(kEq) TESSERA_COMPARE_CASE(kNe) TESSERA_COMPARE_CASE(kLt)
    TESSERA_COMPARE_CASE(kLe) TESSERA_COMPARE_CASE(kGt) TESSERA_COMPARE_CASE(kGe)
    TESSERA_COMPARE_CASE(kLogicalAnd) TESSERA_COMPARE_CASE(kLogicalOr)
    TESSERA_COMPARE_CASE(kLogicalXor)
    default: break;
  }
}

template <typename T>
bool float_binary(const KernelContext& ctx, Op op, Tensor& out, const Tensor& a, const Tensor& b,
                  const Scalar& p0) {
  using C = compute_t<T>;
  const C p0c = p0.to<C>();
  const char* n = "pointwise_binary";
  switch (op) {
    TESSERA_FLOAT_CASE(kDivTrunc) TESSERA_FLOAT_CASE(kDivFloor) TESSERA_FLOAT_CASE(kRemainder)
    TESSERA_FLOAT_CASE(kPow) TESSERA_FLOAT_CASE(kMaximum) TESSERA_FLOAT_CASE(kMinimum)
    TESSERA_FLOAT_CASE(kAtan2) TESSERA_FLOAT_CASE(kThresholdBackward)
    TESSERA_FLOAT_CASE(kGeluBackward) TESSERA_FLOAT_CASE(kGeluTanhBackward)
    TESSERA_FLOAT_CASE(kSiluBackward) TESSERA_FLOAT_CASE(kSigmoidBackward)
    TESSERA_FLOAT_CASE(kTanhBackward) TESSERA_FLOAT_CASE(kFmod) TESSERA_FLOAT_CASE(kLogaddexp)
    TESSERA_FLOAT_CASE(kLogaddexp2) TESSERA_FLOAT_CASE(kHardswishBackward)
    TESSERA_FLOAT_CASE(kHardsigmoidBackward)
    default: return false;
  }
}

template <typename T>
bool int_binary(const KernelContext& ctx, Op op, Tensor& out, const Tensor& a, const Tensor& b,
                const Scalar& p0, int* zero) {
  const char* n = "pointwise_binary";
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Op::kMaximum || op == Op::kMinimum || op == Op::kBitwiseAnd ||
        op == Op::kBitwiseOr || op == Op::kBitwiseXor) {
      elementwise<T, T, T>(ctx, n, out, {a, b}, BoolBinary<T>{op});
      return true;
    }
    return false;
  } else {
    switch (op) {
      TESSERA_INT_CASE(kMaximum) TESSERA_INT_CASE(kMinimum) TESSERA_INT_CASE(kBitwiseAnd)
      TESSERA_INT_CASE(kBitwiseOr) TESSERA_INT_CASE(kBitwiseXor) TESSERA_INT_CASE(kDivTrunc)
      TESSERA_INT_CASE(kDivFloor) TESSERA_INT_CASE(kRemainder) TESSERA_INT_CASE(kPow)
      TESSERA_INT_CASE(kShiftLeft) TESSERA_INT_CASE(kShiftRight)
      TESSERA_INT_CASE(kThresholdBackward) TESSERA_INT_CASE(kFmod)
      default: return false;
    }
  }
}

#undef TESSERA_COMPARE_CASE
#undef TESSERA_FLOAT_CASE
#undef TESSERA_INT_CASE

const char* name_of(Op op) {
  switch (op) {
    case Op::kDivTrunc: return "div";
    case Op::kDivFloor: return "floor_divide";
    case Op::kRemainder: return "remainder";
    case Op::kFmod: return "fmod";
    default: return "pointwise_binary";
  }
}

void pointwise_binary_kernel(const KernelContext& ctx, Op op, Tensor& out, const Tensor& a,
                             const Tensor& b, Scalar p0) {
  const bool to_bool = kernels::is_bool_valued(op);
  TESSERA_CHECK(a.dtype() == b.dtype() && out.dtype() == (to_bool ? DType::kBool : a.dtype()),
                TypeError, "pointwise_binary: the cuda kernel needs inputs of one dtype and out of ",
                to_bool ? "bool" : "theirs", ", got out ", describe(out), ", a ", describe(a),
                ", b ", describe(b));
  if (out.numel() == 0) return;
  const bool divides = !is_floating(a.dtype()) && (op == Op::kDivTrunc || op == Op::kDivFloor ||
                                                   op == Op::kRemainder || op == Op::kFmod);
  Tensor flag;
  int* zero = nullptr;
  if (divides) {
    flag = zeros({1}, TensorOptions(DType::kI32, ctx.device));
    zero = flag.data<int>();
  }
  const bool done = dispatch_cuda_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (to_bool) {
      compare<T>(ctx, op, out, a, b);
      return true;
    }
    if constexpr (is_float_v<T>) return float_binary<T>(ctx, op, out, a, b, p0);
    else return int_binary<T>(ctx, op, out, a, b, p0, zero);
  });
  TESSERA_CHECK(done, TypeError, "pointwise_binary: the cuda kernel has no such op for ",
                describe(a));
  if (divides) {
    TESSERA_CHECK(flag.item<int64_t>() == 0, ValueError, name_of(op),
                  ": ZeroDivisionError: integer division by zero (", describe(a), " by ",
                  describe(b), ")");
  }
}

}  // namespace

void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::PointwiseBinary>(type, &pointwise_binary_kernel);
}

}  // namespace tessera::cuda
