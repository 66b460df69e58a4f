// Kernel signatures: unary ops, binary ops beyond add/sub/mul/div (whose
// enum is here too; the Binary kernel is in kernel_signatures.h),
// comparisons, logical and bitwise ops, where, lerp, addcmul, addcdiv,
// activation backward. See kernel_signatures.h for the conventions.
//
// Three kernels cover the family (a small table that a new device fills in
// quickly): Unary, PointwiseBinary and Ternary, each switching on an op enum.
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/random/philox.h"

namespace tessera::kernels {

// The Binary kernel's ops (kernel_signatures.h).
enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv };

enum class UnaryOp : uint8_t {
  // out has in's dtype.
  kNeg, kAbs, kSign, kExp, kExpm1, kLog, kLog1p, kLog2, kSqrt, kRsqrt, kReciprocal,
  kSin, kCos, kTan, kTanh, kSigmoid, kRelu,
  kGelu,      // exact: x * Phi(x)
  kGeluTanh,  // tanh approximation
  kSilu, kErf, kFloor, kCeil, kRound, kTrunc,
  kClamp,     // min(max(x, p0), p1)
  kClampMin,  // max(x, p0)
  kClampMax,  // min(x, p0)
  kBitwiseNot,
  // out is bool, in any dtype.
  kLogicalNot, kIsnan, kIsinf, kIsfinite,
  // Later additions: the values are the shaders' op numbers, so new ops go
  // at the end, whatever their group. out has in's dtype:
  kLog10, kSinh, kCosh, kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh,
  kHardswish,    // x * min(max(x + 3, 0), 6) / 6
  kHardsigmoid,  // min(max(x + 3, 0), 6) / 6
  // out is bool:
  kIsneginf, kIsposinf,
};

// The ops whose out is bool.
constexpr bool is_predicate(UnaryOp op) {
  return (op >= UnaryOp::kLogicalNot && op <= UnaryOp::kIsfinite) || op == UnaryOp::kIsneginf ||
         op == UnaryOp::kIsposinf;
}

// out = op(in) elementwise; in and out have one dtype (bool out for the
// predicates). Floating ops (exp, ...) only get floating dtypes, bitwise
// ones only integral and bool; p0, p1 are the op's Scalar arguments
// (clamp bounds) converted by the kernel to the compute type.
struct Unary {
  static constexpr const char* name = "unary";
  using Fn = void (*)(const KernelContext&, UnaryOp op, Tensor& out, const Tensor& in,
                      Scalar p0, Scalar p1);
};

enum class PointwiseBinaryOp : uint8_t {
  // out has the inputs' dtype.
  kDivTrunc, kDivFloor,  // integer dtypes: ValueError on division by zero
  kRemainder,            // sign of the divisor, as Python's %
  kPow,                  // integer dtypes: ValueError on a negative exponent
  kMaximum, kMinimum,    // NaN-propagating
  kAtan2,                // floating only
  kBitwiseAnd, kBitwiseOr, kBitwiseXor, kShiftLeft, kShiftRight,  // integral/bool
  // Activation gradients, floating only: a is the incoming gradient.
  kThresholdBackward,  // b is self; out = b <= p0 ? 0 : a
  kGeluBackward,       // b is self
  kGeluTanhBackward,   // b is self
  kSiluBackward,       // b is self
  kSigmoidBackward,    // b is the forward output y: a * y * (1 - y)
  kTanhBackward,       // b is the forward output y: a * (1 - y^2)
  // out is bool.
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kLogicalXor,
  // Later additions (the values are the shaders' op numbers, so new ops go
  // at the end). out has the inputs' dtype:
  kFmod,        // C's fmod: sign of the dividend; integer dtypes: ValueError on zero
  kLogaddexp,   // log(exp(a) + exp(b)), floating only
  kLogaddexp2,  // log2(2^a + 2^b), floating only
  kHardswishBackward,    // b is self: 0 for b <= -3, a * (b / 3 + 1/2) below 3, else a
  kHardsigmoidBackward,  // b is self: a / 6 for -3 < b < 3, else 0
};

// The ops whose out is bool (comparisons and logical ops).
constexpr bool is_bool_valued(PointwiseBinaryOp op) {
  return op >= PointwiseBinaryOp::kEq && op <= PointwiseBinaryOp::kLogicalXor;
}

// The activation gradients (a is the incoming gradient).
constexpr bool is_activation_backward(PointwiseBinaryOp op) {
  return (op >= PointwiseBinaryOp::kThresholdBackward &&
          op <= PointwiseBinaryOp::kTanhBackward) ||
         op == PointwiseBinaryOp::kHardswishBackward ||
         op == PointwiseBinaryOp::kHardsigmoidBackward;
}

// out = a (op) b; a and b have one dtype and out's sizes (expanded).
struct PointwiseBinary {
  static constexpr const char* name = "pointwise_binary";
  using Fn = void (*)(const KernelContext&, PointwiseBinaryOp op, Tensor& out, const Tensor& a,
                      const Tensor& b, Scalar p0);
};

enum class TernaryOp : uint8_t {
  kWhere,    // out = a ? b : c; a is bool
  kLerp,     // out = a + c * (b - a)  (floating)
  kAddcmul,  // out = a + value * b * c
  kAddcdiv,  // out = a + value * b / c  (floating)
};

// out = op(a, b, c); every tensor has out's sizes (expanded) and out's
// dtype, except where's condition a, which is bool.
struct Ternary {
  static constexpr const char* name = "ternary";
  using Fn = void (*)(const KernelContext&, TernaryOp op, Tensor& out, const Tensor& a,
                      const Tensor& b, const Tensor& c, Scalar value);
};

}  // namespace tessera::kernels
