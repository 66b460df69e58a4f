// Ternary pointwise ops: where, lerp, addcmul, addcdiv.
#include <torch/library.h>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using pointwise::check_device_mix;
using pointwise::check_written;
using pointwise::is_wrapped_number;
using pointwise::Operand;
using pointwise::OpName;
using pointwise::RT;
using tessera::Scalar;

c10::DimVector broadcast3(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  return broadcast_shape(pointwise::broadcast_sizes(a, b), c.sizes());
}

void check_devices3(const char* op, const at::Tensor& a, const at::Tensor& b,
                    const at::Tensor& c) {
  check_device_mix(op, a, b);
  check_device_mix(op, a, c);
  check_device_mix(op, b, c);
}

// -- where(cond, a, b). torch.where(c, x, 2.0) reaches here with a wrapped
// number, which the runtime takes as a Scalar (it promotes less).
RT where_runtime(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  const Operand c(cond, "where");
  if (is_wrapped_number(other) && !is_wrapped_number(self)) {
    const Scalar v = pointwise::wrapped_value(other, "where");
    return call_runtime([&] { return tessera::where(c.value, to_runtime(self, "where"), v); });
  }
  if (is_wrapped_number(self) && !is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(self, "where");
    return call_runtime([&] { return tessera::where(c.value, v, to_runtime(other, "where")); });
  }
  const Operand a(self, "where"), b(other, "where");
  return call_runtime([&] { return tessera::where(c.value, a.value, b.value); });
}

at::Tensor where(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  const OpScope scope(cond, self, other);
  check_devices3("where", cond, self, other);
  return to_torch(where_runtime(cond, self, other));
}

at::Tensor& where_out(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other,
                      at::Tensor& out) {
  const OpScope scope(cond, self, other, out);
  check_devices3("where", cond, self, other);
  check_written("where", self, out);
  resize_output(out, broadcast3(cond, self, other));
  RT o = to_runtime(out, "where");
  const Operand c(cond, "where"), a(self, "where"), b(other, "where");
  call_runtime([&] { tessera::where_out(o, c.value, a.value, b.value); });
  return out;
}

// -- lerp(start, end, weight), weight a Scalar or a tensor.
at::Tensor lerp_scalar(const at::Tensor& self, const at::Tensor& end, const c10::Scalar& weight) {
  const OpScope scope(self, end);
  check_device_mix("lerp", self, end);
  const Scalar w = to_runtime_scalar(weight, "lerp");
  return to_torch(call_runtime(
      [&] { return tessera::lerp(to_runtime(self, "lerp"), to_runtime(end, "lerp"), w); }));
}

at::Tensor lerp_tensor(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight) {
  const OpScope scope(self, end, weight);
  check_devices3("lerp", self, end, weight);
  const Operand s(self, "lerp"), e(end, "lerp"), w(weight, "lerp");
  return to_torch(call_runtime([&] { return tessera::lerp(s.value, e.value, w.value); }));
}

at::Tensor& lerp_scalar_(at::Tensor& self, const at::Tensor& end, const c10::Scalar& weight) {
  const OpScope scope(self);
  pointwise::check_written("lerp_", end, self);
  RT s = to_runtime(self, "lerp_");
  const Scalar w = to_runtime_scalar(weight, "lerp_");
  call_runtime([&] { tessera::lerp_(s, to_runtime(end, "lerp_"), w); });
  return self;
}

at::Tensor& lerp_tensor_(at::Tensor& self, const at::Tensor& end, const at::Tensor& weight) {
  const OpScope scope(self);
  check_device_mix("lerp_", end, weight);
  pointwise::check_written("lerp_", end, self);
  RT s = to_runtime(self, "lerp_");
  const Operand e(end, "lerp_"), w(weight, "lerp_");
  call_runtime([&] { tessera::lerp_(s, e.value, w.value); });
  return self;
}

at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end,
                            const c10::Scalar& weight, at::Tensor& out) {
  const OpScope scope(self, end, out);
  check_device_mix("lerp", self, end);
  check_written("lerp", self, out);
  resize_output(out, pointwise::broadcast_sizes(self, end));
  RT o = to_runtime(out, "lerp");
  const Scalar w = to_runtime_scalar(weight, "lerp");
  call_runtime([&] { tessera::lerp_out(o, to_runtime(self, "lerp"), to_runtime(end, "lerp"), w); });
  return out;
}

at::Tensor& lerp_tensor_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Tensor& weight, at::Tensor& out) {
  const OpScope scope(self, end, weight, out);
  check_devices3("lerp", self, end, weight);
  check_written("lerp", self, out);
  resize_output(out, broadcast3(self, end, weight));
  RT o = to_runtime(out, "lerp");
  const Operand s(self, "lerp"), e(end, "lerp"), w(weight, "lerp");
  call_runtime([&] { tessera::lerp_out(o, s.value, e.value, w.value); });
  return out;
}

// -- addcmul / addcdiv: self + value * t1 (* or /) t2. One template each
// for the three forms, instantiated for both ops.
using AddcFn = RT (*)(const RT&, const RT&, const RT&, Scalar);
using AddcInplaceFn = RT& (*)(RT&, const RT&, const RT&, Scalar);
using AddcOutFn = RT& (*)(RT&, const RT&, const RT&, const RT&, Scalar);

template <OpName kName, AddcFn kFn>
at::Tensor addc(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                const c10::Scalar& value) {
  const OpScope scope(self, t1, t2);
  check_devices3(kName.value, self, t1, t2);
  const Operand s(self, kName.value), a(t1, kName.value), b(t2, kName.value);
  const Scalar v = to_runtime_scalar(value, kName.value);
  return to_torch(call_runtime([&] { return kFn(s.value, a.value, b.value, v); }));
}

template <OpName kName, AddcInplaceFn kFn>
at::Tensor& addc_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                  const c10::Scalar& value) {
  const OpScope scope(self);
  check_device_mix(kName.value, t1, t2);
  pointwise::check_written(kName.value, t1, self);
  RT s = to_runtime(self, kName.value);
  const Operand a(t1, kName.value), b(t2, kName.value);
  const Scalar v = to_runtime_scalar(value, kName.value);
  call_runtime([&] { kFn(s, a.value, b.value, v); });
  return self;
}

template <OpName kName, AddcOutFn kFn>
at::Tensor& addc_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const c10::Scalar& value, at::Tensor& out) {
  const OpScope scope(self, t1, t2, out);
  check_devices3(kName.value, self, t1, t2);
  check_written(kName.value, self, out);
  resize_output(out, broadcast3(self, t1, t2));
  RT o = to_runtime(out, kName.value);
  const Operand s(self, kName.value), a(t1, kName.value), b(t2, kName.value);
  const Scalar v = to_runtime_scalar(value, kName.value);
  call_runtime([&] { kFn(o, s.value, a.value, b.value, v); });
  return out;
}

TESSERA_ATEN_KERNELS(m) {
  // where's Scalar overloads are aten composites over where.self.
  m.impl("where.self", TORCH_FN(where));
  m.impl("where.self_out", TORCH_FN(where_out));

  m.impl("lerp.Scalar", TORCH_FN(lerp_scalar));
  m.impl("lerp.Tensor", TORCH_FN(lerp_tensor));
  m.impl("lerp_.Scalar", TORCH_FN(lerp_scalar_));
  m.impl("lerp_.Tensor", TORCH_FN(lerp_tensor_));
  m.impl("lerp.Scalar_out", TORCH_FN(lerp_scalar_out));
  m.impl("lerp.Tensor_out", TORCH_FN(lerp_tensor_out));

  m.impl("addcmul", TORCH_FN((addc<"addcmul", &tessera::addcmul>)));
  m.impl("addcmul_", TORCH_FN((addc_<"addcmul_", &tessera::addcmul_>)));
  m.impl("addcmul.out", TORCH_FN((addc_out<"addcmul", &tessera::addcmul_out>)));
  m.impl("addcdiv", TORCH_FN((addc<"addcdiv", &tessera::addcdiv>)));
  m.impl("addcdiv_", TORCH_FN((addc_<"addcdiv_", &tessera::addcdiv_>)));
  m.impl("addcdiv.out", TORCH_FN((addc_out<"addcdiv", &tessera::addcdiv_out>)));
}

}  // namespace
}  // namespace torch_tessera
