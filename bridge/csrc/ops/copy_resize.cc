// Copies between tessera and the host (or two tessera devices), reading a
// scalar back, and resize_: the other half of PyTorch's minimal kernel set.
#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "bridge/csrc/complex_views.h"
#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/ops/copy_from.h"
#include "bridge/csrc/storage_resize.h"
#include "runtime/ops/ops.h"
#include "bridge/csrc/tensor_convert.h"

namespace torch_tessera {
namespace {

tessera::Tensor runtime_side(const at::Tensor& t, const char* op) {
  if (t.device().is_privateuseone()) return to_runtime(t, op);
  TORCH_CHECK(t.device().is_cpu(), op, ": tessera copies to and from CPU or tessera tensors, got ",
              t.device());
  return borrow_host(t);
}

// The real pairs of a complex tensor on either side of a copy (a CPU one
// is borrowed through its own real view).
tessera::Tensor runtime_pairs(const at::Tensor& t, const char* op) {
  if (t.device().is_privateuseone()) return to_runtime_real_pairs(t, op);
  TORCH_CHECK(t.device().is_cpu(), op, ": tessera copies to and from CPU or tessera tensors, got ",
              t.device());
  return borrow_host(physical_real_view(t, op));
}

// Copies where either side is complex, as real pairs. aten's copy_ has
// already resolved the conjugate bits (it conjugates dst afterwards when
// only one side had it). Real into complex writes the real parts and zeros
// the imaginary ones; complex into real keeps the real parts (copy_ warns).
void copy_complex(const at::Tensor& src, const at::Tensor& dst) {
  const bool src_complex = src.is_complex();
  const bool dst_complex = dst.is_complex();
  if (src_complex && dst_complex) {
    tessera::Tensor d = runtime_pairs(dst, "copy_");
    TESSERA_TRANSLATE_ERRORS(d.copy_(runtime_pairs(src, "copy_")));
  } else if (dst_complex) {
    const tessera::Tensor d = runtime_pairs(dst, "copy_");
    tessera::Tensor real = d.select(-1, 0);
    tessera::Tensor imag = d.select(-1, 1);
    TESSERA_TRANSLATE_ERRORS(real.copy_(runtime_side(src, "copy_")));
    TESSERA_TRANSLATE_ERRORS(imag.zero_());
  } else if (dst.scalar_type() == c10::kBool) {
    // A complex value is true when either part is nonzero (c10's cast).
    tessera::Tensor d = runtime_side(dst, "copy_");
    const tessera::Tensor pairs = runtime_pairs(src, "copy_");
    TESSERA_TRANSLATE_ERRORS(d.copy_(tessera::logical_or(pairs.select(-1, 0), pairs.select(-1, 1))));
  } else {
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
    tessera::Tensor d = runtime_side(dst, "copy_");
    TESSERA_TRANSLATE_ERRORS(d.copy_(runtime_pairs(src, "copy_").select(-1, 0)));
  }
}

// aten's copy_ leaves the conjugate and negative bits to a PrivateUse1
// device's _copy_from: the data is copied as stored, then dst's stored
// values are negated (all of them, or the imaginary parts) where its bit
// differs from the source's.
void apply_math_bits(const at::Tensor& src, const at::Tensor& dst) {
  const bool negate = src.is_neg() != dst.is_neg();
  const bool conjugate = src.is_complex() && dst.is_complex() && src.is_conj() != dst.is_conj();
  if (!negate && !conjugate) return;
  const at::Tensor stored =
      dst.is_complex() ? physical_real_view(dst, "copy_") : physical_view(dst);
  if (negate) stored.neg_();
  if (conjugate) stored.select(-1, 1).neg_();
}

}  // namespace

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  // non_blocking: a copy between tessera and pinned host memory stays in
  // flight on the device's current stream (the runtime's copy_); every
  // other copy is complete on return.
  const c10::Device device = dst.device().is_privateuseone() ? dst.device() : self.device();
  const c10::DeviceGuard guard(device);
  if (self.is_complex() || dst.is_complex()) {
    copy_complex(self, dst);
  } else {
    tessera::Tensor d = runtime_side(dst, "copy_");
    const tessera::Tensor s = runtime_side(self, "copy_");
    TESSERA_TRANSLATE_ERRORS(d.copy_(s, non_blocking && !self.is_neg() && !dst.is_neg()));
  }
  apply_math_bits(self, dst);
  return dst;
}

namespace {

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
  if (self.is_complex()) {
    const at::Tensor pair = at::empty({2}, self.options().device(c10::kCPU).dtype(
                                               complex_component_type(self.scalar_type())));
    tessera::Tensor host = borrow_host(pair);
    TESSERA_TRANSLATE_ERRORS(host.copy_(to_runtime_real_pairs(self.resolve_conj(), "item").view({2})));
    const double re = pair[0].item<double>(), im = pair[1].item<double>();
    return c10::Scalar(c10::complex<double>(re, im));
  }
  tessera::Scalar value;
  TESSERA_TRANSLATE_ERRORS(value = to_runtime(self, "item").item());
  return to_torch_scalar(value);
}

// _copy_from's schema marks no argument as written, so aten's Conjugate
// and Negative fallbacks would resolve a dst with either bit into a clone
// and drop the write (z.conj().add_(1), which they run as a copy back into
// the conjugate view). copy_from applies both sides' bits itself.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("resize_", TORCH_FN(resize));
}

}  // namespace
}  // namespace torch_tessera
