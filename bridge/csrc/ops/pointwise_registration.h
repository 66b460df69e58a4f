// Kernel templates for the pointwise ops: one template per calling form
// (functional, in-place, out=) and operand kind (tensor, Scalar), each
// instantiated with the op's name and its runtime function. The .cc files
// then hold short registration tables instead of hundreds of near-identical
// kernels.
//
// Why functional and in-place kernels are registered directly although aten
// would derive them from .out: aten's generated wrapper for a structured op
// computes the output's meta, allocates it through empty_strided and then
// dispatches .out, which is several dispatches per call; a direct kernel is
// one, and per-op overhead is what small tensors pay for.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <algorithm>
#include <cstddef>

#include "bridge/csrc/device_mix.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/out_check.h"

namespace torch_tessera::pointwise {

using RT = tessera::Tensor;

// An op name usable as a template argument: unary<"neg", &tessera::neg>.
template <size_t N>
struct OpName {
  constexpr OpName(const char (&s)[N]) { std::copy_n(s, N, value); }
  char value[N];
};

// Python numbers reach aten as "wrapped number" 0-d CPU tensors (x + 1).
// Type promotion ranks them below 0-d tensors, so they go to the runtime as
// Scalars, which its result_type ranks the same way.
inline bool is_wrapped_number(const at::Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->is_wrapped_number();
}

// The value of a wrapped number, read directly (no dispatch: this is on the
// path of every `x + 1`).
inline tessera::Scalar wrapped_value(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case c10::ScalarType::Double: return tessera::Scalar(*t.const_data_ptr<double>());
    case c10::ScalarType::Long: return tessera::Scalar(*t.const_data_ptr<int64_t>());
    case c10::ScalarType::Bool: return tessera::Scalar(*t.const_data_ptr<bool>());
    default: return to_runtime_scalar(t.item(), op);
  }
}

using ::torch_tessera::check_device_mix;

// The tensor an in-place or out= kernel writes must be a tessera tensor:
// the 0-d CPU exemption is for inputs only (as with CUDA).
inline void check_written(const char* op, const at::Tensor& input, const at::Tensor& written) {
  TORCH_CHECK(written.device().is_privateuseone(), op, ": expected the tensor written to on "
              "a tessera device, like the inputs (", input.device(), "), but got one on ",
              written.device());
  check_device_mix(op, input, written);
}

// A tensor operand for the runtime. A wrapped number that must be a tensor
// (the Scalar-first forms the runtime lacks) becomes a 0-d tensor of its
// kind's default dtype, as PyTorch's promotion treats it; `keep` holds the
// host memory the runtime tensor borrows. Lives for one kernel call.
struct Operand {
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  Operand(const at::Tensor& t, const char* op) {
    if (is_wrapped_number(t)) {
      const c10::ScalarType kind = t.scalar_type() == c10::ScalarType::Double
                                       ? c10::get_default_dtype_as_scalartype()
                                       : t.scalar_type();
      keep = kind == t.scalar_type() ? t : t.to(kind);
      value = borrow_host(keep);
    } else {
      value = to_runtime_in(t, op, slot);
    }
  }
  at::Tensor keep;
  tessera::TensorImpl slot;  // value's TensorImpl (see to_runtime_in)
  RT value;
};

inline c10::DimVector broadcast_sizes(const at::Tensor& a, const at::Tensor& b) {
  return broadcast_shape(a.sizes(), b.sizes());
}

// -- Unary: foo(x), foo_(self), foo.out(x, out).
using UnaryFn = RT (*)(const RT&);
using UnaryInplaceFn = RT& (*)(RT&);
using UnaryOutFn = RT& (*)(RT&, const RT&);

template <OpName kName, UnaryFn kFn>
at::Tensor unary(const at::Tensor& self) {
  const OpScope scope(self);
  const CallView self_view(self, kName.value);
  return to_torch(call_runtime([&] { return kFn(self_view.get()); }));
}

template <OpName kName, UnaryInplaceFn kFn>
at::Tensor& unary_(at::Tensor& self) {
  const OpScope scope(self);
  CallView self_view(self, kName.value);
  RT& s = self_view.get();
  call_runtime([&] { kFn(s); });
  return self;
}

template <OpName kName, UnaryOutFn kFn>
at::Tensor& unary_out(const at::Tensor& self, at::Tensor& out) {
  const OpScope scope(self, out);
  check_written(kName.value, self, out);
  resize_output(out, self.sizes());
  CallView out_view(out, kName.value);
  RT& o = out_view.get();
  const CallView self_view(self, kName.value);
  call_runtime([&] { kFn(o, self_view.get()); });
  return out;
}

// -- Binary: foo.Tensor(a, b), foo.Scalar(a, s), foo_.Tensor, foo_.Scalar,
// foo.out / foo.Tensor_out, foo.Scalar_out.
using BinaryFn = RT (*)(const RT&, const RT&);
using BinaryScalarFn = RT (*)(const RT&, tessera::Scalar);
using BinaryInplaceFn = RT& (*)(RT&, const RT&);
using BinaryScalarInplaceFn = RT& (*)(RT&, tessera::Scalar);
using BinaryOutFn = RT& (*)(RT&, const RT&, const RT&);
using BinaryScalarOutFn = RT& (*)(RT&, const RT&, tessera::Scalar);

template <OpName kName, BinaryFn kFn, BinaryScalarFn kScalarFn>
at::Tensor binary(const at::Tensor& self, const at::Tensor& other) {
  const OpScope scope(self, other);
  if (is_wrapped_number(other)) {
    const tessera::Scalar s = wrapped_value(other, kName.value);
    const CallView self_view(self, kName.value);
    return to_torch(call_runtime([&] { return kScalarFn(self_view.get(), s); }));
  }
  check_device_mix(kName.value, self, other);
  const Operand a(self, kName.value), b(other, kName.value);
  return to_torch(call_runtime([&] { return kFn(a.value, b.value); }));
}

template <OpName kName, BinaryScalarFn kScalarFn>
at::Tensor binary_scalar(const at::Tensor& self, const c10::Scalar& other) {
  const OpScope scope(self);
  const tessera::Scalar s = to_runtime_scalar(other, kName.value);
  const CallView self_view(self, kName.value);
  return to_torch(call_runtime([&] { return kScalarFn(self_view.get(), s); }));
}

template <OpName kName, BinaryInplaceFn kFn, BinaryScalarInplaceFn kScalarFn>
at::Tensor& binary_(at::Tensor& self, const at::Tensor& other) {
  const OpScope scope(self);
  check_written(kName.value, other, self);
  CallView self_view(self, kName.value);
  RT& s = self_view.get();
  if (is_wrapped_number(other)) {
    const tessera::Scalar v = wrapped_value(other, kName.value);
    call_runtime([&] { kScalarFn(s, v); });
    return self;
  }
  const CallView other_view(other, kName.value);
  const RT& o = other_view.get();
  call_runtime([&] { kFn(s, o); });
  return self;
}

template <OpName kName, BinaryScalarInplaceFn kScalarFn>
at::Tensor& binary_scalar_(at::Tensor& self, const c10::Scalar& other) {
  const OpScope scope(self);
  CallView self_view(self, kName.value);
  RT& s = self_view.get();
  const tessera::Scalar v = to_runtime_scalar(other, kName.value);
  call_runtime([&] { kScalarFn(s, v); });
  return self;
}

template <OpName kName, BinaryOutFn kFn, BinaryScalarOutFn kScalarFn>
at::Tensor& binary_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  const OpScope scope(self, other, out);
  check_device_mix(kName.value, self, other);
  check_written(kName.value, self, out);
  resize_output(out, broadcast_sizes(self, other));
  CallView out_view(out, kName.value);
  RT& o = out_view.get();
  if (is_wrapped_number(other)) {
    const tessera::Scalar v = wrapped_value(other, kName.value);
    const CallView self_view(self, kName.value);
    call_runtime([&] { kScalarFn(o, self_view.get(), v); });
    return out;
  }
  const Operand a(self, kName.value), b(other, kName.value);
  call_runtime([&] { kFn(o, a.value, b.value); });
  return out;
}

template <OpName kName, BinaryScalarOutFn kScalarFn>
at::Tensor& binary_scalar_out(const at::Tensor& self, const c10::Scalar& other, at::Tensor& out) {
  const OpScope scope(self, out);
  check_written(kName.value, self, out);
  resize_output(out, self.sizes());
  CallView out_view(out, kName.value);
  RT& o = out_view.get();
  const tessera::Scalar v = to_runtime_scalar(other, kName.value);
  const CallView self_view(self, kName.value);
  call_runtime([&] { kScalarFn(o, self_view.get(), v); });
  return out;
}

// -- Activation gradients: f(grad, saved) -> grad_input, with f calling the
// runtime (any extra argument bound in f). grad and saved broadcast; the
// out= form resizes grad_input to their broadcast shape and casts into it.
template <typename F>
at::Tensor gradient(const char* op, const at::Tensor& grad, const at::Tensor& saved, F&& f) {
  const OpScope scope(grad, saved);
  check_device_mix(op, grad, saved);
  const CallView grad_view(grad, op);
  const CallView saved_view(saved, op);
  return to_torch(call_runtime([&] { return f(grad_view.get(), saved_view.get()); }));
}

template <typename F>
at::Tensor& gradient_into(const char* op, const at::Tensor& grad, const at::Tensor& saved,
                          at::Tensor& grad_input, F&& f) {
  const OpScope scope(grad, saved, grad_input);
  check_device_mix(op, grad, saved);
  check_written(op, grad, grad_input);
  resize_output(grad_input, broadcast_sizes(grad, saved));
  CallView grad_input_view(grad_input, op);
  RT& o = grad_input_view.get();
  const CallView grad_view(grad, op);
  const CallView saved_view(saved, op);
  call_runtime([&] { tessera::write_out(op, o, f(grad_view.get(), saved_view.get())); });
  return grad_input;
}

}  // namespace torch_tessera::pointwise

// Registers the three forms of a unary op whose runtime functions are
// tessera::name, tessera::name_ and tessera::name_out.
#define TESSERA_REGISTER_UNARY(m, name)                                                   \
  m.impl(#name, TORCH_FN((::torch_tessera::pointwise::unary<#name, &tessera::name>)));   \
  m.impl(#name "_",                                                                      \
         TORCH_FN((::torch_tessera::pointwise::unary_<#name "_", &tessera::name##_>)));  \
  m.impl(#name ".out",                                                                   \
         TORCH_FN((::torch_tessera::pointwise::unary_out<#name, &tessera::name##_out>)))
