// Kernel signatures: unary ops, binary ops beyond add/sub/mul/div (whose
// enum is here too; the Binary kernel is in kernel_signatures.h),
// comparisons, logical and bitwise ops, where, lerp, addcmul, addcdiv,
// activation backward. See kernel_signatures.h for the conventions.
//
// Three kernels cover the family (a small table that a new device fills in
// quickly): Unary, PointwiseBinary and Ternary, each switching on an op enum.
// The enums, names and dtype rules come from the op tables in
// pointwise_op_table.h, one row per op.
#pragma once

#include <string_view>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/signatures/pointwise_op_table.h"
#include "runtime/random/philox.h"

namespace tessera::kernels {

// One value per table row; the values are the rows' positions.
#define TESSERA_OP_ENUM_VALUE(Enum, ...) k##Enum,
enum class BinaryOp : uint8_t { TESSERA_BINARY_OP_TABLE(TESSERA_OP_ENUM_VALUE) };
enum class UnaryOp : uint8_t { TESSERA_UNARY_OP_TABLE(TESSERA_OP_ENUM_VALUE) };
enum class PointwiseBinaryOp : uint8_t {
  TESSERA_POINTWISE_BINARY_OP_TABLE(TESSERA_OP_ENUM_VALUE)
};
enum class TernaryOp : uint8_t { TESSERA_TERNARY_OP_TABLE(TESSERA_OP_ENUM_VALUE) };
#undef TESSERA_OP_ENUM_VALUE

// How a unary front end treats dtypes, as PyTorch's CPU kernels do (the
// Rule column of TESSERA_UNARY_OP_TABLE).
enum class UnaryRule : uint8_t {
  kKeepNoBool,  // same dtype; bool is a TypeError (neg, abs, relu, floor...)
  kKeep,        // same dtype, bool included (sign)
  kToFloat,     // integers and bool compute in float32 (exp, sin, ...)
  kFloatOnly,   // floating dtypes only (gelu, silu)
  kBitwise,     // integral and bool only
  kPredicate,   // any dtype in, bool out
};

// How a PointwiseBinary front end treats dtypes (the Rule column of
// TESSERA_POINTWISE_BINARY_OP_TABLE).
enum class PointwiseBinaryRule : uint8_t {
  kNumeric,    // any dtype but bool
  kAny,        // every dtype
  kToFloat,    // integers and bool compute in float32
  kFloatOnly,  // floating dtypes only (no promotion of integers, as PyTorch)
  kBitwise,    // integral and bool
  kIntegral,   // integral only
  kCompare,    // any dtype in, bool out
};

// An op's name (for errors) and dtype rule, from its table row.
struct UnaryOpInfo {
  const char* name;
  UnaryRule rule;
};
constexpr UnaryOpInfo info(UnaryOp op) {
  switch (op) {
#define TESSERA_OP_INFO(Enum, name, Rule, ...) \
  case UnaryOp::k##Enum: return {#name, UnaryRule::k##Rule};
    TESSERA_UNARY_OP_TABLE(TESSERA_OP_INFO)
#undef TESSERA_OP_INFO
  }
  return {"unary", UnaryRule::kKeep};
}

struct PointwiseBinaryOpInfo {
  const char* name;
  PointwiseBinaryRule rule;
  bool activation_backward;  // Forms is Backward: a is the incoming gradient
};
constexpr PointwiseBinaryOpInfo info(PointwiseBinaryOp op) {
  switch (op) {
#define TESSERA_OP_INFO(Enum, name, Rule, Forms) \
  case PointwiseBinaryOp::k##Enum:               \
    return {#name, PointwiseBinaryRule::k##Rule, std::string_view(#Forms) == "Backward"};
    TESSERA_POINTWISE_BINARY_OP_TABLE(TESSERA_OP_INFO)
#undef TESSERA_OP_INFO
  }
  return {"pointwise_binary", PointwiseBinaryRule::kAny, false};
}

constexpr const char* name_of(BinaryOp op) {
  switch (op) {
#define TESSERA_OP_NAME(Enum, name) \
  case BinaryOp::k##Enum: return #name;
    TESSERA_BINARY_OP_TABLE(TESSERA_OP_NAME)
#undef TESSERA_OP_NAME
  }
  return "binary";
}
constexpr const char* name_of(TernaryOp op) {
  switch (op) {
#define TESSERA_OP_NAME(Enum, name) \
  case TernaryOp::k##Enum: return #name;
    TESSERA_TERNARY_OP_TABLE(TESSERA_OP_NAME)
#undef TESSERA_OP_NAME
  }
  return "ternary";
}

// The ops whose out is bool.
constexpr bool is_predicate(UnaryOp op) { return info(op).rule == UnaryRule::kPredicate; }

// out = op(in) elementwise; in and out have one dtype (bool out for the
// predicates). Floating ops (exp, ...) only get floating dtypes, bitwise
// ones only integral and bool; p0, p1 are the op's Scalar arguments
// (clamp bounds) converted by the kernel to the compute type.
struct Unary {
  static constexpr const char* name = "unary";
  using Fn = void (*)(const KernelContext&, UnaryOp op, Tensor& out, const Tensor& in,
                      Scalar p0, Scalar p1);
};

// The ops whose out is bool (comparisons and logical ops).
constexpr bool is_bool_valued(PointwiseBinaryOp op) {
  return info(op).rule == PointwiseBinaryRule::kCompare;
}

// The activation gradients (a is the incoming gradient).
constexpr bool is_activation_backward(PointwiseBinaryOp op) {
  return info(op).activation_backward;
}

// out = a (op) b; a and b have one dtype and out's sizes (expanded).
struct PointwiseBinary {
  static constexpr const char* name = "pointwise_binary";
  using Fn = void (*)(const KernelContext&, PointwiseBinaryOp op, Tensor& out, const Tensor& a,
                      const Tensor& b, Scalar p0);
};

// out = op(a, b, c); every tensor has out's sizes (expanded) and out's
// dtype, except where's condition a, which is bool.
struct Ternary {
  static constexpr const char* name = "ternary";
  using Fn = void (*)(const KernelContext&, TernaryOp op, Tensor& out, const Tensor& a,
                      const Tensor& b, const Tensor& c, Scalar value);
};

}  // namespace tessera::kernels
