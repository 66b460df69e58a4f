#include "runtime/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  // An empty tensor may have dims whose product overflows (expand() makes
  // them): it holds no element, so its strides only need to be valid
  // numbers, and saturate. Otherwise an overflow is an error.
  const bool empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    // The product past the outermost dim is no stride: not computed, so
    // a shape whose element count fits never overflows here.
    if (i == 0) break;
    if (__builtin_mul_overflow(stride, std::max<int64_t>(sizes[i], 1), &stride)) {
      TESSERA_CHECK(empty, ValueError, "the strides of a contiguous tensor of shape ",
                    shape_to_string(sizes), " overflow int64");
      stride = std::numeric_limits<int64_t>::max();
    }
  }
  return strides;
}

void TensorImpl::refresh() {
  numel = checked_numel(sizes, "tensor");
  // PyTorch's rule: size-1 dims may have any stride; empty tensors are
  // contiguous.
  is_contiguous = true;
  if (numel == 0) return;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) {
      is_contiguous = false;
      return;
    }
    expected *= sizes[i];
  }
}

Tensor Tensor::from_storage(StoragePtr storage, DType dtype, Shape sizes, Shape strides,
                            int64_t storage_offset) {
  TESSERA_CHECK(storage != nullptr, ValueError, "from_storage: null storage");
  size_t needed = checked_storage_bytes(sizes, strides, storage_offset, tessera::itemsize(dtype),
                                        "from_storage");
  TESSERA_CHECK(needed <= storage->nbytes(), ValueError, "from_storage: layout of ",
                dtype_name(dtype), shape_to_string(sizes), " with strides ",
                shape_to_string(strides), " and offset ", storage_offset, " needs ", needed,
                " bytes but the storage has ", storage->nbytes());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->storage_offset = storage_offset;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = dtype;
  impl->refresh();
  return Tensor(std::move(impl));
}

void Tensor::throw_undefined() {
  throw ValueError("operation on an undefined tensor");
}

int64_t Tensor::size(int64_t d) const {
  TESSERA_CHECK(dim() > 0, IndexError, "size: dimension specified as ", d,
                " but the tensor has no dimensions");
  return sizes()[wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  TESSERA_CHECK(dim() > 0, IndexError, "stride: dimension specified as ", d,
                " but the tensor has no dimensions");
  return strides()[wrap_dim(d, dim(), "stride")];
}


Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), TensorOptions(dtype(), device()));
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType t) const { return to(device(), t); }
Tensor Tensor::to(Device d) const { return to(d, dtype()); }
Tensor Tensor::to(Device d, DType t, bool non_blocking) const {
  if (d == device() && t == dtype()) return *this;
  // A non-blocking copy to the host lands in pinned memory, as PyTorch's
  // does, so that it can stay in flight.
  Tensor out = non_blocking && d == host_device() && device() != d ? empty_pinned(sizes(), t)
                                                                    : empty(sizes(), TensorOptions(t, d));
  out.copy_(*this, non_blocking);
  return out;
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  tessera::copy_(*this, src, non_blocking);
  return *this;
}

Tensor Tensor::pin_memory() const {
  if (is_pinned()) return *this;
  TESSERA_CHECK(device() == host_device(), ValueError, "pin_memory: only host tensors can be "
                "pinned, got a tensor on ", device().to_string());
  Tensor out = empty_pinned(sizes(), dtype());
  out.copy_(*this);
  return out;
}

bool Tensor::is_pinned() const {
  return device() == host_device() && numel() > 0 &&
         PinnedHostAllocator::get().owns(data_ptr());
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  Tensor host = to(host_device(), dtype_v<T>).contiguous();
  std::vector<T> out(static_cast<size_t>(host.numel()));
  if (!out.empty()) std::memcpy(static_cast<void*>(out.data()), host.data_ptr(), host.nbytes());
  return out;
}

// std::vector<bool> is packed; read bools through uint8_t.
template <>
std::vector<bool> Tensor::to_vector<bool>() const {
  std::vector<uint8_t> bytes = to(DType::kBool).to_vector<uint8_t>();
  return std::vector<bool>(bytes.begin(), bytes.end());
}

template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;
template std::vector<int8_t> Tensor::to_vector<int8_t>() const;
template std::vector<int16_t> Tensor::to_vector<int16_t>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<Half> Tensor::to_vector<Half>() const;
template std::vector<BFloat16> Tensor::to_vector<BFloat16>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;

Scalar Tensor::item() const {
  TESSERA_CHECK(numel() == 1, ValueError, "item: a tensor with ", numel(),
                " elements cannot be converted to a Scalar (", describe(*this), ")");
  DType t = dtype();
  if (t == DType::kBool) return Scalar(to_vector<bool>()[0]);
  if (is_integral(t)) return Scalar(to_vector<int64_t>()[0]);
  return Scalar(to_vector<double>()[0]);
}


std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  return std::string(dtype_name(t.dtype())) + shape_to_string(t.sizes()) + " on " +
         t.device().to_string();
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  TESSERA_CHECK(dim >= lo && dim <= hi, IndexError, op,
                ": dimension out of range (expected to be in range of [", lo, ", ", hi,
                "], but got ", dim, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

}  // namespace tessera
