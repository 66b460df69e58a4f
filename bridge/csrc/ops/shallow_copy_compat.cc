// Whether a tessera tensor and a CPU (or other dense) tensor may take each
// other's place in `var.data = new_data`.
//
// Module._apply (model.to("tessera"), model.cpu(), to_empty) keeps each
// Parameter object, and so keeps parameters that submodules share (a
// language model's input embedding tied to its output projection), only
// when torch._has_compatible_shallow_copy_type(param, converted) is true:
// then it assigns param.data in place. Otherwise it wraps the converted
// tensor in a new Parameter per submodule, and a tied weight silently
// becomes two weights that train apart. c10's TensorImpl answers true for
// pairs of dense tensors of its built-in backends only; a PrivateUse1
// backend answers for its own tensors by overriding this operator.
#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

namespace torch_tessera {
namespace {

// A dense (strided, non-quantized, non-nested) tensor of a backend whose
// tensors are plain c10::TensorImpl objects, as tessera's are, so that
// TensorImpl::shallow_copy_from can move one's metadata and storage into
// the other.
bool is_plain_dense(const at::Tensor& t) {
  constexpr auto dense_backends = c10::DispatchKeySet(
      {c10::BackendComponent::CPUBit, c10::BackendComponent::CUDABit,
       c10::BackendComponent::MPSBit, c10::BackendComponent::HIPBit,
       c10::BackendComponent::XPUBit, c10::BackendComponent::HPUBit,
       c10::BackendComponent::MTIABit, c10::BackendComponent::PrivateUse1Bit});
  const c10::DispatchKeySet keys = t.key_set();
  return keys.has(c10::DispatchKey::Dense) && keys.has_any(dense_backends) &&
         t.layout() == c10::kStrided;
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  return is_plain_dense(self) && is_plain_dense(from);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}

}  // namespace
}  // namespace torch_tessera
