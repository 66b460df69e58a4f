// Copies between tessera and the host (or two tessera devices), reading a
// scalar back, and resize_: the other half of PyTorch's minimal kernel set.
#include <ATen/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/storage_resize.h"
#include "bridge/csrc/tensor_convert.h"

namespace torch_tessera {
namespace {

tessera::Tensor runtime_side(const at::Tensor& t, const char* op) {
  if (t.device().is_privateuseone()) return to_runtime(t, op);
  TORCH_CHECK(t.device().is_cpu(), op, ": tessera copies to and from CPU or tessera tensors, got ",
              t.device());
  return borrow_host(t);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  // The runtime's copies leave host memory ready on return, so a
  // non_blocking copy is a blocking one.
  const c10::Device device = dst.device().is_privateuseone() ? dst.device() : self.device();
  const c10::DeviceGuard guard(device);
  tessera::Tensor d = runtime_side(dst, "copy_");
  const tessera::Tensor s = runtime_side(self, "copy_");
  TESSERA_TRANSLATE_ERRORS(d.copy_(s));
  return dst;
}

const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  for (const int64_t s : size) {
    TORCH_CHECK(s >= 0, "resize_: negative size in ", size);
  }
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  if (self.sizes() == size && !memory_format.has_value()) return self;
  impl->set_sizes_contiguous(size);
  if (memory_format.has_value() && *memory_format != c10::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*memory_format);
  }
  const size_t needed = at::detail::computeStorageNbytes(
      size, self.strides(), self.element_size(), self.storage_offset());
  if (needed > self.storage().nbytes()) resize_storage_bytes(self.storage(), needed);
  return self;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  resize(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  tessera::Scalar value;
  TESSERA_TRANSLATE_ERRORS(value = to_runtime(self, "item").item());
  return to_torch_scalar(value);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("resize_", TORCH_FN(resize));
}

}  // namespace
}  // namespace torch_tessera
