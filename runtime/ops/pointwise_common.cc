#include "runtime/ops/pointwise_common.h"

#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/type_promotion.h"

namespace tessera::pointwise {

Tensor deliver_value(const char* op, Target target, const Shape& shape, DType dtype,
                     Device device, std::initializer_list<const Tensor*> inputs,
                     const std::function<void(Tensor& dst)>& compute) {
  if (target.form == Form::kFunctional) {
    Tensor out = empty(shape, TensorOptions(dtype, device));
    if (out.numel() > 0) compute(out);
    return out;
  }
  Tensor& dst = *target.dst;
  if (target.form == Form::kInPlace) {
    TESSERA_CHECK(dst.defined(), ValueError, op, "_: undefined tensor argument");
    TESSERA_CHECK(dst.device() == device, DeviceError, op, "_: expected all tensors to be on ",
                  dst.device().to_string(), ", got inputs on ", device.to_string());
    TESSERA_CHECK(can_cast(dtype, dst.dtype()), TypeError, op, "_: result type ",
                  dtype_name(dtype), " can't be cast to the desired output type ",
                  dtype_name(dst.dtype()));
    TESSERA_CHECK(dst.sizes() == shape, ValueError, op, "_: output with shape ",
                  shape_to_string(dst.sizes()), " doesn't match the broadcast shape ",
                  shape_to_string(shape));
    check_no_internal_overlap(op, dst);
  } else {
    check_out(op, dst, shape, dtype, device);
  }
  for (const Tensor* in : inputs) {
    if (in && in->defined() && !in->is_same(dst)) check_no_partial_overlap(op, dst, *in);
  }
  if (dst.numel() == 0) return dst;
  if (dst.dtype() == dtype) {
    compute(dst);
  } else {
    Tensor tmp = empty(shape, TensorOptions(dtype, device));
    compute(tmp);
    dst.copy_(tmp);
  }
  return dst;
}

Tensor& deliver(const char* op, Target target, const Shape& shape, DType dtype, Device device,
                std::initializer_list<const Tensor*> inputs,
                const std::function<void(Tensor& dst)>& compute) {
  // Only the in-place and out forms may return a reference to the target.
  TESSERA_CHECK(target.form != Form::kFunctional, ValueError, op,
                ": internal error: deliver() needs a target");
  deliver_value(op, target, shape, dtype, device, inputs, compute);
  return *target.dst;
}

Tensor scalar_tensor(const Scalar& value, DType dtype, Device device) {
  Tensor t = empty({}, TensorOptions(dtype, device));
  call_kernel<kernels::Fill>(device, t, value);
  return t;
}

bool scalar_needs_float32(DType dtype, const Scalar& value) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) return false;
  const float wide = value.to<float>();
  if (wide != wide) return false;  // NaN: NaN either way
  const float narrow = dtype == DType::kF16 ? static_cast<float>(value.to<Half>())
                                            : static_cast<float>(value.to<BFloat16>());
  return narrow != wide;
}

std::string describe_scalar(const Scalar& s) { return "scalar " + s.to_string(); }

}  // namespace tessera::pointwise
