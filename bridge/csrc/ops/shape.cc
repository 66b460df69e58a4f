// Shape ops that copy: clone, cat, stack, flip, roll, repeat,
// constant_pad_nd; and unfold, a view op that aten registers per backend
// (its generic implementation only computes sizes and strides), with its
// backward.
//
// split, chunk, unbind, narrow and the other views are composites over
// as_strided / view / slice, which already run natively.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/unfold_native.h>
#include <torch/library.h>

#include "bridge/csrc/complex_views.h"
#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/copy_from.h"
#include "bridge/csrc/allocator.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// clone's result layout, as aten's empty_like: Preserve keeps the strides
// of a dense, non-overlapping tensor and otherwise falls back to the
// tensor's suggested memory format.
at::Tensor empty_for_clone(const at::Tensor& self, c10::MemoryFormat format) {
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  if (format == c10::MemoryFormat::Preserve) {
    if (self.is_non_overlapping_and_dense()) {
      return at::detail::empty_strided_generic(self.sizes(), self.strides(), &allocator(), keys,
                                               self.scalar_type());
    }
    format = self.suggest_memory_format();
  }
  return at::detail::empty_generic(self.sizes(), &allocator(), keys, self.scalar_type(), format);
}

// clone is everywhere (autograd, optimizers, masked_fill...): one
// allocation and one runtime copy, no trip through copy_ and _copy_from.
at::Tensor clone(const at::Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  const OpScope scope(self);
  at::Tensor out =
      empty_for_clone(self, memory_format.value_or(c10::MemoryFormat::Preserve));
  if (self.numel() == 0) return out;
  // clone passes aten's Conjugate and Negative fallbacks untouched (they
  // resolve the bits by calling it), so it resolves them itself.
  if (self.is_conj() || self.is_neg()) return copy_from(self, out, false);
  const bool complex = self.is_complex();  // copied as real pairs (complex_views.h)
  tessera::Tensor dst = complex ? to_runtime_real_pairs(out, "clone") : to_runtime(out, "clone");
  const tessera::Tensor src =
      complex ? to_runtime_real_pairs(self, "clone") : to_runtime(self, "clone");
  call_runtime([&] { dst.copy_(src); });
  return out;
}

std::vector<tessera::Tensor> runtime_list(const at::ITensorListRef& tensors, const char* op) {
  std::vector<tessera::Tensor> out;
  for (const at::Tensor& t : tensors) out.push_back(to_runtime(t, op));
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  const at::MaterializedITensorListRef list = tensors.materialize();
  std::optional<c10::DeviceGuard> guard;
  if (!list.empty()) guard.emplace(list.front().get().device());
  const std::vector<tessera::Tensor> inputs = runtime_list(tensors, "cat");
  return to_torch(call_runtime([&] { return tessera::cat(inputs, dim); }));
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const OpScope scope(out);
  const std::vector<tessera::Tensor> inputs = runtime_list(tensors, "cat");
  // Joined first and then copied: the runtime checks the list before out is
  // resized, so a bad list leaves out alone.
  const tessera::Tensor result = call_runtime([&] { return tessera::cat(inputs, dim); });
  return write_out(out, result);
}

at::Tensor stack(at::TensorList tensors, int64_t dim) {
  const OpScope scope(tensors);
  const std::vector<tessera::Tensor> inputs = to_runtime(tensors, "stack");
  return to_torch(call_runtime([&] { return tessera::stack(inputs, dim); }));
}

at::Tensor flip(const at::Tensor& self, c10::IntArrayRef dims) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "flip");
  return to_torch(call_runtime([&] { return tessera::flip(src, to_runtime_shape(dims)); }));
}

at::Tensor roll(const at::Tensor& self, c10::IntArrayRef shifts, c10::IntArrayRef dims) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "roll");
  return to_torch(
      call_runtime([&] { return tessera::roll(src, to_runtime_shape(shifts), to_runtime_shape(dims)); }));
}

at::Tensor repeat(const at::Tensor& self, c10::IntArrayRef repeats) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "repeat");
  return to_torch(call_runtime([&] { return tessera::repeat(src, to_runtime_shape(repeats)); }));
}

at::Tensor constant_pad_nd(const at::Tensor& self, c10::IntArrayRef pad,
                           const c10::Scalar& value) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "constant_pad_nd");
  const tessera::Scalar fill = to_runtime_scalar(value, "constant_pad_nd");
  return to_torch(
      call_runtime([&] { return tessera::constant_pad(src, to_runtime_shape(pad), fill); }));
}

at::Tensor unfold_backward(const at::Tensor& grad, c10::IntArrayRef input_sizes, int64_t dim,
                           int64_t size, int64_t step) {
  const OpScope scope(grad);
  return to_torch(call_runtime([&] {
    return tessera::unfold_backward(to_runtime(grad, "unfold_backward"),
                                    to_runtime_shape(input_sizes), dim, size, step);
  }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl_complex_aware("clone", TORCH_FN(clone));
  m.impl("cat", TORCH_FN(cat));
  m.impl("cat.out", TORCH_FN(cat_out));
  m.impl("stack", TORCH_FN(stack));
  m.impl("flip", TORCH_FN(flip));
  m.impl("roll", TORCH_FN(roll));
  m.impl("repeat", TORCH_FN(repeat));
  m.impl("constant_pad_nd", TORCH_FN(constant_pad_nd));
  m.impl_complex_aware("unfold", TORCH_FN(at::native::unfold));  // a view: any dtype
  m.impl("unfold_backward", TORCH_FN(unfold_backward));
}

}  // namespace
}  // namespace torch_tessera
