#include "bridge/csrc/tensor_convert.h"

#include <ATen/core/TensorBody.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "bridge/csrc/allocator.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/device_mix.h"
#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/foreign_memory.h"

namespace torch_tessera {
namespace {

// Every tensor argument of every kernel comes through here, so this is the
// bridge's per-op cost. Tensor::from_storage validates a layout from
// scratch (sign and overflow checks on every size and stride) and then
// recomputes numel and contiguity; for a torch tensor most of that is
// already known. This keeps the one check that protects memory, that the
// layout lies within the storage (torch lets a storage shrink under a live
// tensor: untyped_storage().resize_(0)), computes numel and contiguity in
// the same pass with TensorImpl::refresh's rule, and fills the runtime
// TensorImpl directly. Anything unusual (negative strides, overflow, a
// layout past the storage) returns false, and from_storage then reports it
// with the runtime's own message.
bool fill_fast(const tessera::StoragePtr& storage, bool own_storage, tessera::DType dtype,
               const c10::TensorImpl& t, tessera::TensorImpl& impl) {
  const c10::IntArrayRef sizes = t.sizes();
  const c10::IntArrayRef strides = t.strides();
  const int64_t offset = t.storage_offset();
  if (offset < 0 || sizes.size() != strides.size()) return false;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0) return false;
    empty = empty || sizes[d] == 0;
  }
  int64_t numel = 1;
  bool contiguous = true;  // PyTorch's rule: size-1 dims may have any stride
  if (empty) {
    numel = 0;  // holds no element, needs no memory, counts as contiguous
  } else {
    int64_t last = offset;  // largest element offset the layout reaches
    for (size_t d = sizes.size(); d-- > 0;) {
      int64_t reach;
      if (sizes[d] != 1 && strides[d] != numel) contiguous = false;
      if (__builtin_mul_overflow(numel, sizes[d], &numel) ||
          __builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
          __builtin_add_overflow(last, reach, &last)) {
        return false;
      }
    }
    const uint64_t elements = static_cast<uint64_t>(last) + 1;
    if (elements > storage->nbytes() / tessera::itemsize(dtype)) return false;
  }
  // Not owning saves two atomic reference-count updates per operand.
  impl.storage = own_storage ? storage : tessera::StoragePtr(tessera::StoragePtr(), storage.get());
  impl.storage_offset = offset;
  impl.sizes.assign(sizes.begin(), sizes.end());
  impl.strides.assign(strides.begin(), strides.end());
  impl.dtype = dtype;
  impl.numel = numel;
  impl.is_contiguous = contiguous;
  return true;
}

// The runtime dtype and storage of a tessera tensor (its allocator's, or
// borrowed foreign memory kept in `borrowed`), after the checks every
// conversion makes.
const tessera::StoragePtr& checked_storage(const at::Tensor& t, const char* op,
                                           tessera::DType& dtype, tessera::StoragePtr& borrowed) {
  TORCH_CHECK(t.layout() == c10::kStrided, op, ": tessera supports strided tensors only, got ",
              t.layout());
  dtype = to_runtime_dtype(t.scalar_type(), op);
  const c10::Storage& storage = t.storage();
  if (const tessera::StoragePtr* runtime = runtime_storage(storage.data_ptr())) return *runtime;
  borrowed = borrow_foreign_storage(storage, t.device(), op);  // e.g. from torch.from_dlpack
  return borrowed;
}

}  // namespace

tessera::Shape to_runtime_shape(c10::IntArrayRef a) { return tessera::Shape(a.begin(), a.end()); }

tessera::DType to_runtime_dtype(c10::ScalarType type, const char* op) {
  switch (type) {
    case c10::ScalarType::Bool: return tessera::DType::kBool;
    case c10::ScalarType::Byte: return tessera::DType::kU8;
    case c10::ScalarType::Char: return tessera::DType::kI8;
    case c10::ScalarType::Short: return tessera::DType::kI16;
    case c10::ScalarType::Int: return tessera::DType::kI32;
    case c10::ScalarType::Long: return tessera::DType::kI64;
    case c10::ScalarType::Half: return tessera::DType::kF16;
    case c10::ScalarType::BFloat16: return tessera::DType::kBF16;
    case c10::ScalarType::Float: return tessera::DType::kF32;
    case c10::ScalarType::Double: return tessera::DType::kF64;
    default: break;
  }
  C10_THROW_ERROR(TypeError, std::string(op) + ": tessera does not support dtype " +
                                 c10::toString(type));
}

c10::ScalarType to_torch_dtype(tessera::DType type) {
  switch (type) {
    case tessera::DType::kBool: return c10::ScalarType::Bool;
    case tessera::DType::kU8: return c10::ScalarType::Byte;
    case tessera::DType::kI8: return c10::ScalarType::Char;
    case tessera::DType::kI16: return c10::ScalarType::Short;
    case tessera::DType::kI32: return c10::ScalarType::Int;
    case tessera::DType::kI64: return c10::ScalarType::Long;
    case tessera::DType::kF16: return c10::ScalarType::Half;
    case tessera::DType::kBF16: return c10::ScalarType::BFloat16;
    case tessera::DType::kF32: return c10::ScalarType::Float;
    case tessera::DType::kF64: return c10::ScalarType::Double;
  }
  TORCH_CHECK(false, "unknown tessera dtype");
}

tessera::Scalar to_runtime_scalar(const c10::Scalar& s, const char* op) {
  if (s.isBoolean()) return tessera::Scalar(s.toBool());
  if (s.isIntegral(/*includeBool=*/false)) return tessera::Scalar(s.toLong());
  if (s.isFloatingPoint()) return tessera::Scalar(s.toDouble());
  C10_THROW_ERROR(TypeError, std::string(op) + ": tessera does not support complex scalars");
}

c10::Scalar to_torch_scalar(const tessera::Scalar& s) {
  if (s.is_bool()) return c10::Scalar(s.to<bool>());
  if (s.is_integral()) return c10::Scalar(s.to<int64_t>());
  return c10::Scalar(s.to<double>());
}

tessera::Tensor borrow_host(const at::Tensor& t) {
  const tessera::DType dtype = to_runtime_dtype(t.scalar_type());
  const size_t nbytes = t.storage().nbytes();
  auto storage = std::make_shared<tessera::Storage>(tessera::host_device(),
                                                    t.storage().mutable_data(), nbytes,
                                                    /*allocator=*/nullptr);
  tessera::Tensor out;
  TESSERA_TRANSLATE_ERRORS(out = tessera::Tensor::from_storage(
                               std::move(storage), dtype, to_runtime_shape(t.sizes()),
                               to_runtime_shape(t.strides()), t.storage_offset()));
  return out;
}

namespace {

// A non-tessera operand: only a 0-d CPU tensor may join tessera ones.
tessera::Tensor other_device_operand(const at::Tensor& t, const char* op) {
  TORCH_CHECK(is_cpu_scalar(t), op,
              ": Expected all tensors to be on the same device, but found at least two "
              "devices, tessera:", static_cast<int>(current_device()), " and ", t.device(),
              " (a tensor of shape ", t.sizes(), " and dtype ", t.scalar_type(),
              "; only 0-d CPU tensors mix with tessera ones)");
  return borrow_host(t);
}

// The slow path of a conversion: the runtime validates the layout from
// scratch and reports what is wrong with it.
tessera::Tensor from_storage_checked(const tessera::StoragePtr& storage, tessera::DType dtype,
                                     const at::Tensor& t) {
  tessera::Tensor out;
  TESSERA_TRANSLATE_ERRORS(out = tessera::Tensor::from_storage(
                               storage, dtype, to_runtime_shape(t.sizes()),
                               to_runtime_shape(t.strides()), t.storage_offset()));
  return out;
}

}  // namespace

tessera::Tensor to_runtime(const at::Tensor& t, const char* op) {
  if (!t.defined()) return tessera::Tensor();
  if (!t.device().is_privateuseone()) return other_device_operand(t, op);
  tessera::DType dtype;
  tessera::StoragePtr borrowed;
  const tessera::StoragePtr& storage = checked_storage(t, op, dtype, borrowed);
  auto impl = std::make_shared<tessera::TensorImpl>();
  if (fill_fast(storage, /*own_storage=*/true, dtype, *t.unsafeGetTensorImpl(), *impl)) {
    return tessera::Tensor(std::move(impl));
  }
  return from_storage_checked(storage, dtype, t);
}

tessera::Tensor to_runtime_in(const at::Tensor& t, const char* op, tessera::TensorImpl& slot) {
  if (!t.defined()) return tessera::Tensor();
  if (!t.device().is_privateuseone()) return other_device_operand(t, op);
  tessera::DType dtype;
  tessera::StoragePtr borrowed;
  const tessera::StoragePtr& storage = checked_storage(t, op, dtype, borrowed);
  // The tensor's at::Storage keeps its runtime storage alive for the call;
  // borrowed foreign memory is kept only by `borrowed`, so the view owns it.
  const bool own_storage = borrowed != nullptr;
  if (fill_fast(storage, own_storage, dtype, *t.unsafeGetTensorImpl(), slot)) {
    // Aliasing constructor with an empty owner: points at slot, owns nothing.
    return tessera::Tensor(std::shared_ptr<tessera::TensorImpl>(
        std::shared_ptr<tessera::TensorImpl>(), &slot));
  }
  return from_storage_checked(storage, dtype, t);
}

std::optional<tessera::Tensor> to_runtime(const std::optional<at::Tensor>& t, const char* op) {
  if (!t.has_value() || !t->defined()) return std::nullopt;
  return to_runtime(*t, op);
}

std::vector<tessera::Tensor> to_runtime(at::TensorList ts, const char* op) {
  std::vector<tessera::Tensor> out;
  out.reserve(ts.size());
  for (const at::Tensor& t : ts) out.push_back(to_runtime(t, op));
  return out;
}

at::Tensor to_torch(const tessera::Tensor& t) {
  if (!t.defined()) return at::Tensor();
  const tessera::StoragePtr& storage = t.storage();
  if (storage.use_count() == 0) {
    // The storage of an input converted by to_runtime_in, which the view
    // does not own: the runtime gave back its input or a view of it. A
    // result aliases no input (see the header), so it gets a copy.
    tessera::Tensor copy;
    TESSERA_TRANSLATE_ERRORS(copy = t.clone());
    return to_torch(copy);
  }
  c10::Storage torch_storage(c10::Storage::use_byte_size_t(), storage->nbytes(),
                             make_data_ptr(storage), &allocator(), /*resizable=*/true);
  at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(
      std::move(torch_storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      caffe2::TypeMeta::fromScalarType(to_torch_dtype(t.dtype())));
  out.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(),
                                                   t.storage_offset());
  return out;
}

std::vector<at::Tensor> to_torch(const std::vector<tessera::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const tessera::Tensor& t : ts) out.push_back(to_torch(t));
  return out;
}

at::Tensor to_torch_alias(const at::Tensor& base, const tessera::Tensor& view) {
  at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(
      c10::TensorImpl::VIEW, c10::Storage(base.storage()), base.key_set(),
      caffe2::TypeMeta::fromScalarType(to_torch_dtype(view.dtype())));
  out.unsafeGetTensorImpl()->set_sizes_and_strides(view.sizes(), view.strides(),
                                                   view.storage_offset());
  return out;
}

}  // namespace torch_tessera
