// Unary ops on the CPU (the Unary kernel). Floating math runs in the
// compute type (float for f16/bf16); integer ops wrap as PyTorch's do.
#include <algorithm>
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

using kernels::UnaryOp;
using pw::map1;

// GELU constants: 1/sqrt(2), sqrt(2/pi) and the cubic coefficient of the
// tanh approximation.
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

template <typename C>
inline C nan_max(C x, C lo) {
  if (x != x || lo != lo) return x != x ? x : lo;  // NaN in either propagates
  return x < lo ? lo : x;
}
template <typename C>
inline C nan_min(C x, C hi) {
  if (x != x || hi != hi) return x != x ? x : hi;
  return x > hi ? hi : x;
}

// The float32 ops of vec_rows.h on vector code, 16 lanes where the
// CPU has AVX-512 and 8 otherwise: contiguous tensors as one flat run in
// parallel, others row by row (a view such as an LSTM's gate block has
// contiguous rows), rows with strides staged through a float block; false
// leaves the call to the generic loops.
bool vector_unary(UnaryOp op, Tensor& out, const Tensor& in) {
  if (!vec::has_unary_row(op)) return false;
  using UnaryRow = void (*)(UnaryOp, const float*, float*, int64_t);
  static const UnaryRow row = cpu_has_avx512() ? &unary_row_avx512 : &vec::unary_row;
  const float* x = static_cast<const float*>(in.data_ptr());
  float* y = static_cast<float*>(out.data_ptr());
  if (in.is_contiguous() && out.is_contiguous() && out.sizes() == in.sizes()) {
    parallel_for_range(in.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      row(op, x + begin, y + begin, end - begin);
    });
    return true;
  }
  StridedIter<2> it({&out, &in}, "unary");
  it.run({reinterpret_cast<char*>(y), const_cast<char*>(reinterpret_cast<const char*>(x))},
         [&](char* const* p, const int64_t* s, int64_t n) {
           if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
             row(op, reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), n);
             return;
           }
           float block[kStageBlock];
           for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
             const int64_t m = std::min(kStageBlock, n - i0);
             for (int64_t i = 0; i < m; ++i) block[i] = at<const float>(p[1], s[1], i0 + i);
             row(op, block, block, m);
             for (int64_t i = 0; i < m; ++i) at<float>(p[0], s[0], i0 + i) = block[i];
           }
         });
  return true;
}

template <typename T>
void float_unary(UnaryOp op, Tensor& out, const Tensor& in, const Scalar& p0, const Scalar& p1) {
  using C = compute_t<T>;
  const char* n = "unary";
  if constexpr (std::is_same_v<T, float>) {
    if (vector_unary(op, out, in)) return;
  }
  switch (op) {
    case UnaryOp::kNeg: return map1<T, T>(out, in, [](C x) { return -x; }, n);
    case UnaryOp::kAbs: return map1<T, T>(out, in, [](C x) { return std::fabs(x); }, n);
    case UnaryOp::kSign:
      return map1<T, T>(out, in, [](C x) { return static_cast<C>((C(0) < x) - (x < C(0))); }, n);
    case UnaryOp::kExp: return map1<T, T>(out, in, [](C x) { return std::exp(x); }, n);
    case UnaryOp::kExpm1: return map1<T, T>(out, in, [](C x) { return std::expm1(x); }, n);
    case UnaryOp::kLog: return map1<T, T>(out, in, [](C x) { return std::log(x); }, n);
    case UnaryOp::kLog1p: return map1<T, T>(out, in, [](C x) { return std::log1p(x); }, n);
    case UnaryOp::kLog2: return map1<T, T>(out, in, [](C x) { return std::log2(x); }, n);
    case UnaryOp::kSqrt: return map1<T, T>(out, in, [](C x) { return std::sqrt(x); }, n);
    case UnaryOp::kRsqrt: return map1<T, T>(out, in, [](C x) { return C(1) / std::sqrt(x); }, n);
    case UnaryOp::kReciprocal: return map1<T, T>(out, in, [](C x) { return C(1) / x; }, n);
    case UnaryOp::kSin: return map1<T, T>(out, in, [](C x) { return std::sin(x); }, n);
    case UnaryOp::kCos: return map1<T, T>(out, in, [](C x) { return std::cos(x); }, n);
    case UnaryOp::kTan: return map1<T, T>(out, in, [](C x) { return std::tan(x); }, n);
    case UnaryOp::kTanh: return map1<T, T>(out, in, [](C x) { return std::tanh(x); }, n);
    case UnaryOp::kSigmoid:
      return map1<T, T>(out, in, [](C x) { return C(1) / (C(1) + std::exp(-x)); }, n);
    case UnaryOp::kRelu:
      // NaN and -0.0 pass through, as torch.relu.
      return map1<T, T>(out, in, [](C x) { return x < C(0) ? C(0) : x; }, n);
    case UnaryOp::kGelu:
      return map1<T, T>(out, in, [](C x) {
        return C(0.5) * x * (C(1) + std::erf(x * C(kInvSqrt2)));
      }, n);
    case UnaryOp::kGeluTanh:
      return map1<T, T>(out, in, [](C x) {
        const C inner = C(kSqrt2OverPi) * (x + C(kGeluCubic) * x * x * x);
        return C(0.5) * x * (C(1) + std::tanh(inner));
      }, n);
    case UnaryOp::kSilu:
      return map1<T, T>(out, in, [](C x) { return x / (C(1) + std::exp(-x)); }, n);
    case UnaryOp::kErf: return map1<T, T>(out, in, [](C x) { return std::erf(x); }, n);
    case UnaryOp::kFloor: return map1<T, T>(out, in, [](C x) { return std::floor(x); }, n);
    case UnaryOp::kCeil: return map1<T, T>(out, in, [](C x) { return std::ceil(x); }, n);
    // Half to even, as torch.round.
    case UnaryOp::kRound: return map1<T, T>(out, in, [](C x) { return std::nearbyint(x); }, n);
    case UnaryOp::kTrunc: return map1<T, T>(out, in, [](C x) { return std::trunc(x); }, n);
    case UnaryOp::kClamp: {
      const C lo = p0.to<C>(), hi = p1.to<C>();
      return map1<T, T>(out, in, [lo, hi](C x) { return nan_min(nan_max(x, lo), hi); }, n);
    }
    case UnaryOp::kClampMin: {
      const C lo = p0.to<C>();
      return map1<T, T>(out, in, [lo](C x) { return nan_max(x, lo); }, n);
    }
    case UnaryOp::kClampMax: {
      const C hi = p0.to<C>();
      return map1<T, T>(out, in, [hi](C x) { return nan_min(x, hi); }, n);
    }
    case UnaryOp::kLogicalNot: return map1<bool, T>(out, in, [](C x) { return x == C(0); }, n);
    case UnaryOp::kIsnan: return map1<bool, T>(out, in, [](C x) { return x != x; }, n);
    case UnaryOp::kIsinf: return map1<bool, T>(out, in, [](C x) { return std::isinf(x); }, n);
    case UnaryOp::kIsfinite: return map1<bool, T>(out, in, [](C x) { return std::isfinite(x); }, n);
    case UnaryOp::kIsneginf:
      return map1<bool, T>(out, in, [](C x) { return x == -std::numeric_limits<C>::infinity(); }, n);
    case UnaryOp::kIsposinf:
      return map1<bool, T>(out, in, [](C x) { return x == std::numeric_limits<C>::infinity(); }, n);
    case UnaryOp::kLog10: return map1<T, T>(out, in, [](C x) { return std::log10(x); }, n);
    case UnaryOp::kSinh: return map1<T, T>(out, in, [](C x) { return std::sinh(x); }, n);
    case UnaryOp::kCosh: return map1<T, T>(out, in, [](C x) { return std::cosh(x); }, n);
    case UnaryOp::kAsin: return map1<T, T>(out, in, [](C x) { return std::asin(x); }, n);
    case UnaryOp::kAcos: return map1<T, T>(out, in, [](C x) { return std::acos(x); }, n);
    case UnaryOp::kAtan: return map1<T, T>(out, in, [](C x) { return std::atan(x); }, n);
    case UnaryOp::kAsinh: return map1<T, T>(out, in, [](C x) { return std::asinh(x); }, n);
    case UnaryOp::kAcosh: return map1<T, T>(out, in, [](C x) { return std::acosh(x); }, n);
    case UnaryOp::kAtanh: return map1<T, T>(out, in, [](C x) { return std::atanh(x); }, n);
    // As PyTorch's CPU kernels; NaN propagates through nan_max / nan_min.
    case UnaryOp::kHardswish:
      return map1<T, T>(out, in, [](C x) {
        return x * nan_min(nan_max(x + C(3), C(0)), C(6)) / C(6);
      }, n);
    case UnaryOp::kHardsigmoid:
      return map1<T, T>(out, in, [](C x) { return nan_min(nan_max(x + C(3), C(0)), C(6)) / C(6); }, n);
    case UnaryOp::kBitwiseNot: break;
  }
  throw TypeError(detail::concat("unary: op needs an integral or bool dtype, got ", describe(in)));
}

// Integral and bool dtypes: the ops that PyTorch defines on them.
template <typename T>
void int_unary(UnaryOp op, Tensor& out, const Tensor& in, const Scalar& p0, const Scalar& p1) {
  const char* n = "unary";
  const auto identity = [](T x) { return x; };
  switch (op) {
    case UnaryOp::kLogicalNot: return map1<bool, T>(out, in, [](T x) { return x == T(0); }, n);
    case UnaryOp::kIsnan:
    case UnaryOp::kIsinf:
    case UnaryOp::kIsneginf:
    case UnaryOp::kIsposinf: return map1<bool, T>(out, in, [](T) { return false; }, n);
    case UnaryOp::kIsfinite: return map1<bool, T>(out, in, [](T) { return true; }, n);
    case UnaryOp::kBitwiseNot:
      if constexpr (std::is_same_v<T, bool>) return map1<T, T>(out, in, [](T x) { return !x; }, n);
      else return map1<T, T>(out, in, [](T x) { return static_cast<T>(~x); }, n);
    case UnaryOp::kSign:
      if constexpr (std::is_same_v<T, bool>) return map1<T, T>(out, in, identity, n);
      else return map1<T, T>(out, in, [](T x) { return static_cast<T>((T(0) < x) - (x < T(0))); }, n);
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kTrunc: return map1<T, T>(out, in, identity, n);
    default: break;
  }
  if constexpr (is_int_v<T>) {
    switch (op) {
      case UnaryOp::kNeg: return map1<T, T>(out, in, [](T x) { return wrap_sub(T(0), x); }, n);
      case UnaryOp::kAbs:
        if constexpr (std::is_unsigned_v<T>) return map1<T, T>(out, in, identity, n);
        else return map1<T, T>(out, in, [](T x) { return x < 0 ? wrap_sub(T(0), x) : x; }, n);
      case UnaryOp::kRelu: return map1<T, T>(out, in, [](T x) { return x < T(0) ? T(0) : x; }, n);
      case UnaryOp::kClamp: {
        const T lo = p0.to<T>(), hi = p1.to<T>();
        return map1<T, T>(out, in, [lo, hi](T x) { return std::min(std::max(x, lo), hi); }, n);
      }
      case UnaryOp::kClampMin: {
        const T lo = p0.to<T>();
        return map1<T, T>(out, in, [lo](T x) { return std::max(x, lo); }, n);
      }
      case UnaryOp::kClampMax: {
        const T hi = p0.to<T>();
        return map1<T, T>(out, in, [hi](T x) { return std::min(x, hi); }, n);
      }
      default: break;
    }
  }
  (void)p1;
  throw TypeError(detail::concat("unary: the cpu kernel has no such op for ", describe(in),
                                 " (floating ops need a floating dtype)"));
}

void unary_kernel(const KernelContext&, UnaryOp op, Tensor& out, const Tensor& in, Scalar p0,
                  Scalar p1) {
  const DType want = kernels::is_predicate(op) ? DType::kBool : in.dtype();
  TESSERA_CHECK(out.dtype() == want, TypeError, "unary: the cpu kernel needs out of dtype ",
                dtype_name(want), ", got out ", describe(out), " for input ", describe(in));
  if (out.numel() == 0) return;
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) float_unary<T>(op, out, in, p0, p1);
    else int_unary<T>(op, out, in, p0, p1);
  });
}

}  // namespace

void register_pointwise_unary_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Unary>(type, &unary_kernel);
}

}  // namespace tessera::cpu
