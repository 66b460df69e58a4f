// Shared plumbing for the aten kernels in this folder. Each kernel:
//   1. makes the op's tessera device current (OpScope), so that outputs
//      are allocated there;
//   2. converts its arguments (tensor_convert.h; to_runtime names the op in
//      errors about devices and dtypes);
//   3. calls the runtime op, whose front end validates shapes, dtypes and
//      devices and allocates outputs; runtime errors become c10 errors;
//   4. returns runtime results with to_torch (new storage), or the torch
//      tensor it wrote into (in-place and out= kernels).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/ops/aten_helpers.h"
#include "bridge/csrc/tensor_convert.h"

namespace torch_tessera {

// Makes the device of the first tessera tensor among `tensors` current
// for the kernel's duration. What c10::DeviceGuard does for tessera, minus
// its two virtual calls through the guard registry: every kernel pays for
// this, and the device is nearly always current already.
class OpScope {
 public:
  template <typename... Tensors>
  explicit OpScope(const Tensors&... tensors) {
    (try_set(tensors), ...);
  }
  ~OpScope() {
    if (restore_) set_current_device(previous_);  // in range: it was current
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  void try_set(const at::Tensor& t) {
    if (decided_ || !t.defined() || !t.device().is_privateuseone()) return;
    decided_ = true;
    const c10::DeviceIndex index = t.device().has_index() ? t.device().index() : 0;
    const c10::DeviceIndex current = current_device();
    if (index == current) return;
    set_current_device(index);  // checks the index first
    previous_ = current;
    restore_ = true;
  }
  void try_set(const std::optional<at::Tensor>& t) {
    if (t.has_value()) try_set(*t);
  }
  void try_set(at::TensorList ts) {
    for (const at::Tensor& t : ts) try_set(t);
  }
  bool decided_ = false;
  bool restore_ = false;
  c10::DeviceIndex previous_ = 0;
};

// Runs fn() (which calls the runtime) with runtime errors translated.
template <typename F>
decltype(auto) call_runtime(F&& fn) {
  try {
    return fn();
  } catch (const tessera::Error& e) {
    rethrow_as_c10(e);
  }
}

// out= semantics as in PyTorch: `out` is resized to the result's shape
// (with the usual warning when a non-empty out has another shape), then
// receives the result, cast to its dtype. For ops whose runtime front end
// has an _out form, prefer resizing `out` first and calling that.
inline at::Tensor& write_out(at::Tensor& out, const tessera::Tensor& result) {
  resize_output(out, c10::IntArrayRef(result.sizes()));
  tessera::Tensor dst = to_runtime(out, "out=");
  call_runtime([&] { dst.copy_(result); });
  return out;
}

// The same for a result the bridge composed of ATen ops on tessera tensors
// (the *_composite.cc kernels).
inline at::Tensor& write_out(at::Tensor& out, const at::Tensor& result) {
  resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

// Whether an optional tensor argument (a bias, a weight) was given.
inline bool present(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Runs a runtime op that produces one new tensor and wraps it.
template <typename F>
at::Tensor fresh(F&& fn) {
  return to_torch(call_runtime(std::forward<F>(fn)));
}

// out= for the ops where aten takes no cast: out must already have the
// result's dtype; then as write_out.
inline at::Tensor& write_out_exact(at::Tensor& out, const tessera::Tensor& result) {
  const c10::ScalarType expected = to_torch_dtype(result.dtype());
  TORCH_CHECK(out.scalar_type() == expected, "Expected out tensor to have dtype ", expected,
              ", but got ", out.scalar_type(), " instead");
  return write_out(out, result);
}

}  // namespace torch_tessera
