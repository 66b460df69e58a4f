// Op front ends: unary ops, binary ops beyond add/sub/mul/div, comparisons,
// logical and bitwise ops, where, lerp, addcmul, addcdiv, activation
// backward.
//
// Each op comes in PyTorch's forms where PyTorch has them: foo(x) returns a
// new tensor, foo_(self) writes self (the result must cast to self's dtype
// and have self's shape), foo_out(out, x) writes out (see out_check.h).
// Dtypes, promotion and errors follow PyTorch (e.g. exp of an integer
// tensor is float32, neg of bool is a TypeError, isnan returns bool).
#pragma once

#include <optional>
#include <string_view>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/signatures/pointwise_op_table.h"

namespace tessera {

#define TESSERA_POINTWISE_UNARY_DECL(name) \
  Tensor name(const Tensor& x);            \
  Tensor& name##_(Tensor& self);           \
  Tensor& name##_out(Tensor& out, const Tensor& x);

// -- Unary: the Tensor and Function rows of TESSERA_UNARY_OP_TABLE
// (runtime/ops/signatures/pointwise_op_table.h): neg, abs, sign, exp, expm1,
// log, log1p, log2, log10, sqrt, rsqrt, reciprocal, sin, cos, tan, asin,
// acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, erf, sigmoid, relu,
// silu, hardswish, hardsigmoid, floor, ceil, round, trunc, bitwise_not,
// logical_not. Each row's Rule gives its dtypes: floating math (exp ... erf)
// gives float32 for integer/bool input; silu, hardswish and hardsigmoid
// take floating dtypes only, as PyTorch's.
#define TESSERA_POINTWISE_UNARY_DECL_Tensor(name) TESSERA_POINTWISE_UNARY_DECL(name)
#define TESSERA_POINTWISE_UNARY_DECL_Function(name) TESSERA_POINTWISE_UNARY_DECL(name)
#define TESSERA_POINTWISE_UNARY_DECL_Custom(name)
#define TESSERA_POINTWISE_UNARY_ROW(Enum, name, Rule, Forms, Foreach) \
  TESSERA_POINTWISE_UNARY_DECL_##Forms(name)
TESSERA_UNARY_OP_TABLE(TESSERA_POINTWISE_UNARY_ROW)
#undef TESSERA_POINTWISE_UNARY_ROW
#undef TESSERA_POINTWISE_UNARY_DECL_Tensor
#undef TESSERA_POINTWISE_UNARY_DECL_Function
#undef TESSERA_POINTWISE_UNARY_DECL_Custom

// approximate is "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor& gelu_(Tensor& self, std::string_view approximate = "none");
Tensor& gelu_out(Tensor& out, const Tensor& x, std::string_view approximate = "none");

// Bool results; integers are never NaN or infinite.
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor isneginf(const Tensor& x);  // x == -inf
Tensor isposinf(const Tensor& x);  // x == +inf
// out must be bool, as PyTorch's.
Tensor& isneginf_out(Tensor& out, const Tensor& x);
Tensor& isposinf_out(Tensor& out, const Tensor& x);

// clamp to [min, max]; at least one bound. The result dtype is
// result_type(x, min, max); a NaN input or bound gives NaN; min > max gives max.
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor& clamp_(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor& clamp_out(Tensor& out, const Tensor& x, std::optional<Scalar> min,
                  std::optional<Scalar> max = std::nullopt);
// Tensor bounds (broadcast with x).
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Tensor>& min,
                  const std::optional<Tensor>& max);
// clamp with one bound.
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_min(const Tensor& x, const Tensor& min);
Tensor& clamp_min_(Tensor& self, Scalar min);
Tensor& clamp_min_(Tensor& self, const Tensor& min);
Tensor& clamp_min_out(Tensor& out, const Tensor& x, Scalar min);
Tensor& clamp_min_out(Tensor& out, const Tensor& x, const Tensor& min);
Tensor clamp_max(const Tensor& x, Scalar max);
Tensor clamp_max(const Tensor& x, const Tensor& max);
Tensor& clamp_max_(Tensor& self, Scalar max);
Tensor& clamp_max_(Tensor& self, const Tensor& max);
Tensor& clamp_max_out(Tensor& out, const Tensor& x, Scalar max);
Tensor& clamp_max_out(Tensor& out, const Tensor& x, const Tensor& max);

#undef TESSERA_POINTWISE_UNARY_DECL

// -- Binary, with broadcasting and type promotion (result_type).
#define TESSERA_POINTWISE_BINARY_DECL(name)                         \
  Tensor name(const Tensor& a, const Tensor& b);                    \
  Tensor name(const Tensor& a, Scalar b);                           \
  Tensor& name##_(Tensor& self, const Tensor& other);               \
  Tensor& name##_(Tensor& self, Scalar other);                      \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b); \
  Tensor& name##_out(Tensor& out, const Tensor& a, Scalar b);

// The Tensor rows of TESSERA_POINTWISE_BINARY_OP_TABLE: floor_divide,
// remainder (Python's %: sign of the divisor), fmod (C's: sign of the
// dividend), pow, maximum, minimum (NaN-propagating), atan2, logaddexp,
// logaddexp2 (floating only, without overflow), the comparisons eq ... ge
// and logical_and/or/xor (bool results), bitwise_and/or/xor (integral and
// bool) and bitwise_left_shift/right_shift (integral). Integer division and
// remainder by zero raise ValueError ("ZeroDivisionError"); integer pow
// with a negative Scalar exponent is a ValueError, and with a negative
// tensor exponent gives 1/x truncated (1, -1 or 0), as PyTorch.
#define TESSERA_POINTWISE_BINARY_DECL_Tensor(name) TESSERA_POINTWISE_BINARY_DECL(name)
#define TESSERA_POINTWISE_BINARY_DECL_Backward(name)
#define TESSERA_POINTWISE_BINARY_DECL_Custom(name)
#define TESSERA_POINTWISE_BINARY_ROW(Enum, name, Rule, Forms) \
  TESSERA_POINTWISE_BINARY_DECL_##Forms(name)
TESSERA_POINTWISE_BINARY_OP_TABLE(TESSERA_POINTWISE_BINARY_ROW)
#undef TESSERA_POINTWISE_BINARY_ROW
#undef TESSERA_POINTWISE_BINARY_DECL_Tensor
#undef TESSERA_POINTWISE_BINARY_DECL_Backward
#undef TESSERA_POINTWISE_BINARY_DECL_Custom

#undef TESSERA_POINTWISE_BINARY_DECL

// A Scalar first operand (PyTorch's Scalar_Tensor overloads): base **
// exponent, a % b, a << b, a >> b.
Tensor pow(Scalar base, const Tensor& exponent);
Tensor remainder(Scalar a, const Tensor& b);
Tensor bitwise_left_shift(Scalar a, const Tensor& b);
Tensor bitwise_right_shift(Scalar a, const Tensor& b);

// div with rounding_mode: "" (or std::nullopt) true division, "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> rounding_mode);
Tensor& div_(Tensor& self, const Tensor& other,
             std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor& div_(Tensor& self, Scalar other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                std::optional<std::string_view> rounding_mode = std::nullopt);

// out= and Scalar in-place forms of add/sub/mul (declared in ops.h).
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& add_(Tensor& self, Scalar other, Scalar alpha = 1);
Tensor& sub_(Tensor& self, Scalar other, Scalar alpha = 1);
Tensor& mul_(Tensor& self, Scalar other);

// -- Ternary.
// cond ? a : b; cond must be bool; result_type(a, b).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor& where_out(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// start + weight * (end - start); floating, start and end of one dtype.
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor& lerp_(Tensor& self, const Tensor& end, Scalar weight);
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight);
Tensor& lerp_out(Tensor& out, const Tensor& start, const Tensor& end, Scalar weight);
Tensor& lerp_out(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight);
// self + value * t1 * t2 and self + value * t1 / t2 (addcdiv: not integers).
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor& addcmul_(Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor& addcmul_out(Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2,
                    Scalar value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor& addcdiv_(Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor& addcdiv_out(Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2,
                    Scalar value = 1);

// -- Activation gradients (what autograd asks for). grad and self/output
// broadcast; the result has their promoted dtype.
Tensor threshold_backward(const Tensor& grad, const Tensor& self, Scalar threshold);
Tensor relu_backward(const Tensor& grad, const Tensor& result);  // threshold 0
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate = "none");
Tensor silu_backward(const Tensor& grad, const Tensor& self);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& output);
Tensor tanh_backward(const Tensor& grad, const Tensor& output);
// Floating dtypes only, as PyTorch's.
Tensor hardswish_backward(const Tensor& grad, const Tensor& self);
Tensor hardsigmoid_backward(const Tensor& grad, const Tensor& self);

// -- Activations composed from the ops above (activation_composite.cc), so
// every device has them; floating dtypes only (float16 and bfloat16 compute
// in float32). In the _backward forms grad and the saved tensor broadcast.
Tensor leaky_relu(const Tensor& x, Scalar negative_slope = 0.01);
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, Scalar negative_slope);
// scale * (x > 0 ? x : alpha * (exp(input_scale * x) - 1)); selu and celu are elu.
Tensor elu(const Tensor& x, Scalar alpha = 1, Scalar scale = 1, Scalar input_scale = 1);
// self_or_result is elu's result when is_result (the in-place form), else its input.
Tensor elu_backward(const Tensor& grad, Scalar alpha, Scalar scale, Scalar input_scale,
                    bool is_result, const Tensor& self_or_result);
// beta * x > threshold ? x : log(1 + exp(beta * x)) / beta.
Tensor softplus(const Tensor& x, Scalar beta = 1, Scalar threshold = 20);
Tensor softplus_backward(const Tensor& grad, const Tensor& self, Scalar beta, Scalar threshold);
Tensor hardtanh(const Tensor& x, Scalar min_val = -1, Scalar max_val = 1);  // also integers
Tensor hardtanh_backward(const Tensor& grad, const Tensor& self, Scalar min_val, Scalar max_val);
Tensor log_sigmoid(const Tensor& x);
Tensor log_sigmoid_backward(const Tensor& grad, const Tensor& self);
Tensor mish(const Tensor& x);  // x * tanh(softplus(x))
Tensor mish_backward(const Tensor& grad, const Tensor& self);

}  // namespace tessera
