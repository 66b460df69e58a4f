// The kernels PyTorch needs before anything else works on a device:
// allocation, views that share storage, and re-pointing a tensor at a
// storage (set_). Views are computed by ATen's own device-generic code.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "bridge/csrc/allocator.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/storage_resize.h"
#include "bridge/csrc/tensor_convert.h"

namespace torch_tessera {
namespace {

constexpr c10::DispatchKey kKey = c10::DispatchKey::PrivateUse1;

c10::Device resolve(std::optional<c10::Device> device) {
  c10::Device d = device.value_or(c10::Device(c10::DeviceType::PrivateUse1));
  if (!d.has_index()) d.set_index(current_device());
  runtime_device(d);  // range check with a clear message
  return d;
}

c10::ScalarType checked_dtype(std::optional<c10::ScalarType> dtype, const char* op) {
  const c10::ScalarType t = c10::dtype_or_default(dtype);
  // Complex tensors are stored as real pairs (complex_views.h).
  if (!c10::isComplexType(t)) to_runtime_dtype(t, op);  // TypeError for dtypes tessera lacks
  return t;
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout,
                               std::optional<c10::Device> device,
                               std::optional<bool> /*pin_memory*/,
                               std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::kStrided,
              "empty: tessera supports strided tensors only, got ", *layout);
  const c10::DeviceGuard guard(resolve(device));
  return at::detail::empty_generic(size, &allocator(), c10::DispatchKeySet(kKey),
                                   checked_dtype(dtype, "empty"), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::kStrided,
              "empty_strided: tessera supports strided tensors only, got ", *layout);
  const c10::DeviceGuard guard(resolve(device));
  return at::detail::empty_strided_generic(size, stride, &allocator(), c10::DispatchKeySet(kKey),
                                           checked_dtype(dtype, "empty_strided"));
}

// set_(self, storage, offset, size, stride): self views `source`, which
// grows if the view reaches past its end (as on CPU).
at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t storage_offset,
                        c10::IntArrayRef size, c10::IntArrayRef stride) {
  TORCH_CHECK(source.device().is_privateuseone() || source.nbytes() == 0,
              "set_: expected a tessera storage, got one on ", source.device());
  TORCH_CHECK(stride.empty() || stride.size() == size.size(), "set_: got ", size.size(),
              " sizes and ", stride.size(), " strides");
  TORCH_CHECK(storage_offset >= 0, "set_: negative storage offset ", storage_offset);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
    impl->set_storage_offset(storage_offset);
  } else {
    impl->set_sizes_and_strides(size, stride, storage_offset);
  }
  if (self.numel() == 0) return self;
  int64_t last = storage_offset;
  for (size_t d = 0; d < size.size(); ++d) {
    last += (size[d] - 1) * self.stride(static_cast<int64_t>(d));
  }
  const size_t needed = static_cast<size_t>(last + 1) * self.element_size();
  if (needed > impl->storage().nbytes()) resize_storage_bytes(impl->storage(), needed);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes() / self.element_size());
  return set_storage(self, std::move(source), 0, {n}, {});
}

at::Tensor& set_empty(at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, allocator().allocate(0), &allocator(),
                     /*resizable=*/true);
  return set_storage(self, std::move(empty), 0, {0}, {});
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Tensor", TORCH_FN(at::native::set_tensor_));
  m.impl("set_", TORCH_FN(set_empty));
}

}  // namespace
}  // namespace torch_tessera
