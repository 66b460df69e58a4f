// add, sub, mul, div: broadcasting, type promotion, in-place forms.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using kernels::BinaryOp;

// The dtype the kernel computes in, after checking the op allows it.
// `operands` describes the arguments; it is only called to build an error.
// any_bool: some operand is a bool tensor or a bool Scalar.
template <typename Describe>
DType compute_dtype(BinaryOp op, DType common, bool any_bool, const Scalar& alpha,
                    Describe&& operands) {
  const char* name = kernels::name_of(op);
  if (op == BinaryOp::kDiv && !is_floating(common)) return DType::kF32;  // true division
  if (op == BinaryOp::kSub && any_bool) {
    throw TypeError(detail::concat(
        name, ": subtraction with a bool operand is not supported; use logical_xor() or "
        "logical_not() instead (", operands(), ")"));
  }
  if (op == BinaryOp::kAdd || op == BinaryOp::kSub) {
    TESSERA_CHECK(!(alpha.is_floating() && !is_floating(common)), TypeError, name,
                  ": for integral input tensors, argument alpha must not be a floating point "
                  "number (alpha=", alpha.to_string(), ", result dtype ", dtype_name(common), ")");
    TESSERA_CHECK(!alpha.is_bool() || common == DType::kBool, TypeError, name,
                  ": boolean alpha only supported for bool results, got ", dtype_name(common));
  }
  return common;
}

// A 16-bit float result with a 0-d float32 or float64 operand (a number
// wrapped as a tensor, as the bridge and the bindings pass one): kernels
// get operands in the result's dtype, which would round the number to 16
// bits first (1e5 is inf in float16, 1e-8 is 0), where PyTorch computes in
// float with the number as a float. Such ops run in float32 and round once.
bool has_wide_number(DType dtype, const Tensor& a, const Tensor& b) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) return false;
  auto wide = [](const Tensor& t) {
    return t.dim() == 0 && (t.dtype() == DType::kF32 || t.dtype() == DType::kF64);
  };
  return wide(a) || wide(b);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const char* name = kernels::name_of(op);
  Device device = common_device(name, a, b);
  DType dtype = compute_dtype(op, result_type(a, b),
                              a.dtype() == DType::kBool || b.dtype() == DType::kBool, alpha,
                              [&] { return describe(a) + ", " + describe(b); });
  if (has_wide_number(dtype, a, b)) {
    return binary(op, a.to(DType::kF32), b.to(DType::kF32), alpha).to(dtype);
  }
  if (a.sizes() == b.sizes()) {  // no broadcast: the common case, kept short
    Tensor out = empty(a.sizes(), TensorOptions(dtype, device));
    if (out.numel() == 0) return out;
    call_kernel<kernels::Binary>(device, op, out, prepare_operand(a, device, dtype),
                                 prepare_operand(b, device, dtype), alpha);
    return out;
  }
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, TensorOptions(dtype, device));
  if (out.numel() == 0) return out;
  Tensor pa = prepare_operand(a, device, dtype), pb = prepare_operand(b, device, dtype);
  call_kernel<kernels::Binary>(device, op, out, pa.expand(shape), pb.expand(shape), alpha);
  return out;
}

Tensor& binary_(BinaryOp op, Tensor& self, const Tensor& other, const Scalar& alpha) {
  const char* name = kernels::name_of(op);
  Device device = common_device(name, self, other);
  TESSERA_CHECK(device == self.device(), DeviceError, name, "_: expected all tensors to be on ",
                self.device().to_string(), ", got ", describe(other));
  DType dtype = compute_dtype(op, result_type(self, other),
                              self.dtype() == DType::kBool || other.dtype() == DType::kBool, alpha,
                              [&] { return describe(self) + ", " + describe(other); });
  TESSERA_CHECK(can_cast(dtype, self.dtype()), TypeError, name, "_: result type ",
                dtype_name(dtype), " can't be cast to the desired output type ",
                dtype_name(self.dtype()));
  Shape shape = broadcast_shapes(self.sizes(), other.sizes(), name);
  TESSERA_CHECK(shape == self.sizes(), ValueError, name, "_: output with shape ",
                shape_to_string(self.sizes()), " doesn't match the broadcast shape ",
                shape_to_string(shape), " (other is ", describe(other), ")");
  if (self.numel() == 0) return self;
  check_no_internal_overlap(name, self);
  check_no_partial_overlap(name, self, other);
  if (has_wide_number(dtype, self, other)) {
    self.copy_(binary(op, self, other, alpha));
    return self;
  }
  Tensor po = prepare_operand(other, device, dtype).expand(shape);
  if (dtype == self.dtype()) {
    call_kernel<kernels::Binary>(device, op, self, self, po, alpha);
  } else {
    Tensor out = empty(shape, TensorOptions(dtype, device));
    call_kernel<kernels::Binary>(device, op, out, prepare_operand(self, device, dtype), po, alpha);
    self.copy_(out);
  }
  return self;
}

// A Scalar operand becomes a 0-d tensor of the compute dtype on a's
// device; result_type sees the Scalar itself (it promotes less than a
// tensor would). Like PyTorch, an out-of-range value wraps.
Tensor binary_scalar(BinaryOp op, const Tensor& a, const Scalar& b, const Scalar& alpha) {
  TESSERA_CHECK(a.defined(), ValueError, kernels::name_of(op), ": undefined tensor argument");
  Device device = a.device();
  DType dtype = compute_dtype(op, result_type(a, b), a.dtype() == DType::kBool || b.is_bool(),
                              alpha, [&] { return describe(a) + ", scalar " + b.to_string(); });
  if (pointwise::scalar_needs_float32(dtype, b)) {
    // In float32 and rounded once, as PyTorch computes it (has_wide_number).
    return binary_scalar(op, a.to(DType::kF32), b, alpha).to(dtype);
  }
  Tensor out = empty(a.sizes(), TensorOptions(dtype, device));
  if (out.numel() == 0) return out;
  Tensor wrapped = empty({}, TensorOptions(dtype, device));
  call_kernel<kernels::Fill>(device, wrapped, b);
  call_kernel<kernels::Binary>(device, op, out, prepare_operand(a, device, dtype),
                               wrapped.expand(a.sizes()), alpha);
  return out;
}

// out= form: the kernel writes out directly when out has the compute dtype
// (no temporary, no second pass over memory).
Tensor& binary_out(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b,
                   const Scalar& alpha) {
  const char* name = kernels::name_of(op);
  Device device = common_device(name, a, b);
  DType dtype = compute_dtype(op, result_type(a, b),
                              a.dtype() == DType::kBool || b.dtype() == DType::kBool, alpha,
                              [&] { return describe(a) + ", " + describe(b); });
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  return pointwise::deliver(name, pointwise::into(out), shape, dtype, device, {&a, &b},
                            [&](Tensor& dst) {
    if (has_wide_number(dtype, a, b)) {
      dst.copy_(binary(op, a, b, alpha));
      return;
    }
    call_kernel<kernels::Binary>(device, op, dst, prepare_operand(a, device, dtype).expand(shape),
                                 prepare_operand(b, device, dtype).expand(shape), alpha);
  });
}

}  // namespace

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return binary_out(BinaryOp::kAdd, out, a, b, alpha);
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return binary_out(BinaryOp::kSub, out, a, b, alpha);
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return binary_out(BinaryOp::kMul, out, a, b, 1);
}

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) { return binary(BinaryOp::kAdd, a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) { return binary(BinaryOp::kSub, a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kMul, a, b, 1); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kDiv, a, b, 1); }
Tensor add(const Tensor& a, Scalar b, Scalar alpha) { return binary_scalar(BinaryOp::kAdd, a, b, alpha); }
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) { return binary_scalar(BinaryOp::kSub, a, b, alpha); }
Tensor mul(const Tensor& a, Scalar b) { return binary_scalar(BinaryOp::kMul, a, b, 1); }
Tensor div(const Tensor& a, Scalar b) { return binary_scalar(BinaryOp::kDiv, a, b, 1); }

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) { return binary_(BinaryOp::kAdd, *this, other, alpha); }
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) { return binary_(BinaryOp::kSub, *this, other, alpha); }
Tensor& Tensor::mul_(const Tensor& other) { return binary_(BinaryOp::kMul, *this, other, 1); }
Tensor& Tensor::div_(const Tensor& other) { return binary_(BinaryOp::kDiv, *this, other, 1); }

}  // namespace tessera
