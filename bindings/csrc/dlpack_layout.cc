#include "bindings/csrc/dlpack_layout.h"

#include <cstdint>
#include <string>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"

namespace tessera_py {

using tessera::DType;

std::optional<DType> dtype_of_dlpack(const dlpack::DataType& t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case dlpack::kBool: return t.bits == 8 ? std::optional(DType::kBool) : std::nullopt;
    case dlpack::kUInt: return t.bits == 8 ? std::optional(DType::kU8) : std::nullopt;
    case dlpack::kInt:
      switch (t.bits) {
        case 8: return DType::kI8;
        case 16: return DType::kI16;
        case 32: return DType::kI32;
        case 64: return DType::kI64;
      }
      return std::nullopt;
    case dlpack::kFloat:
      switch (t.bits) {
        case 16: return DType::kF16;
        case 32: return DType::kF32;
        case 64: return DType::kF64;
      }
      return std::nullopt;
    case dlpack::kBfloat: return t.bits == 16 ? std::optional(DType::kBF16) : std::nullopt;
  }
  return std::nullopt;
}

DLPackLayout checked_dlpack_layout(const dlpack::Tensor& dl, const char* op) {
  const std::optional<DType> dtype = dtype_of_dlpack(dl.dtype);
  TESSERA_CHECK(dtype.has_value(), TypeError, op, ": DLPack dtype (code ",
                int(dl.dtype.code), ", ", int(dl.dtype.bits), " bits, ", dl.dtype.lanes,
                " lanes) has no tessera dtype");
  TESSERA_CHECK(dl.ndim >= 0 && dl.ndim <= kMaxDLPackDims, ValueError, op,
                ": DLPack tensor has ndim ", dl.ndim, " (expected 0 to ", kMaxDLPackDims, ")");
  TESSERA_CHECK(dl.ndim == 0 || dl.shape != nullptr, ValueError, op,
                ": DLPack tensor of ndim ", dl.ndim, " has no shape array");
  DLPackLayout layout{*dtype, tessera::Shape(dl.shape, dl.shape + dl.ndim), {}, nullptr, 0};
  for (int32_t d = 0; d < dl.ndim; ++d) {
    TESSERA_CHECK(layout.sizes[d] >= 0, ValueError, op, ": DLPack shape ",
                  tessera::shape_to_string(layout.sizes), " has a negative size");
  }
  tessera::checked_numel(layout.sizes, op);
  layout.strides = dl.strides != nullptr ? tessera::Shape(dl.strides, dl.strides + dl.ndim)
                                         : tessera::contiguous_strides(layout.sizes);
  for (int32_t d = 0; d < dl.ndim; ++d) {
    TESSERA_CHECK(layout.strides[d] >= 0, ValueError, op,
                  ": negative strides are not supported (strides ",
                  tessera::shape_to_string(layout.strides), "); copy the array first");
  }
  const size_t itemsize = tessera::itemsize(*dtype);
  layout.nbytes = tessera::checked_storage_bytes(layout.sizes, layout.strides, 0, itemsize, op);
  const auto address = reinterpret_cast<uintptr_t>(dl.data);
  TESSERA_CHECK(layout.nbytes == 0 || address != 0, ValueError, op,
                ": DLPack tensor of shape ", tessera::shape_to_string(layout.sizes),
                " has a null data pointer");
  uintptr_t first = 0, end = 0;
  TESSERA_CHECK(!__builtin_add_overflow(address, dl.byte_offset, &first) &&
                    !__builtin_add_overflow(first, layout.nbytes, &end),
                ValueError, op, ": DLPack byte_offset ", dl.byte_offset,
                " and extent of ", layout.nbytes, " bytes run past the address space");
  // Kernels load whole elements.
  TESSERA_CHECK(layout.nbytes == 0 || first % itemsize == 0, ValueError, op,
                ": DLPack data at byte offset ", dl.byte_offset, " is not aligned to its ",
                itemsize, "-byte elements (", tessera::dtype_name(*dtype), ")");
  layout.data = reinterpret_cast<char*>(first);
  return layout;
}

}  // namespace tessera_py
