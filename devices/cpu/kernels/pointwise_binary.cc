// Binary ops beyond add/sub/mul/div on the CPU (the PointwiseBinary
// kernel): rounding division, remainder, fmod, pow, maximum/minimum, atan2,
// logaddexp(2), comparisons, logical and bitwise ops, activation gradients.
//
// Integer division by zero sets a flag (the loops may run on several
// threads) and raises ValueError after the loop, as PyTorch raises
// ZeroDivisionError.
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "devices/cpu/kernels/avx512/vec_rows_avx512.h"
#include "devices/cpu/kernels/cpu_isa.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/pointwise_loops.h"
#include "devices/cpu/kernels/vec_rows.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

using Op = kernels::PointwiseBinaryOp;
using pw::map2;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

// A float intermediate rounded to the storage type T's precision: PyTorch's
// CPU computes the rounding divisions of 16-bit floats step by step in the
// storage type, and rounding the quotient before truncating it changes
// results (10.32 / 0.4915 is 20.998: 21 in float16, so trunc gives 21).
template <typename T, typename C>
C in_storage_precision(C v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<C>(static_cast<T>(v));
  } else {
    return v;
  }
}

// Python's floor division for floating values: the quotient rounded down,
// computed from fmod so that it agrees with remainder (a == q * b + r).
// Each step is rounded to T's precision, as above.
template <typename T, typename C>
C floor_div_float(C a, C b) {
  auto r = [](C v) { return in_storage_precision<T>(v); };
  if (b == C(0)) return r(a / b);
  const C mod = r(std::fmod(a, b));
  C div = r(r(a - mod) / b);
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div = r(div - C(1));
  if (div == C(0)) return std::copysign(C(0), r(a / b));
  C q = std::floor(div);
  if (r(div - q) > C(0.5)) q = r(q + C(1));  // (a - mod) / b may land just below an integer
  return q;
}

template <typename C>
C remainder_float(C a, C b) {
  C m = std::fmod(a, b);
  if (m != C(0) && ((b < C(0)) != (m < C(0)))) m += b;
  return m;
}

template <typename C>
C nan_max(C a, C b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}
template <typename C>
C nan_min(C a, C b) {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
}

// log(e^a + e^b) as max + log1p(e^-|a - b|), which neither overflows nor
// loses the smaller term; equal infinities return themselves (their
// difference would be NaN).
template <typename C>
C logaddexp(C a, C b) {
  if (std::isinf(a) && a == b) return a;
  const C m = nan_max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// log2(2^a + 2^b), likewise.
template <typename C>
C logaddexp2(C a, C b) {
  constexpr C kInvLn2 = C(1.44269504088896340736);
  if (std::isinf(a) && a == b) return a;
  const C m = nan_max(a, b);
  return m + std::log1p(std::exp2(-std::fabs(a - b))) * kInvLn2;
}

template <typename T>
T int_pow(T base, T exp) {
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

template <typename T>
void compare(Op op, Tensor& out, const Tensor& a, const Tensor& b) {
  using C = compute_t<T>;
  const char* n = "compare";
  switch (op) {
    case Op::kEq: return map2<bool, T>(out, a, b, [](C x, C y) { return x == y; }, n);
    case Op::kNe: return map2<bool, T>(out, a, b, [](C x, C y) { return x != y; }, n);
    case Op::kLt: return map2<bool, T>(out, a, b, [](C x, C y) { return x < y; }, n);
    case Op::kLe: return map2<bool, T>(out, a, b, [](C x, C y) { return x <= y; }, n);
    case Op::kGt: return map2<bool, T>(out, a, b, [](C x, C y) { return x > y; }, n);
    case Op::kGe: return map2<bool, T>(out, a, b, [](C x, C y) { return x >= y; }, n);
    case Op::kLogicalAnd:
      return map2<bool, T>(out, a, b, [](C x, C y) { return x != C(0) && y != C(0); }, n);
    case Op::kLogicalOr:
      return map2<bool, T>(out, a, b, [](C x, C y) { return x != C(0) || y != C(0); }, n);
    case Op::kLogicalXor:
      return map2<bool, T>(out, a, b, [](C x, C y) { return (x != C(0)) != (y != C(0)); }, n);
    default: break;
  }
}

// The transcendental activation gradients of contiguous float32 tensors
// on vector code (vec_rows.h), 16 lanes where the CPU has AVX-512 and 8
// otherwise: glibc's scalar erf, exp and tanh cost about 10 ns an element,
// and a transformer's backward runs one of these over every feed-forward
// activation. False leaves the call to the generic loops (other layouts
// and dtypes, other ops).
bool vector_gradient(Op op, Tensor& out, const Tensor& a, const Tensor& b) {
  if (!vec::has_gradient_row(op) || out.dtype() != DType::kF32 || !out.is_contiguous() ||
      !a.is_contiguous() || !b.is_contiguous() || a.sizes() != out.sizes() ||
      b.sizes() != out.sizes()) {
    return false;
  }
  using GradientRow = void (*)(Op, const float*, const float*, float*, int64_t);
  static const GradientRow row = cpu_has_avx512() ? &gradient_row_avx512 : &vec::gradient_row;
  const auto* g = static_cast<const float*>(a.data_ptr());
  const auto* x = static_cast<const float*>(b.data_ptr());
  auto* y = static_cast<float*>(out.data_ptr());
  parallel_for_range(out.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    row(op, g + begin, x + begin, y + begin, end - begin);
  });
  return true;
}

template <typename T>
bool float_binary(Op op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& p0) {
  if constexpr (std::is_same_v<T, float>) {
    if (vector_gradient(op, out, a, b)) return true;
  }
  using C = compute_t<T>;
  const char* n = "pointwise_binary";
  switch (op) {
    case Op::kDivTrunc:
      map2<T, T>(out, a, b, [](C x, C y) { return std::trunc(in_storage_precision<T>(x / y)); }, n);
      return true;
    case Op::kDivFloor: map2<T, T>(out, a, b, [](C x, C y) { return floor_div_float<T>(x, y); }, n); return true;
    case Op::kRemainder: map2<T, T>(out, a, b, [](C x, C y) { return remainder_float(x, y); }, n); return true;
    case Op::kPow: map2<T, T>(out, a, b, [](C x, C y) { return std::pow(x, y); }, n); return true;
    case Op::kMaximum: map2<T, T>(out, a, b, [](C x, C y) { return nan_max(x, y); }, n); return true;
    case Op::kMinimum: map2<T, T>(out, a, b, [](C x, C y) { return nan_min(x, y); }, n); return true;
    case Op::kAtan2: map2<T, T>(out, a, b, [](C x, C y) { return std::atan2(x, y); }, n); return true;
    case Op::kThresholdBackward: {
      const C th = p0.to<C>();
      map2<T, T>(out, a, b, [th](C g, C x) { return x <= th ? C(0) : g; }, n);
      return true;
    }
    case Op::kGeluBackward:
      map2<T, T>(out, a, b, [](C g, C x) {
        const C cdf = C(0.5) * (C(1) + std::erf(x * C(kInvSqrt2)));
        const C pdf = C(kInvSqrt2Pi) * std::exp(C(-0.5) * x * x);
        return g * (cdf + x * pdf);
      }, n);
      return true;
    case Op::kGeluTanhBackward:
      map2<T, T>(out, a, b, [](C g, C x) {
        const C x2 = x * x;
        const C inner = C(kSqrt2OverPi) * (x + C(kGeluCubic) * x2 * x);
        const C t = std::tanh(inner);
        const C dinner = C(kSqrt2OverPi) * (C(1) + C(3 * kGeluCubic) * x2);
        return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * dinner);
      }, n);
      return true;
    case Op::kSiluBackward:
      map2<T, T>(out, a, b, [](C g, C x) {
        const C s = C(1) / (C(1) + std::exp(-x));
        return g * s * (C(1) + x * (C(1) - s));
      }, n);
      return true;
    case Op::kSigmoidBackward:
      map2<T, T>(out, a, b, [](C g, C y) { return g * (C(1) - y) * y; }, n);
      return true;
    case Op::kTanhBackward:
      map2<T, T>(out, a, b, [](C g, C y) { return g * (C(1) - y * y); }, n);
      return true;
    case Op::kFmod: map2<T, T>(out, a, b, [](C x, C y) { return std::fmod(x, y); }, n); return true;
    case Op::kLogaddexp:
      map2<T, T>(out, a, b, [](C x, C y) { return logaddexp(x, y); }, n);
      return true;
    case Op::kLogaddexp2:
      map2<T, T>(out, a, b, [](C x, C y) { return logaddexp2(x, y); }, n);
      return true;
    case Op::kHardswishBackward:
      map2<T, T>(out, a, b, [](C g, C x) {
        if (x <= C(-3)) return C(0);
        return x < C(3) ? g * (x / C(3) + C(0.5)) : g;
      }, n);
      return true;
    case Op::kHardsigmoidBackward:
      map2<T, T>(out, a, b, [](C g, C x) { return x > C(-3) && x < C(3) ? g * C(1.0 / 6.0) : C(0); }, n);
      return true;
    default: return false;
  }
}

template <typename T>
bool int_binary(Op op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& p0,
                std::atomic<bool>& zero_div) {
  const char* n = "pointwise_binary";
  switch (op) {
    case Op::kMaximum:
      map2<T, T>(out, a, b, [](T x, T y) { return x < y ? y : x; }, n);
      return true;
    case Op::kMinimum:
      map2<T, T>(out, a, b, [](T x, T y) { return y < x ? y : x; }, n);
      return true;
    case Op::kBitwiseAnd: map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x & y); }, n); return true;
    case Op::kBitwiseOr: map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x | y); }, n); return true;
    case Op::kBitwiseXor: map2<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x ^ y); }, n); return true;
    default: break;
  }
  if constexpr (is_int_v<T>) {
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    std::atomic<bool>* zero = &zero_div;
    switch (op) {
      case Op::kDivTrunc:
        map2<T, T>(out, a, b, [zero](T x, T y) -> T {
          if (y == 0) {
            zero->store(true, std::memory_order_relaxed);
            return 0;
          }
          if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return wrap_sub(T(0), x);  // min / -1 overflows
          }
          return static_cast<T>(x / y);
        }, n);
        return true;
      case Op::kDivFloor:
        map2<T, T>(out, a, b, [zero](T x, T y) -> T {
          if (y == 0) {
            zero->store(true, std::memory_order_relaxed);
            return 0;
          }
          if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return wrap_sub(T(0), x);
            T q = static_cast<T>(x / y);
            if (static_cast<T>(x % y) != 0 && ((x < 0) != (y < 0))) --q;
            return q;
          } else {
            return static_cast<T>(x / y);
          }
        }, n);
        return true;
      case Op::kRemainder:
        map2<T, T>(out, a, b, [zero](T x, T y) -> T {
          if (y == 0) {
            zero->store(true, std::memory_order_relaxed);
            return 0;
          }
          if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return 0;
            T r = static_cast<T>(x % y);
            if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
            return r;
          } else {
            return static_cast<T>(x % y);
          }
        }, n);
        return true;
      case Op::kFmod:
        map2<T, T>(out, a, b, [zero](T x, T y) -> T {
          if (y == 0) {
            zero->store(true, std::memory_order_relaxed);
            return 0;
          }
          if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return 0;  // min % -1 overflows
          }
          return static_cast<T>(x % y);  // C's %: the sign of the dividend
        }, n);
        return true;
      case Op::kPow: map2<T, T>(out, a, b, [](T x, T y) { return int_pow(x, y); }, n); return true;
      case Op::kShiftLeft:
        map2<T, T>(out, a, b, [](T x, T y) -> T {
          if ((std::is_signed_v<T> && y < T(0)) || y >= kBits) return 0;
          using U = std::make_unsigned_t<T>;
          return static_cast<T>(static_cast<U>(static_cast<U>(x) << y));
        }, n);
        return true;
      case Op::kShiftRight:
        map2<T, T>(out, a, b, [](T x, T y) -> T {
          if ((std::is_signed_v<T> && y < T(0)) || y >= kBits) {
            if constexpr (std::is_signed_v<T>) return x < 0 ? T(-1) : T(0);
            else return 0;
          }
          return static_cast<T>(x >> y);
        }, n);
        return true;
      case Op::kThresholdBackward: {
        const T th = p0.to<T>();
        map2<T, T>(out, a, b, [th](T g, T x) { return x <= th ? T(0) : g; }, n);
        return true;
      }
      default: break;
    }
  }
  return false;
}

const char* name_of(Op op) {
  switch (op) {
    case Op::kDivTrunc: return "div";
    case Op::kDivFloor: return "floor_divide";
    case Op::kRemainder: return "remainder";
    case Op::kFmod: return "fmod";
    default: return "pointwise_binary";
  }
}

void pointwise_binary_kernel(const KernelContext&, Op op, Tensor& out, const Tensor& a,
                             const Tensor& b, Scalar p0) {
  const bool to_bool = kernels::is_bool_valued(op);
  TESSERA_CHECK(a.dtype() == b.dtype() && out.dtype() == (to_bool ? DType::kBool : a.dtype()),
                TypeError, "pointwise_binary: the cpu kernel needs inputs of one dtype and out of ",
                to_bool ? "bool" : "theirs", ", got out ", describe(out), ", a ", describe(a),
                ", b ", describe(b));
  if (out.numel() == 0) return;
  std::atomic<bool> zero_div{false};
  bool done = dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (to_bool) {
      compare<T>(op, out, a, b);
      return true;
    }
    if constexpr (is_float_v<T>) return float_binary<T>(op, out, a, b, p0);
    else return int_binary<T>(op, out, a, b, p0, zero_div);
  });
  TESSERA_CHECK(done, TypeError, "pointwise_binary: the cpu kernel has no such op for ",
                describe(a));
  TESSERA_CHECK(!zero_div.load(), ValueError, name_of(op),
                ": ZeroDivisionError: integer division by zero (", describe(a), " by ",
                describe(b), ")");
}

}  // namespace

void register_pointwise_binary_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::PointwiseBinary>(type, &pointwise_binary_kernel);
}

}  // namespace tessera::cpu
