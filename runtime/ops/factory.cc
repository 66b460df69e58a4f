// Creation ops: allocation through the device's caching allocator, then a
// fill or arange kernel.
#include <cmath>

#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

Tensor empty(const Shape& sizes, TensorOptions options) {
  DType dtype = options.dtype_or(DType::kF32);
  int64_t numel = checked_numel(sizes, "empty");
  size_t nbytes = checked_mul_size(static_cast<size_t>(numel), itemsize(dtype), "empty");
  StoragePtr storage = allocate_storage(options.device, nbytes);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = sizes;
  impl->strides = contiguous_strides(sizes);
  impl->dtype = dtype;
  impl->numel = numel;
  impl->is_contiguous = true;
  return Tensor(std::move(impl));
}

Tensor empty_pinned(const Shape& sizes, DType dtype) {
  int64_t numel = checked_numel(sizes, "empty_pinned");
  size_t nbytes = checked_mul_size(static_cast<size_t>(numel), itemsize(dtype), "empty_pinned");
  return Tensor::from_storage(PinnedHostAllocator::get().allocate(nbytes), dtype, sizes,
                              contiguous_strides(sizes), 0);
}

Tensor empty_strided(const Shape& sizes, const Shape& strides, TensorOptions options) {
  DType dtype = options.dtype_or(DType::kF32);
  size_t nbytes = checked_storage_bytes(sizes, strides, 0, itemsize(dtype), "empty_strided");
  return Tensor::from_storage(allocate_storage(options.device, nbytes), dtype, sizes, strides);
}

Tensor empty_like(const Tensor& t) { return empty(t.sizes(), TensorOptions(t.dtype(), t.device())); }

Tensor& Tensor::fill_(Scalar value) {
  check_scalar_fits("fill_", value, dtype());
  if (numel() > 0) call_kernel<kernels::Fill>(device(), *this, value);
  return *this;
}

Tensor full(const Shape& sizes, Scalar value, TensorOptions options) {
  options.dtype = options.dtype_or(default_dtype_for(value.category()));
  Tensor t = empty(sizes, options);
  t.fill_(value);
  return t;
}

Tensor zeros(const Shape& sizes, TensorOptions options) {
  options.dtype = options.dtype_or(DType::kF32);
  return full(sizes, 0, options);
}

Tensor ones(const Shape& sizes, TensorOptions options) {
  options.dtype = options.dtype_or(DType::kF32);
  return full(sizes, 1, options);
}

Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), TensorOptions(t.dtype(), t.device())); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), TensorOptions(t.dtype(), t.device())); }
Tensor full_like(const Tensor& t, Scalar value) {
  return full(t.sizes(), value, TensorOptions(t.dtype(), t.device()));
}

Tensor arange(Scalar end, TensorOptions options) { return arange(0, end, 1, options); }

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  bool any_float = start.is_floating() || end.is_floating() || step.is_floating();
  DType dtype = options.dtype_or(any_float ? DType::kF32 : DType::kI64);
  double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  TESSERA_CHECK(std::isfinite(s) && std::isfinite(e), ValueError,
                "arange: unsupported range: ", start.to_string(), " -> ", end.to_string());
  TESSERA_CHECK(st != 0, ValueError, "arange: step must be nonzero");
  TESSERA_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError,
                "arange: upper bound (", end.to_string(), ") and lower bound (", start.to_string(),
                ") inconsistent with step sign (", step.to_string(), ")");
  double n = any_float ? std::ceil((e - s) / st) : 0;
  int64_t length;
  if (any_float) {
    TESSERA_CHECK(n >= 0 && n < 9.2e18, ValueError, "arange: too many elements (", n, ")");
    length = static_cast<int64_t>(n);
  } else {
    // Exact integer arithmetic: ceil((e - s) / st).
    int64_t si = start.to<int64_t>(), ei = end.to<int64_t>(), sti = step.to<int64_t>();
    int64_t span;
    TESSERA_CHECK(!__builtin_sub_overflow(ei, si, &span), ValueError,
                  "arange: range overflows int64");
    length = span / sti + (span % sti != 0 ? 1 : 0);
  }
  Tensor out = empty({length}, TensorOptions(dtype, options.device));
  if (length > 0) call_kernel<kernels::Arange>(out.device(), out, start, step);
  return out;
}

}  // namespace tessera
