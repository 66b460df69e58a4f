// Ternary front ends: where, lerp, addcmul, addcdiv.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using kernels::TernaryOp;
using pointwise::Target;

// The device of three operands: all on one device, except that 0-d host
// tensors may join tensors on another device (as common_device allows).
Device common_device3(const char* name, const Tensor& a, const Tensor& b, const Tensor& c) {
  const Device host = host_device();
  auto movable = [&](const Tensor& t) { return t.dim() == 0 && t.device() == host; };
  Device device = a.device();
  for (const Tensor* t : {&a, &b, &c}) {
    if (!movable(*t)) {
      device = t->device();
      break;
    }
  }
  for (const Tensor* t : {&a, &b, &c}) {
    TESSERA_CHECK(t->device() == device || movable(*t), DeviceError, name,
                  ": expected all tensors to be on the same device, got ", describe(a), ", ",
                  describe(b), " and ", describe(c));
  }
  return device;
}

// out = op(a, b, c) with every operand promoted to `dtype` (where's
// condition a stays bool) and broadcast.
Tensor ternary_value(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c,
                     DType dtype, Scalar value, Target target) {
  const char* name = kernels::name_of(op);
  TESSERA_CHECK(a.defined() && b.defined() && c.defined(), ValueError, name,
                ": undefined tensor argument");
  Device device = common_device3(name, a, b, c);
  Shape shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes(), name), c.sizes(), name);
  const DType adt = op == TernaryOp::kWhere ? DType::kBool : dtype;
  return pointwise::deliver_value(name, target, shape, dtype, device, {&a, &b, &c},
                                  [&](Tensor& dst) {
    call_kernel<kernels::Ternary>(device, op, dst, prepare_operand(a, device, adt).expand(shape),
                                  prepare_operand(b, device, dtype).expand(shape),
                                  prepare_operand(c, device, dtype).expand(shape), value);
  });
}

DType promote3(const Tensor& a, const Tensor& b, const Tensor& c) {
  // result_type over three tensors: dimensioned ones first, then 0-d ones.
  DType ab = result_type(a, b);
  Tensor probe = empty(a.dim() > 0 || b.dim() > 0 ? Shape{0} : Shape{},
                       TensorOptions(ab, host_device()));
  return result_type(probe, c);
}

Tensor where_value(const Tensor& cond, const Tensor& a, const Tensor& b, Target target) {
  TESSERA_CHECK(cond.defined() && a.defined() && b.defined(), ValueError,
                "where: undefined tensor argument");
  TESSERA_CHECK(cond.dtype() == DType::kBool, TypeError,
                "where: expected condition to be a boolean tensor, got ", describe(cond));
  return ternary_value(TernaryOp::kWhere, cond, a, b, result_type(a, b), 0, target);
}

Tensor lerp_value(const Tensor& start, const Tensor& end, const Tensor& weight, Target target) {
  TESSERA_CHECK(start.defined() && end.defined() && weight.defined(), ValueError,
                "lerp: undefined tensor argument");
  TESSERA_CHECK(start.dtype() == end.dtype(), TypeError, "lerp: expected dtype ",
                dtype_name(start.dtype()), " for `end` but got ", describe(end));
  TESSERA_CHECK(start.dtype() == weight.dtype(), TypeError, "lerp: expected dtype ",
                dtype_name(start.dtype()), " for `weight` but got ", describe(weight));
  TESSERA_CHECK(is_floating(start.dtype()), TypeError, "lerp: needs floating dtypes, got ",
                describe(start));
  return ternary_value(TernaryOp::kLerp, start, end, weight, start.dtype(), 0, target);
}

Tensor lerp_scalar_value(const Tensor& start, const Tensor& end, Scalar weight, Target target) {
  TESSERA_CHECK(start.defined() && end.defined(), ValueError, "lerp: undefined tensor argument");
  TESSERA_CHECK(start.dtype() == end.dtype(), TypeError, "lerp: expected dtype ",
                dtype_name(start.dtype()), " for `end` but got ", describe(end));
  TESSERA_CHECK(is_floating(start.dtype()), TypeError, "lerp: needs floating dtypes, got ",
                describe(start));
  if (is_reduced_float(start.dtype())) {
    // PyTorch keeps a Scalar weight and the arithmetic in float32 for 16-bit
    // floats and rounds once; a weight rounded to float16 (0.4 -> 0.39990)
    // would shift results.
    const Shape shape = broadcast_shapes(start.sizes(), end.sizes(), "lerp");
    return pointwise::deliver_value(
        "lerp", target, shape, start.dtype(), start.device(), {&start, &end}, [&](Tensor& dst) {
          dst.copy_(lerp_scalar_value(start.to(DType::kF32), end.to(DType::kF32), weight,
                                      pointwise::functional()));
        });
  }
  Tensor w = pointwise::scalar_tensor(weight, start.dtype(), start.device());
  return ternary_value(TernaryOp::kLerp, start, end, w, start.dtype(), 0, target);
}

Tensor addc_value(TernaryOp op, const Tensor& self, const Tensor& t1, const Tensor& t2,
                  Scalar value, Target target) {
  const char* name = kernels::name_of(op);
  TESSERA_CHECK(self.defined() && t1.defined() && t2.defined(), ValueError, name,
                ": undefined tensor argument");
  DType dtype = promote3(self, t1, t2);
  if (op == TernaryOp::kAddcdiv) {
    TESSERA_CHECK(is_floating(dtype), TypeError,
                  "addcdiv: integer division with addcdiv is not supported; use addcmul(self, t1, "
                  "reciprocal(t2)) or div with rounding_mode (", describe(t1), " / ", describe(t2),
                  ")");
  }
  TESSERA_CHECK(dtype != DType::kBool, TypeError, name, ": not implemented for bool");
  TESSERA_CHECK(!(value.is_floating() && !is_floating(dtype)), TypeError, name,
                ": for integral input tensors, argument value must not be a floating point "
                "number (value=", value.to_string(), ")");
  return ternary_value(op, self, t1, t2, dtype, value, target);
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return where_value(cond, a, b, pointwise::functional());
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  TESSERA_CHECK(a.defined(), ValueError, "where: undefined tensor argument");
  DType dt = result_type(a, b);
  return where_value(cond, a, pointwise::scalar_tensor(b, dt, a.device()), pointwise::functional());
}
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  TESSERA_CHECK(b.defined(), ValueError, "where: undefined tensor argument");
  DType dt = result_type(b, a);
  return where_value(cond, pointwise::scalar_tensor(a, dt, b.device()), b, pointwise::functional());
}
Tensor& where_out(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  where_value(cond, a, b, pointwise::into(out));
  return out;
}

Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  return lerp_scalar_value(start, end, weight, pointwise::functional());
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return lerp_value(start, end, weight, pointwise::functional());
}
Tensor& lerp_(Tensor& self, const Tensor& end, Scalar weight) {
  lerp_scalar_value(self, end, weight, pointwise::in_place(self));
  return self;
}
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight) {
  lerp_value(self, end, weight, pointwise::in_place(self));
  return self;
}
Tensor& lerp_out(Tensor& out, const Tensor& start, const Tensor& end, Scalar weight) {
  lerp_scalar_value(start, end, weight, pointwise::into(out));
  return out;
}
Tensor& lerp_out(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight) {
  lerp_value(start, end, weight, pointwise::into(out));
  return out;
}

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  return addc_value(TernaryOp::kAddcmul, self, t1, t2, value, pointwise::functional());
}
Tensor& addcmul_(Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  addc_value(TernaryOp::kAddcmul, self, t1, t2, value, pointwise::in_place(self));
  return self;
}
Tensor& addcmul_out(Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2,
                    Scalar value) {
  addc_value(TernaryOp::kAddcmul, self, t1, t2, value, pointwise::into(out));
  return out;
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  return addc_value(TernaryOp::kAddcdiv, self, t1, t2, value, pointwise::functional());
}
Tensor& addcdiv_(Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  addc_value(TernaryOp::kAddcdiv, self, t1, t2, value, pointwise::in_place(self));
  return self;
}
Tensor& addcdiv_out(Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2,
                    Scalar value) {
  addc_value(TernaryOp::kAddcdiv, self, t1, t2, value, pointwise::into(out));
  return out;
}

}  // namespace tessera
