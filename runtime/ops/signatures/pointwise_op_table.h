// The pointwise op tables: each op of the Unary, PointwiseBinary, Binary and
// Ternary kernels declared once, as one row. Everything that must agree
// about an op is derived from its row:
//   - the kernel enums (kernels::UnaryOp ..., in signatures/pointwise.h),
//     whose values are the rows' positions;
//   - the front end's name and dtype rule (pointwise_unary.cc,
//     pointwise_binary.cc) and its declarations (pointwise_ops.h);
//   - the bridge's aten registrations and the Python module's functions
//     for the op forms the row names;
//   - the shaders' op numbers: devices/vulkan generates
//     pointwise_op_constants.glsl from these rows at build time, so a
//     shader says `case UNARY_OP_ERF:`, never a number.
// Adding an op is one row here plus its kernels (docs/adding-a-device.md,
// "Adding an op"). Rows may go anywhere: every number is derived.
//
// This header has no includes, so the build-time generator of the shader
// constants compiles it alone.
#pragma once

// -- Unary: X(Enum, name, Rule, Forms, Foreach)
//   Enum   the kernels::UnaryOp value, k<Enum>
//   name   the op's name in errors and, for generated forms, the C++
//          function (tessera::name, name_, name_out) and the aten op
//   Rule   how the front end treats dtypes (kernels::UnaryRule)
//   Forms  Tensor:   name/name_/name_out generated, registered for aten and
//                    as a function and Tensor method of the Python module;
//          Function: the same, but a module function only (torch.nn.functional
//                    activations, which torch.Tensor lacks);
//          Custom:   front ends written by hand (extra arguments, one name
//                    for several enums)
//   Foreach  Foreach: aten's _foreach_<name> and _foreach_<name>_ run as
//            one multi-tensor call (bridge and Python module); NoForeach
#define TESSERA_UNARY_OP_TABLE(X)                            \
  X(Neg, neg, KeepNoBool, Tensor, Foreach)                   \
  X(Abs, abs, KeepNoBool, Tensor, Foreach)                   \
  X(Sign, sign, Keep, Tensor, Foreach)                       \
  X(Exp, exp, ToFloat, Tensor, Foreach)                      \
  X(Expm1, expm1, ToFloat, Tensor, Foreach)                  \
  X(Log, log, ToFloat, Tensor, Foreach)                      \
  X(Log1p, log1p, ToFloat, Tensor, Foreach)                  \
  X(Log2, log2, ToFloat, Tensor, Foreach)                    \
  X(Log10, log10, ToFloat, Tensor, Foreach)                  \
  X(Sqrt, sqrt, ToFloat, Tensor, Foreach)                    \
  X(Rsqrt, rsqrt, ToFloat, Tensor, Foreach)                  \
  X(Reciprocal, reciprocal, ToFloat, Tensor, Foreach)        \
  X(Sin, sin, ToFloat, Tensor, Foreach)                      \
  X(Cos, cos, ToFloat, Tensor, Foreach)                      \
  X(Tan, tan, ToFloat, Tensor, Foreach)                      \
  X(Asin, asin, ToFloat, Tensor, Foreach)                    \
  X(Acos, acos, ToFloat, Tensor, Foreach)                    \
  X(Atan, atan, ToFloat, Tensor, Foreach)                    \
  X(Sinh, sinh, ToFloat, Tensor, Foreach)                    \
  X(Cosh, cosh, ToFloat, Tensor, Foreach)                    \
  X(Tanh, tanh, ToFloat, Tensor, Foreach)                    \
  X(Asinh, asinh, ToFloat, Tensor, NoForeach)                \
  X(Acosh, acosh, ToFloat, Tensor, NoForeach)                \
  X(Atanh, atanh, ToFloat, Tensor, NoForeach)                \
  X(Erf, erf, ToFloat, Tensor, Foreach)                      \
  X(Sigmoid, sigmoid, ToFloat, Tensor, Foreach)              \
  X(Relu, relu, KeepNoBool, Tensor, NoForeach)               \
  X(Silu, silu, FloatOnly, Function, NoForeach)              \
  X(Hardswish, hardswish, FloatOnly, Function, NoForeach)    \
  X(Hardsigmoid, hardsigmoid, FloatOnly, Function, NoForeach)\
  /* gelu(x, approximate): exact x * Phi(x), or the tanh form */ \
  X(Gelu, gelu, FloatOnly, Custom, NoForeach)                \
  X(GeluTanh, gelu, FloatOnly, Custom, NoForeach)            \
  X(Floor, floor, KeepNoBool, Tensor, Foreach)               \
  X(Ceil, ceil, KeepNoBool, Tensor, Foreach)                 \
  X(Round, round, KeepNoBool, Tensor, Foreach)               \
  X(Trunc, trunc, KeepNoBool, Tensor, Foreach)               \
  /* clamp(x, min, max): p0, p1 are the bounds */            \
  X(Clamp, clamp, KeepNoBool, Custom, NoForeach)             \
  X(ClampMin, clamp, KeepNoBool, Custom, NoForeach)          \
  X(ClampMax, clamp, KeepNoBool, Custom, NoForeach)          \
  X(BitwiseNot, bitwise_not, Bitwise, Tensor, NoForeach)     \
  X(LogicalNot, logical_not, Predicate, Tensor, NoForeach)   \
  /* bool results with no in-place form */                   \
  X(Isnan, isnan, Predicate, Custom, NoForeach)              \
  X(Isinf, isinf, Predicate, Custom, NoForeach)              \
  X(Isfinite, isfinite, Predicate, Custom, NoForeach)        \
  X(Isneginf, isneginf, Predicate, Custom, NoForeach)        \
  X(Isposinf, isposinf, Predicate, Custom, NoForeach)

// -- PointwiseBinary: X(Enum, name, Rule, Forms)
//   Rule   kernels::PointwiseBinaryRule
//   Forms  Tensor:   the six forms (tensor or Scalar b; value, in-place,
//                    out=) generated (pointwise_ops.h);
//          Backward: an activation gradient, a = incoming gradient (its
//                    front end in pointwise_binary.cc);
//          Custom:   written by hand (div's rounding modes)
#define TESSERA_POINTWISE_BINARY_OP_TABLE(X)                         \
  X(DivTrunc, div, Numeric, Custom)       /* ValueError on integer / 0 */ \
  X(DivFloor, floor_divide, Numeric, Tensor)                         \
  X(Remainder, remainder, Numeric, Tensor) /* sign of the divisor */ \
  X(Fmod, fmod, Numeric, Tensor)           /* sign of the dividend */\
  X(Pow, pow, Numeric, Tensor)  /* ValueError: integer ** negative Scalar */ \
  X(Maximum, maximum, Any, Tensor)         /* NaN-propagating */     \
  X(Minimum, minimum, Any, Tensor)                                   \
  X(Atan2, atan2, ToFloat, Tensor)                                   \
  X(Logaddexp, logaddexp, FloatOnly, Tensor)                         \
  X(Logaddexp2, logaddexp2, FloatOnly, Tensor)                       \
  X(BitwiseAnd, bitwise_and, Bitwise, Tensor)                        \
  X(BitwiseOr, bitwise_or, Bitwise, Tensor)                          \
  X(BitwiseXor, bitwise_xor, Bitwise, Tensor)                        \
  X(ShiftLeft, bitwise_left_shift, Integral, Tensor)                 \
  X(ShiftRight, bitwise_right_shift, Integral, Tensor)               \
  X(Eq, eq, Compare, Tensor)                                         \
  X(Ne, ne, Compare, Tensor)                                         \
  X(Lt, lt, Compare, Tensor)                                         \
  X(Le, le, Compare, Tensor)                                         \
  X(Gt, gt, Compare, Tensor)                                         \
  X(Ge, ge, Compare, Tensor)                                         \
  X(LogicalAnd, logical_and, Compare, Tensor)                        \
  X(LogicalOr, logical_or, Compare, Tensor)                          \
  X(LogicalXor, logical_xor, Compare, Tensor)                        \
  /* b is self; out = b <= p0 ? 0 : a; integers kept */             \
  X(ThresholdBackward, threshold_backward, Numeric, Backward)        \
  X(GeluBackward, gelu_backward, ToFloat, Backward)  /* b is self */ \
  X(GeluTanhBackward, gelu_backward, ToFloat, Backward)              \
  X(SiluBackward, silu_backward, ToFloat, Backward)                  \
  /* b is the forward output y: a * y * (1 - y) */                  \
  X(SigmoidBackward, sigmoid_backward, ToFloat, Backward)            \
  /* b is the forward output y: a * (1 - y^2) */                    \
  X(TanhBackward, tanh_backward, ToFloat, Backward)                  \
  /* b is self: 0 for b <= -3, a * (b / 3 + 1/2) below 3, else a */ \
  X(HardswishBackward, hardswish_backward, FloatOnly, Backward)      \
  /* b is self: a / 6 for -3 < b < 3, else 0 */                     \
  X(HardsigmoidBackward, hardsigmoid_backward, FloatOnly, Backward)

// -- Binary (add, sub with alpha; mul; div): X(Enum, name)
#define TESSERA_BINARY_OP_TABLE(X) \
  X(Add, add)                      \
  X(Sub, sub)                      \
  X(Mul, mul)                      \
  X(Div, div)

// -- Ternary: X(Enum, name)
#define TESSERA_TERNARY_OP_TABLE(X)                       \
  X(Where, where)     /* out = a ? b : c; a is bool */    \
  X(Lerp, lerp)       /* out = a + c * (b - a) */         \
  X(Addcmul, addcmul) /* out = a + value * b * c */       \
  X(Addcdiv, addcdiv) /* out = a + value * b / c */
