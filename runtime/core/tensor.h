// Tensor: a handle to (storage, element offset, sizes, strides, dtype).
// Copying a Tensor copies the handle, as in PyTorch; views share storage
// and never copy data. Strides are in elements.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/dtype.h"
#include "runtime/core/scalar.h"
#include "runtime/core/small_vector.h"
#include "runtime/core/storage.h"
#include "runtime/core/tensor_options.h"

namespace tessera {

// Sizes, strides or dims: inline up to 6 entries (small_vector.h).
using Shape = SmallVector<int64_t, 6>;

// Row-major (C-contiguous) strides for sizes.
Shape contiguous_strides(const Shape& sizes);

struct TensorImpl {
  StoragePtr storage;
  int64_t storage_offset = 0;
  Shape sizes;
  Shape strides;
  DType dtype = DType::kF32;
  int64_t numel = 0;
  bool is_contiguous = true;

  // Recomputes numel and is_contiguous after sizes/strides change.
  void refresh();
};

class Tensor {
 public:
  Tensor() = default;  // undefined: holds nothing
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A tensor over existing storage; checks the layout fits in it.
  static Tensor from_storage(StoragePtr storage, DType dtype, Shape sizes,
                             Shape strides, int64_t storage_offset = 0);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& strides() const { return impl().strides; }
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t size(int64_t d) const;    // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t numel() const { return impl().numel; }
  int64_t storage_offset() const { return impl().storage_offset; }
  size_t itemsize() const { return tessera::itemsize(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  bool is_contiguous() const { return impl().is_contiguous; }
  const StoragePtr& storage() const { return impl().storage; }
  // Address of element 0 (storage data + offset * itemsize).
  void* data_ptr() const {
    const TensorImpl& i = impl();
    return static_cast<char*>(i.storage->data()) +
           i.storage_offset * static_cast<int64_t>(tessera::itemsize(i.dtype));
  }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }
  // True if both are handles to the same TensorImpl.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }

  // -- Views (share storage). Dims may be negative.
  Tensor slice(int64_t dim, std::optional<int64_t> start,
               std::optional<int64_t> end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // transpose of a tensor of at most 2 dims
  Tensor permute(const Shape& dims) const;
  // -1 keeps a size. Sizes equal to this tensor's give this tensor back
  // (the same handle, as contiguous() does): no view to build.
  Tensor expand(const Shape& sizes) const;
  Tensor view(const Shape& sizes) const;    // one size may be -1
  Tensor reshape(const Shape& sizes) const; // a view where possible
  Tensor flatten() const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor as_strided(const Shape& sizes, const Shape& strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;

  // A contiguous tensor with the same values (this one if already so).
  Tensor contiguous() const;
  // A new tensor with the same values, contiguous.
  Tensor clone() const;
  // Converts (copies) to dtype and/or device; returns *this when unchanged.
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  // non_blocking: as copy_'s.
  Tensor to(Device device, DType dtype, bool non_blocking = false) const;
  // Copies src into this tensor (broadcasting src, casting dtype, across
  // devices). Returns *this. non_blocking: see tessera::copy_ (ops.h).
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

  // A copy in page-locked host memory (PinnedHostAllocator), the source of
  // asynchronous host-to-device copies; *this when it already is there.
  Tensor pin_memory() const;
  // True when the data lies in a live block of the pinned host allocator.
  bool is_pinned() const;

  // The value of a one-element tensor.
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  // All values converted to T, in row-major order (copies to the host).
  template <typename T>
  std::vector<T> to_vector() const;

  // "tensor([[1., 2.],\n        [3., 4.]], dtype=..., device=...)"
  std::string to_string() const;

  // -- In-place arithmetic (defined with the ops).
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& div_(const Tensor& other);
  Tensor& fill_(Scalar value);
  Tensor& zero_() { return fill_(0); }

 private:
  // Inline: every accessor goes through it, on every op's path.
  const TensorImpl& impl() const {
    if (impl_ == nullptr) [[unlikely]] throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

template <>
std::vector<bool> Tensor::to_vector<bool>() const;

// Describes a tensor's layout for error messages: "float32[2, 3] on cpu:0".
std::string describe(const Tensor& t);
std::string shape_to_string(const Shape& s);

// Normalizes dim in [-ndim, ndim) to [0, ndim); IndexError naming op else.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tessera
