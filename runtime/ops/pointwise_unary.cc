// Unary front ends: the dtype rules of each op, then the Unary kernel.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using kernels::UnaryOp;
using pointwise::Target;

using Rule = kernels::UnaryRule;
using kernels::info;

bool rounds(UnaryOp op) {
  return op == UnaryOp::kFloor || op == UnaryOp::kCeil || op == UnaryOp::kRound ||
         op == UnaryOp::kTrunc;
}

// The dtype the kernel computes in (its input and, except predicates, its
// output dtype), after the op's dtype checks.
DType compute_dtype(UnaryOp op, const Tensor& x) {
  const kernels::UnaryOpInfo i = info(op);
  const DType t = x.dtype();
  switch (i.rule) {
    case Rule::kKeepNoBool:
      if (op == UnaryOp::kNeg) {
        TESSERA_CHECK(t != DType::kBool, TypeError,
                      "neg: negation, the `-` operator, on a bool tensor is not supported; "
                      "use logical_not() instead (", describe(x), ")");
      }
      TESSERA_CHECK(t != DType::kBool, TypeError, i.name, ": not implemented for bool (",
                    describe(x), ")");
      return t;
    case Rule::kKeep: return t;
    case Rule::kToFloat: return is_floating(t) ? t : DType::kF32;
    case Rule::kFloatOnly:
      TESSERA_CHECK(is_floating(t), TypeError, i.name,
                    ": needs a floating dtype (float16, bfloat16, float32, float64), got ",
                    describe(x));
      return t;
    case Rule::kBitwise:
      TESSERA_CHECK(!is_floating(t), TypeError, i.name,
                    ": needs an integral or bool dtype, got ", describe(x));
      return t;
    case Rule::kPredicate: return t;
  }
  return t;
}

Tensor unary_value(UnaryOp op, const Tensor& x, Target target, Scalar p0 = 0, Scalar p1 = 0) {
  const kernels::UnaryOpInfo i = info(op);
  TESSERA_CHECK(x.defined(), ValueError, i.name, ": undefined tensor argument");
  const DType cdt = compute_dtype(op, x);
  const DType result = i.rule == Rule::kPredicate ? DType::kBool : cdt;
  const Device device = x.device();
  return pointwise::deliver_value(i.name, target, x.sizes(), result, device, {&x},
                                  [&](Tensor& dst) {
    // Rounding an integer is the identity (PyTorch returns a copy).
    if (rounds(op) && !is_floating(cdt)) {
      dst.copy_(x);
      return;
    }
    call_kernel<kernels::Unary>(device, op, dst, prepare_operand(x, device, cdt), p0, p1);
  });
}

Tensor unary(UnaryOp op, const Tensor& x) { return unary_value(op, x, pointwise::functional()); }
Tensor& unary_(UnaryOp op, Tensor& self) {
  unary_value(op, self, pointwise::in_place(self));
  return self;
}
Tensor& unary_out(UnaryOp op, Tensor& out, const Tensor& x) {
  unary_value(op, x, pointwise::into(out));
  return out;
}

UnaryOp gelu_op(std::string_view approximate) {
  if (approximate == "none") return UnaryOp::kGelu;
  if (approximate == "tanh") return UnaryOp::kGeluTanh;
  throw ValueError(detail::concat("gelu: approximate argument must be either none or tanh, got '",
                                  approximate, "'"));
}

// clamp with Scalar bounds: result_type(x, min, max), bounds checked to fit.
Tensor clamp_value(const Tensor& x, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max, Target target) {
  TESSERA_CHECK(x.defined(), ValueError, "clamp: undefined tensor argument");
  TESSERA_CHECK(min || max, ValueError, "clamp: at least one of 'min' or 'max' must not be None");
  // result_type over x and the given bounds: the Scalars join as one group.
  DType dtype = x.dtype();
  {
    Tensor probe = x;
    DType with_min = min ? result_type(probe, *min) : dtype;
    DType with_max = max ? result_type(probe, *max) : dtype;
    dtype = promote_types(with_min, with_max);
  }
  TESSERA_CHECK(dtype != DType::kBool, TypeError, "clamp: not implemented for bool (",
                describe(x), ")");
  if (min) check_scalar_fits("clamp", *min, dtype);
  if (max) check_scalar_fits("clamp", *max, dtype);
  UnaryOp op = min && max ? UnaryOp::kClamp : (min ? UnaryOp::kClampMin : UnaryOp::kClampMax);
  Scalar p0 = min ? *min : *max;
  Scalar p1 = max ? *max : Scalar(0);
  const Device device = x.device();
  return pointwise::deliver_value("clamp", target, x.sizes(), dtype, device, {&x},
                                  [&](Tensor& dst) {
    call_kernel<kernels::Unary>(device, op, dst, prepare_operand(x, device, dtype), p0, p1);
  });
}

}  // namespace

#define TESSERA_POINTWISE_UNARY_DEF(name, op)                                       \
  Tensor name(const Tensor& x) { return unary(UnaryOp::op, x); }                     \
  Tensor& name##_(Tensor& self) { return unary_(UnaryOp::op, self); }                \
  Tensor& name##_out(Tensor& out, const Tensor& x) { return unary_out(UnaryOp::op, out, x); }

// The Tensor and Function rows of the table; Custom rows are below.
#define TESSERA_POINTWISE_UNARY_DEF_Tensor(name, op) TESSERA_POINTWISE_UNARY_DEF(name, op)
#define TESSERA_POINTWISE_UNARY_DEF_Function(name, op) TESSERA_POINTWISE_UNARY_DEF(name, op)
#define TESSERA_POINTWISE_UNARY_DEF_Custom(name, op)
#define TESSERA_POINTWISE_UNARY_ROW(Enum, name, Rule, Forms, Foreach) \
  TESSERA_POINTWISE_UNARY_DEF_##Forms(name, k##Enum)
TESSERA_UNARY_OP_TABLE(TESSERA_POINTWISE_UNARY_ROW)
#undef TESSERA_POINTWISE_UNARY_ROW
#undef TESSERA_POINTWISE_UNARY_DEF_Tensor
#undef TESSERA_POINTWISE_UNARY_DEF_Function
#undef TESSERA_POINTWISE_UNARY_DEF_Custom
#undef TESSERA_POINTWISE_UNARY_DEF

Tensor isnan(const Tensor& x) { return unary(UnaryOp::kIsnan, x); }
Tensor isinf(const Tensor& x) { return unary(UnaryOp::kIsinf, x); }
Tensor isfinite(const Tensor& x) { return unary(UnaryOp::kIsfinite, x); }
Tensor isneginf(const Tensor& x) { return unary(UnaryOp::kIsneginf, x); }
Tensor isposinf(const Tensor& x) { return unary(UnaryOp::kIsposinf, x); }

namespace {
// PyTorch refuses a non-bool out here (a cast would be allowed elsewhere).
Tensor& infinity_predicate_out(UnaryOp op, Tensor& out, const Tensor& x) {
  TESSERA_CHECK(!out.defined() || out.dtype() == DType::kBool, TypeError, info(op).name,
                ": does not support non-boolean outputs, got out ", describe(out));
  return unary_out(op, out, x);
}
}  // namespace
Tensor& isneginf_out(Tensor& out, const Tensor& x) {
  return infinity_predicate_out(UnaryOp::kIsneginf, out, x);
}
Tensor& isposinf_out(Tensor& out, const Tensor& x) {
  return infinity_predicate_out(UnaryOp::kIsposinf, out, x);
}

Tensor gelu(const Tensor& x, std::string_view approximate) { return unary(gelu_op(approximate), x); }
Tensor& gelu_(Tensor& self, std::string_view approximate) {
  return unary_(gelu_op(approximate), self);
}
Tensor& gelu_out(Tensor& out, const Tensor& x, std::string_view approximate) {
  return unary_out(gelu_op(approximate), out, x);
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return clamp_value(x, min, max, pointwise::functional());
}
Tensor& clamp_(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  clamp_value(self, min, max, pointwise::in_place(self));
  return self;
}
Tensor& clamp_out(Tensor& out, const Tensor& x, std::optional<Scalar> min,
                  std::optional<Scalar> max) {
  clamp_value(x, min, max, pointwise::into(out));
  return out;
}


// clamp_min / clamp_max: clamp with one bound (same checks and messages).
Tensor clamp_min(const Tensor& x, Scalar min) { return clamp(x, min, std::nullopt); }
Tensor clamp_min(const Tensor& x, const Tensor& min) { return clamp(x, min, std::nullopt); }
Tensor& clamp_min_(Tensor& self, Scalar min) { return clamp_(self, min, std::nullopt); }
Tensor& clamp_min_(Tensor& self, const Tensor& min) { return clamp_(self, min, std::nullopt); }
Tensor& clamp_min_out(Tensor& out, const Tensor& x, Scalar min) {
  return clamp_out(out, x, min, std::nullopt);
}
Tensor& clamp_min_out(Tensor& out, const Tensor& x, const Tensor& min) {
  return clamp_out(out, x, min, std::nullopt);
}
Tensor clamp_max(const Tensor& x, Scalar max) { return clamp(x, std::nullopt, max); }
Tensor clamp_max(const Tensor& x, const Tensor& max) { return clamp(x, std::nullopt, max); }
Tensor& clamp_max_(Tensor& self, Scalar max) { return clamp_(self, std::nullopt, max); }
Tensor& clamp_max_(Tensor& self, const Tensor& max) { return clamp_(self, std::nullopt, max); }
Tensor& clamp_max_out(Tensor& out, const Tensor& x, Scalar max) {
  return clamp_out(out, x, std::nullopt, max);
}
Tensor& clamp_max_out(Tensor& out, const Tensor& x, const Tensor& max) {
  return clamp_out(out, x, std::nullopt, max);
}

}  // namespace tessera
