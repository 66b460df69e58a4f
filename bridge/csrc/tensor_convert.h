// Conversions between torch and runtime values. A tessera at::Tensor and
// its runtime Tensor share one runtime Storage (see allocator.h): wrapping
// in either direction never copies data.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <optional>

#include "runtime/core/dtype.h"
#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"

namespace torch_tessera {

// Sizes, strides or dims as the runtime's Shape.
tessera::Shape to_runtime_shape(c10::IntArrayRef a);

// TypeError naming `op` for a dtype the runtime lacks (complex, uint16...).
tessera::DType to_runtime_dtype(c10::ScalarType type, const char* op = "tessera");
c10::ScalarType to_torch_dtype(tessera::DType type);

tessera::Scalar to_runtime_scalar(const c10::Scalar& s, const char* op = "tessera");
c10::Scalar to_torch_scalar(const tessera::Scalar& s);

// The runtime view of a tessera tensor (same memory, sizes, strides,
// offset). An undefined tensor gives an undefined one. A tensor on another
// device is an error naming op, unless it is a 0-d CPU tensor, which the
// runtime receives as a 0-d tensor on its host device (PyTorch lets CPU
// scalars mix with device tensors). A tessera tensor whose memory torch
// wrapped itself (torch.from_dlpack) borrows it, once checked to be a live
// allocation of its device (foreign_memory.h).
tessera::Tensor to_runtime(const at::Tensor& t, const char* op = "tessera");
// to_runtime for the length of one kernel call, with the view's TensorImpl
// in `slot` instead of on the heap: the hot kernels convert every input on
// every op, and a heap TensorImpl per input was a tenth of a small op's
// cost. The result owns nothing, neither its TensorImpl (slot must outlive
// every copy of it) nor its storage (t keeps that alive): pass it to a
// runtime op and drop it when the kernel returns. The runtime keeps neither
// past a call, and to_torch copies a result that shares such a storage. (A
// tensor the conversion cannot take the fast way gets a heap TensorImpl.)
tessera::Tensor to_runtime_in(const at::Tensor& t, const char* op, tessera::TensorImpl& slot);

// A to_runtime_in view with its own slot, for a kernel's local variables.
class CallView {
 public:
  CallView(const at::Tensor& t, const char* op) : tensor_(to_runtime_in(t, op, slot_)) {}
  CallView(const CallView&) = delete;
  CallView& operator=(const CallView&) = delete;

  tessera::Tensor& get() { return tensor_; }
  const tessera::Tensor& get() const { return tensor_; }

 private:
  tessera::TensorImpl slot_;
  tessera::Tensor tensor_;
};

std::optional<tessera::Tensor> to_runtime(const std::optional<at::Tensor>& t,
                                          const char* op = "tessera");
std::vector<tessera::Tensor> to_runtime(at::TensorList ts, const char* op = "tessera");

// A runtime view of a CPU tensor's memory, borrowed: the caller keeps t
// alive while the result is used.
tessera::Tensor borrow_host(const at::Tensor& t);

// A tessera at::Tensor over a runtime tensor's storage. Use only for
// results that alias no input: two at::Storages over one runtime storage
// would hide the aliasing from PyTorch.
at::Tensor to_torch(const tessera::Tensor& t);
std::vector<at::Tensor> to_torch(const std::vector<tessera::Tensor>& ts);

// A view of `base`'s at::Storage with the layout of `view` (a runtime view
// of base's storage), keeping PyTorch's view of the aliasing intact.
at::Tensor to_torch_alias(const at::Tensor& base, const tessera::Tensor& view);

}  // namespace torch_tessera
