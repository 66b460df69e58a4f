// Unary pointwise ops (neg ... logical_not, log10, hyperbolic and inverse
// trigonometric functions, hardswish/hardsigmoid, gelu, isnan/isinf,
// isneginf/isposinf, round with decimals) and clamp with its clamp_min/clamp_max forms, over the
// runtime's front ends (runtime/ops/pointwise_ops.h), which own dtype rules
// and errors.
#include <torch/library.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace torch_tessera {
namespace {

using pointwise::RT;

std::string_view view_of(c10::string_view s) { return {s.data(), s.size()}; }

// -- gelu: the approximate argument ("none" or "tanh").
at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  const OpScope scope(self);
  return to_torch(
      call_runtime([&] { return tessera::gelu(to_runtime(self, "gelu"), view_of(approximate)); }));
}

at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  const OpScope scope(self);
  RT s = to_runtime(self, "gelu_");
  call_runtime([&] { tessera::gelu_(s, view_of(approximate)); });
  return self;
}

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("gelu", self, out);
  resize_output(out, self.sizes());
  RT o = to_runtime(out, "gelu");
  call_runtime([&] { tessera::gelu_out(o, to_runtime(self, "gelu"), view_of(approximate)); });
  return out;
}

// -- round(x, decimals): x scaled by 10^decimals, rounded half to even and
// scaled back (for decimals < 0: divided first, multiplied after), the
// arithmetic of PyTorch's kernel. f16/bf16 compute in float32 and round
// once at the end, as PyTorch's opmath does.
RT round_decimals(const RT& x, int64_t decimals) {
  TORCH_CHECK_NOT_IMPLEMENTED(tessera::is_floating(x.dtype()), "round: decimals is supported "
                              "for floating tensors only, got ", to_torch_dtype(x.dtype()));
  if (decimals == 0) return tessera::round(x);
  const bool low_precision = x.dtype() == tessera::DType::kF16 || x.dtype() == tessera::DType::kBF16;
  const RT v = low_precision ? x.to(tessera::DType::kF32) : x;
  const tessera::Scalar scale(std::pow(10.0, static_cast<double>(std::abs(decimals))));
  const RT r = decimals > 0 ? tessera::div(tessera::round(tessera::mul(v, scale)), scale)
                            : tessera::mul(tessera::round(tessera::div(v, scale)), scale);
  return low_precision ? r.to(x.dtype()) : r;
}

at::Tensor round_decimals_fn(const at::Tensor& self, int64_t decimals) {
  const OpScope scope(self);
  return to_torch(call_runtime([&] { return round_decimals(to_runtime(self, "round"), decimals); }));
}

at::Tensor& round_decimals_(at::Tensor& self, int64_t decimals) {
  const OpScope scope(self);
  RT s = to_runtime(self, "round_");
  call_runtime([&] { s.copy_(round_decimals(s, decimals)); });
  return self;
}

at::Tensor& round_decimals_out(const at::Tensor& self, int64_t decimals, at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("round", self, out);
  resize_output(out, self.sizes());
  RT o = to_runtime(out, "round");
  call_runtime([&] {
    tessera::write_out("round", o, round_decimals(to_runtime(self, "round"), decimals));
  });
  return out;
}

// -- clamp with Scalar bounds; clamp_min/clamp_max are clamp with one bound.
using OptScalar = std::optional<c10::Scalar>;
using OptRuntimeScalar = std::optional<tessera::Scalar>;

OptRuntimeScalar bound(const OptScalar& s) {
  if (!s.has_value()) return std::nullopt;
  return to_runtime_scalar(*s, "clamp");
}

at::Tensor clamp_scalar(const at::Tensor& self, const OptScalar& min, const OptScalar& max) {
  const OpScope scope(self);
  return to_torch(call_runtime(
      [&] { return tessera::clamp(to_runtime(self, "clamp"), bound(min), bound(max)); }));
}

at::Tensor& clamp_scalar_(at::Tensor& self, const OptScalar& min, const OptScalar& max) {
  const OpScope scope(self);
  RT s = to_runtime(self, "clamp_");
  call_runtime([&] { tessera::clamp_(s, bound(min), bound(max)); });
  return self;
}

at::Tensor& clamp_scalar_out(const at::Tensor& self, const OptScalar& min, const OptScalar& max,
                      at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("clamp", self, out);
  resize_output(out, self.sizes());
  RT o = to_runtime(out, "clamp");
  call_runtime([&] { tessera::clamp_out(o, to_runtime(self, "clamp"), bound(min), bound(max)); });
  return out;
}

at::Tensor clamp_min(const at::Tensor& self, const c10::Scalar& min) {
  return clamp_scalar(self, OptScalar(min), OptScalar());
}
at::Tensor& clamp_min_(at::Tensor& self, const c10::Scalar& min) {
  return clamp_scalar_(self, OptScalar(min), OptScalar());
}
at::Tensor& clamp_min_out(const at::Tensor& self, const c10::Scalar& min, at::Tensor& out) {
  return clamp_scalar_out(self, OptScalar(min), OptScalar(), out);
}
at::Tensor clamp_max(const at::Tensor& self, const c10::Scalar& max) {
  return clamp_scalar(self, OptScalar(), OptScalar(max));
}
at::Tensor& clamp_max_(at::Tensor& self, const c10::Scalar& max) {
  return clamp_scalar_(self, OptScalar(), OptScalar(max));
}
at::Tensor& clamp_max_out(const at::Tensor& self, const c10::Scalar& max, at::Tensor& out) {
  return clamp_scalar_out(self, OptScalar(), OptScalar(max), out);
}

// -- clamp with tensor bounds (broadcast with self).
using OptTensor = std::optional<at::Tensor>;

void check_bounds(const char* op, const at::Tensor& self, const OptTensor& min,
                  const OptTensor& max) {
  if (min.has_value()) pointwise::check_device_mix(op, self, *min);
  if (max.has_value()) pointwise::check_device_mix(op, self, *max);
}

at::Tensor clamp_tensor(const at::Tensor& self, const OptTensor& min, const OptTensor& max) {
  const OpScope scope(self, min, max);
  check_bounds("clamp", self, min, max);
  return to_torch(call_runtime([&] {
    return tessera::clamp(to_runtime(self, "clamp"), to_runtime(min, "clamp"),
                          to_runtime(max, "clamp"));
  }));
}

at::Tensor& clamp_tensor_(at::Tensor& self, const OptTensor& min, const OptTensor& max) {
  const OpScope scope(self);
  check_bounds("clamp_", self, min, max);
  if (min.has_value()) pointwise::check_written("clamp_", *min, self);
  if (max.has_value()) pointwise::check_written("clamp_", *max, self);
  RT s = to_runtime(self, "clamp_");
  call_runtime([&] { tessera::clamp_(s, to_runtime(min, "clamp_"), to_runtime(max, "clamp_")); });
  return self;
}

at::Tensor& clamp_tensor_out(const at::Tensor& self, const OptTensor& min, const OptTensor& max,
                             at::Tensor& out) {
  const OpScope scope(self, out);
  check_bounds("clamp", self, min, max);
  pointwise::check_written("clamp", self, out);
  c10::DimVector shape(self.sizes());
  if (min.has_value()) shape = broadcast_shape(shape, min->sizes());
  if (max.has_value()) shape = broadcast_shape(shape, max->sizes());
  resize_output(out, shape);
  RT o = to_runtime(out, "clamp");
  call_runtime([&] {
    tessera::clamp_out(o, to_runtime(self, "clamp"), to_runtime(min, "clamp"),
                       to_runtime(max, "clamp"));
  });
  return out;
}

at::Tensor clamp_min_tensor(const at::Tensor& self, const at::Tensor& min) {
  return clamp_tensor(self, min, OptTensor());
}
at::Tensor& clamp_min_tensor_(at::Tensor& self, const at::Tensor& min) {
  return clamp_tensor_(self, min, OptTensor());
}
at::Tensor& clamp_min_tensor_out(const at::Tensor& self, const at::Tensor& min, at::Tensor& out) {
  return clamp_tensor_out(self, min, OptTensor(), out);
}
at::Tensor clamp_max_tensor(const at::Tensor& self, const at::Tensor& max) {
  return clamp_tensor(self, OptTensor(), max);
}
at::Tensor& clamp_max_tensor_(at::Tensor& self, const at::Tensor& max) {
  return clamp_tensor_(self, OptTensor(), max);
}
at::Tensor& clamp_max_tensor_out(const at::Tensor& self, const at::Tensor& max, at::Tensor& out) {
  return clamp_tensor_out(self, OptTensor(), max, out);
}

TESSERA_ATEN_KERNELS(m) {
  // The Tensor and Function rows of the runtime's op table: name, name_
  // and name.out each.
#define TESSERA_REGISTER_UNARY_Tensor(name) TESSERA_REGISTER_UNARY(m, name);
#define TESSERA_REGISTER_UNARY_Function(name) TESSERA_REGISTER_UNARY(m, name);
#define TESSERA_REGISTER_UNARY_Custom(name)
#define TESSERA_REGISTER_UNARY_ROW(Enum, name, Rule, Forms, Foreach) \
  TESSERA_REGISTER_UNARY_##Forms(name)
  TESSERA_UNARY_OP_TABLE(TESSERA_REGISTER_UNARY_ROW)
#undef TESSERA_REGISTER_UNARY_ROW
#undef TESSERA_REGISTER_UNARY_Tensor
#undef TESSERA_REGISTER_UNARY_Function
#undef TESSERA_REGISTER_UNARY_Custom

  // isnan.out and isinf.out are aten composites over these; isfinite is
  // (x == x) * (abs(x) != inf), all with kernels here.
  m.impl("isnan", TORCH_FN((pointwise::unary<"isnan", &tessera::isnan>)));
  m.impl("isinf", TORCH_FN((pointwise::unary<"isinf", &tessera::isinf>)));
  m.impl("isneginf", TORCH_FN((pointwise::unary<"isneginf", &tessera::isneginf>)));
  m.impl("isneginf.out", TORCH_FN((pointwise::unary_out<"isneginf", &tessera::isneginf_out>)));
  m.impl("isposinf", TORCH_FN((pointwise::unary<"isposinf", &tessera::isposinf>)));
  m.impl("isposinf.out", TORCH_FN((pointwise::unary_out<"isposinf", &tessera::isposinf_out>)));

  m.impl("round.decimals", TORCH_FN(round_decimals_fn));
  m.impl("round_.decimals", TORCH_FN(round_decimals_));
  m.impl("round.decimals_out", TORCH_FN(round_decimals_out));

  m.impl("gelu", TORCH_FN(gelu));
  m.impl("gelu_", TORCH_FN(gelu_));
  m.impl("gelu.out", TORCH_FN(gelu_out));

  m.impl("clamp", TORCH_FN(clamp_scalar));
  m.impl("clamp_", TORCH_FN(clamp_scalar_));
  m.impl("clamp.out", TORCH_FN(clamp_scalar_out));
  m.impl("clamp.Tensor", TORCH_FN(clamp_tensor));
  m.impl("clamp_.Tensor", TORCH_FN(clamp_tensor_));
  m.impl("clamp.Tensor_out", TORCH_FN(clamp_tensor_out));
  m.impl("clamp_min", TORCH_FN(clamp_min));
  m.impl("clamp_min_", TORCH_FN(clamp_min_));
  m.impl("clamp_min.out", TORCH_FN(clamp_min_out));
  m.impl("clamp_min.Tensor", TORCH_FN(clamp_min_tensor));
  m.impl("clamp_min_.Tensor", TORCH_FN(clamp_min_tensor_));
  m.impl("clamp_min.Tensor_out", TORCH_FN(clamp_min_tensor_out));
  m.impl("clamp_max", TORCH_FN(clamp_max));
  m.impl("clamp_max_", TORCH_FN(clamp_max_));
  m.impl("clamp_max.out", TORCH_FN(clamp_max_out));
  m.impl("clamp_max.Tensor", TORCH_FN(clamp_max_tensor));
  m.impl("clamp_max_.Tensor", TORCH_FN(clamp_max_tensor_));
  m.impl("clamp_max.Tensor_out", TORCH_FN(clamp_max_tensor_out));
}

}  // namespace
}  // namespace torch_tessera
