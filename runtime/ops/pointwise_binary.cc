// Binary front ends beyond add/sub/mul/div: rounding division, remainder,
// fmod, pow, maximum/minimum, atan2, logaddexp, comparisons, logical and bitwise ops, each
// with tensor and Scalar operands, in-place and out= forms.
#include <cmath>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using kernels::PointwiseBinaryOp;
using pointwise::Target;
using Op = PointwiseBinaryOp;

using Rule = kernels::PointwiseBinaryRule;
using Info = kernels::PointwiseBinaryOpInfo;
using kernels::info;

bool is_backward(Op op) { return kernels::is_activation_backward(op); }

// An operand: a tensor or a Scalar (a Python number in PyTorch).
struct Operand {
  const Tensor* t = nullptr;
  Scalar s;
  std::string describe() const { return t ? tessera::describe(*t) : pointwise::describe_scalar(s); }
};

// The dtype the kernel computes in, after the op's dtype checks.
DType compute_dtype(Op op, DType common, const Operand& a, const Operand& b) {
  const Info i = info(op);
  auto operands = [&] { return a.describe() + " and " + b.describe(); };
  switch (i.rule) {
    case Rule::kNumeric:
      TESSERA_CHECK(common != DType::kBool, TypeError, i.name, ": not implemented for bool (",
                    operands(), ")");
      if (is_backward(op)) {
        // threshold_backward keeps integers, as PyTorch's.
        return common;
      }
      return common;
    case Rule::kAny:
    case Rule::kCompare: return common;
    case Rule::kToFloat:
      if (is_backward(op)) {
        TESSERA_CHECK(is_floating(common), TypeError, i.name,
                      ": needs floating dtypes, got ", operands());
      }
      return is_floating(common) ? common : DType::kF32;
    case Rule::kFloatOnly:
      TESSERA_CHECK(is_floating(common), TypeError, i.name,
                    ": needs floating dtypes (float16, bfloat16, float32, float64), got ",
                    operands());
      return common;
    case Rule::kBitwise:
      TESSERA_CHECK(!is_floating(common), TypeError, i.name,
                    ": needs integral or bool dtypes, got ", operands());
      return common;
    case Rule::kIntegral:
      TESSERA_CHECK(is_integral(common), TypeError, i.name, ": needs integral dtypes, got ",
                    operands());
      return common;
  }
  return common;
}

// pow(x, e) for the integer exponents that models use most (squares in
// norms and losses, the x^1 in their gradient, GPT-2's tanh GELU's x^3),
// as a copy, multiplies or a reciprocal: a general pow costs tens of times
// as much (x^3 of 1M floats: 4.4 ms against torch's 0.08). These give
// IEEE pow's values, signed zeros and infinities included ((1 / x)^2 is
// within 2 ulp of pow(x, -2); x x x is PyTorch's CPU x^3, to the bit).
// 0.5 is left to pow: sqrt differs at -0 and -inf. Each pass reads its
// inputs and writes dst elementwise, so dst may be x itself (pow_).
enum class PowForm { kGeneral, kIdentity, kSquare, kCube, kReciprocal, kInverseSquare };

PowForm pow_form(Op op, const Operand& a, const Operand& b, DType dtype) {
  if (op != Op::kPow || !a.t || b.t || !is_floating(dtype) || b.s.is_bool()) {
    return PowForm::kGeneral;
  }
  const double e = b.s.to<double>();
  if (e == 1.0) return PowForm::kIdentity;
  if (e == 2.0) return PowForm::kSquare;
  if (e == 3.0) return PowForm::kCube;
  if (e == -1.0) return PowForm::kReciprocal;
  if (e == -2.0) return PowForm::kInverseSquare;
  return PowForm::kGeneral;
}

void run_pow_form(PowForm form, Device device, Tensor& dst, const Tensor& x) {
  using kernels::UnaryOp;
  auto unary = [&](UnaryOp u, const Tensor& in) {
    call_kernel<kernels::Unary>(device, u, dst, in, Scalar(0), Scalar(0));
  };
  switch (form) {
    case PowForm::kIdentity:
      dst.copy_(x);
      return;
    case PowForm::kSquare:
      call_kernel<kernels::Binary>(device, kernels::BinaryOp::kMul, dst, x, x, Scalar(1));
      return;
    case PowForm::kCube: {
      // (x x) x, the square beside dst: dst may be x.
      Tensor square = empty(x.sizes(), TensorOptions(x.dtype(), device));
      call_kernel<kernels::Binary>(device, kernels::BinaryOp::kMul, square, x, x, Scalar(1));
      call_kernel<kernels::Binary>(device, kernels::BinaryOp::kMul, dst, square, x, Scalar(1));
      return;
    }
    case PowForm::kReciprocal: return unary(UnaryOp::kReciprocal, x);
    case PowForm::kInverseSquare:
      // (1 / x)^2 rather than 1 / x^2: x^2 overflows for x above 1.8e19,
      // where x^-2 is still a (denormal) float.
      unary(UnaryOp::kReciprocal, x);
      call_kernel<kernels::Binary>(device, kernels::BinaryOp::kMul, dst, dst, dst, Scalar(1));
      return;
    case PowForm::kGeneral: break;
  }
}

Tensor binary_value(Op op, const Operand& a, const Operand& b, Target target, Scalar p0 = 0) {
  const Info i = info(op);
  TESSERA_CHECK(a.t || b.t, ValueError, i.name, ": needs a tensor operand");
  TESSERA_CHECK((!a.t || a.t->defined()) && (!b.t || b.t->defined()), ValueError, i.name,
                ": undefined tensor argument");
  DType common;
  Device device;
  Shape shape;
  if (a.t && b.t) {
    common = result_type(*a.t, *b.t);
    device = common_device(i.name, *a.t, *b.t);
    shape = broadcast_shapes(a.t->sizes(), b.t->sizes(), i.name);
  } else {
    const Tensor& t = a.t ? *a.t : *b.t;
    common = result_type(t, a.t ? b.s : a.s);
    device = t.device();
    shape = t.sizes();
  }
  const DType dtype = compute_dtype(op, common, a, b);
  if (op == Op::kPow && !is_floating(dtype) && !b.t && b.s.to<double>() < 0) {
    throw ValueError(detail::concat("pow: integers to negative integer powers are not allowed (",
                                    a.describe(), " ** ", b.describe(), ")"));
  }
  const DType result = info(op).rule == Rule::kCompare ? DType::kBool : dtype;
  auto operand = [&](const Operand& x) {
    Tensor t = x.t ? prepare_operand(*x.t, device, dtype) : pointwise::scalar_tensor(x.s, dtype, device);
    return t.expand(shape);
  };
  const PowForm form = pow_form(op, a, b, dtype);
  return pointwise::deliver_value(i.name, target, shape, result, device, {a.t, b.t},
                                  [&](Tensor& dst) {
    if (form != PowForm::kGeneral) return run_pow_form(form, device, dst, operand(a));
    call_kernel<kernels::PointwiseBinary>(device, op, dst, operand(a), operand(b), p0);
  });
}

Operand of(const Tensor& t) { return {&t, 0}; }
Operand of(Scalar s) { return {nullptr, s}; }

std::optional<Op> rounding_op(std::optional<std::string_view> mode) {
  if (!mode || mode->empty()) return std::nullopt;
  if (*mode == "trunc") return Op::kDivTrunc;
  if (*mode == "floor") return Op::kDivFloor;
  throw ValueError(detail::concat(
      "div: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'"));
}

// The result of an op already computed, written into a target.
Tensor& write_to(const char* name, Target target, const Tensor& result,
                 std::initializer_list<const Tensor*> inputs) {
  return pointwise::deliver(name, target, result.sizes(), result.dtype(), result.device(), inputs,
                            [&](Tensor& dst) { dst.copy_(result); });
}

}  // namespace

#define TESSERA_POINTWISE_BINARY_DEF(name, op)                                                \
  Tensor name(const Tensor& a, const Tensor& b) {                                             \
    return binary_value(Op::op, of(a), of(b), pointwise::functional());                       \
  }                                                                                           \
  Tensor name(const Tensor& a, Scalar b) {                                                    \
    return binary_value(Op::op, of(a), of(b), pointwise::functional());                       \
  }                                                                                           \
  Tensor& name##_(Tensor& self, const Tensor& other) {                                        \
    binary_value(Op::op, of(self), of(other), pointwise::in_place(self));                     \
    return self;                                                                              \
  }                                                                                           \
  Tensor& name##_(Tensor& self, Scalar other) {                                               \
    binary_value(Op::op, of(self), of(other), pointwise::in_place(self));                     \
    return self;                                                                              \
  }                                                                                           \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                         \
    binary_value(Op::op, of(a), of(b), pointwise::into(out));                                 \
    return out;                                                                               \
  }                                                                                           \
  Tensor& name##_out(Tensor& out, const Tensor& a, Scalar b) {                                \
    binary_value(Op::op, of(a), of(b), pointwise::into(out));                                 \
    return out;                                                                               \
  }

// The Tensor rows of the table.
#define TESSERA_POINTWISE_BINARY_DEF_Tensor(name, op) TESSERA_POINTWISE_BINARY_DEF(name, op)
#define TESSERA_POINTWISE_BINARY_DEF_Backward(name, op)
#define TESSERA_POINTWISE_BINARY_DEF_Custom(name, op)
#define TESSERA_POINTWISE_BINARY_ROW(Enum, name, Rule, Forms) \
  TESSERA_POINTWISE_BINARY_DEF_##Forms(name, k##Enum)
TESSERA_POINTWISE_BINARY_OP_TABLE(TESSERA_POINTWISE_BINARY_ROW)
#undef TESSERA_POINTWISE_BINARY_ROW
#undef TESSERA_POINTWISE_BINARY_DEF_Tensor
#undef TESSERA_POINTWISE_BINARY_DEF_Backward
#undef TESSERA_POINTWISE_BINARY_DEF_Custom
#undef TESSERA_POINTWISE_BINARY_DEF

Tensor pow(Scalar base, const Tensor& exponent) {
  return binary_value(Op::kPow, of(base), of(exponent), pointwise::functional());
}
Tensor remainder(Scalar a, const Tensor& b) {
  return binary_value(Op::kRemainder, of(a), of(b), pointwise::functional());
}
Tensor bitwise_left_shift(Scalar a, const Tensor& b) {
  return binary_value(Op::kShiftLeft, of(a), of(b), pointwise::functional());
}
Tensor bitwise_right_shift(Scalar a, const Tensor& b) {
  return binary_value(Op::kShiftRight, of(a), of(b), pointwise::functional());
}

// The dtype a Scalar operand of an in-place op joins as: its kind's default
// dtype (so it promotes exactly as the Scalar would), except that a float
// number next to a float64 tensor stays float64 -- as a float32 0-d tensor
// it would be rounded to float32 before the op (x.add_(0.1) on float64
// must add 0.1, not 0.10000000149).
static DType in_place_scalar_dtype(const Tensor& self, const Scalar& other) {
  const DType fallback = default_dtype_for(other.category());
  return other.is_floating() && self.dtype() == DType::kF64 ? DType::kF64 : fallback;
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  if (auto op = rounding_op(rounding_mode)) {
    return binary_value(*op, of(a), of(b), pointwise::functional());
  }
  return div(a, b);
}
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> rounding_mode) {
  if (auto op = rounding_op(rounding_mode)) {
    return binary_value(*op, of(a), of(b), pointwise::functional());
  }
  return div(a, b);
}
Tensor& div_(Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  if (auto op = rounding_op(rounding_mode)) {
    binary_value(*op, of(self), of(other), pointwise::in_place(self));
    return self;
  }
  return self.div_(other);
}
Tensor& div_(Tensor& self, Scalar other, std::optional<std::string_view> rounding_mode) {
  if (auto op = rounding_op(rounding_mode)) {
    binary_value(*op, of(self), of(other), pointwise::in_place(self));
    return self;
  }
  return self.div_(pointwise::scalar_tensor(other, in_place_scalar_dtype(self, other), self.device()));
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                std::optional<std::string_view> rounding_mode) {
  if (auto op = rounding_op(rounding_mode)) {
    binary_value(*op, of(a), of(b), pointwise::into(out));
    return out;
  }
  return write_to("div", pointwise::into(out), div(a, b), {&a, &b});
}

// A Scalar joins as a 0-d tensor of its kind's default dtype, which
// promotes exactly as the Scalar would (a lower-priority operand of its
// category) -- and, next to a 16-bit float self, is not rounded to 16 bits
// before the op (binary_ computes in float32 then).
Tensor& add_(Tensor& self, Scalar other, Scalar alpha) {
  return self.add_(pointwise::scalar_tensor(other, in_place_scalar_dtype(self, other), self.device()), alpha);
}
Tensor& sub_(Tensor& self, Scalar other, Scalar alpha) {
  return self.sub_(pointwise::scalar_tensor(other, in_place_scalar_dtype(self, other), self.device()), alpha);
}
Tensor& mul_(Tensor& self, Scalar other) {
  return self.mul_(pointwise::scalar_tensor(other, in_place_scalar_dtype(self, other), self.device()));
}

// -- clamp with tensor bounds: a composite of maximum and minimum.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  TESSERA_CHECK(has_min || has_max, ValueError,
                "clamp: at least one of 'min' or 'max' must not be None");
  Tensor r = x;
  if (has_min) r = maximum(r, *min);
  if (has_max) r = minimum(r, *max);
  if (r.is_same(x)) r = x.clone();
  TESSERA_CHECK(r.dtype() != DType::kBool, TypeError, "clamp: not implemented for bool (",
                describe(x), ")");
  return r;
}
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  Tensor r = clamp(self, min, max);
  return write_to("clamp", pointwise::in_place(self), r,
                  {&self, min ? &*min : nullptr, max ? &*max : nullptr});
}
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Tensor>& min,
                  const std::optional<Tensor>& max) {
  Tensor r = clamp(x, min, max);
  return write_to("clamp", pointwise::into(out), r,
                  {&x, min ? &*min : nullptr, max ? &*max : nullptr});
}

// -- Activation gradients.
Tensor threshold_backward(const Tensor& grad, const Tensor& self, Scalar threshold) {
  return binary_value(Op::kThresholdBackward, of(grad), of(self), pointwise::functional(),
                      threshold);
}
Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  return threshold_backward(grad, result, 0);
}
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  Op op;
  if (approximate == "none") op = Op::kGeluBackward;
  else if (approximate == "tanh") op = Op::kGeluTanhBackward;
  else throw ValueError(detail::concat("gelu_backward: approximate argument must be either none or tanh, got '",
                                       approximate, "'"));
  return binary_value(op, of(grad), of(self), pointwise::functional());
}
Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  return binary_value(Op::kSiluBackward, of(grad), of(self), pointwise::functional());
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& output) {
  return binary_value(Op::kSigmoidBackward, of(grad), of(output), pointwise::functional());
}
Tensor tanh_backward(const Tensor& grad, const Tensor& output) {
  return binary_value(Op::kTanhBackward, of(grad), of(output), pointwise::functional());
}
Tensor hardswish_backward(const Tensor& grad, const Tensor& self) {
  return binary_value(Op::kHardswishBackward, of(grad), of(self), pointwise::functional());
}
Tensor hardsigmoid_backward(const Tensor& grad, const Tensor& self) {
  return binary_value(Op::kHardsigmoidBackward, of(grad), of(self), pointwise::functional());
}

}  // namespace tessera
