// What an imported DLPack tensor describes, checked before any of it is
// used: the producer is another library (or a hostile capsule), so its
// ndim, shape, strides, dtype and byte offset are input like any other.
// Pure C++ (no Python), so the fuzz target tests/fuzz/dlpack_fuzz.cc runs
// it directly.
#pragma once

#include <cstddef>

#include "bindings/csrc/dlpack_abi.h"
#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace tessera_py {

// DLPack tensors with more dims than this are refused: no library makes
// them, and a garbage ndim must not size an allocation.
inline constexpr int32_t kMaxDLPackDims = 64;

struct DLPackLayout {
  tessera::DType dtype;
  tessera::Shape sizes;
  tessera::Shape strides;  // in elements, all >= 0
  char* data;              // dl.data + dl.byte_offset
  size_t nbytes;           // from data to one past the last element; 0 if empty
};

// The tessera dtype of a DLPack dtype, or nothing when there is none.
std::optional<tessera::DType> dtype_of_dlpack(const dlpack::DataType& t);

// dl's layout, or tessera::TypeError for a dtype without a tessera dtype
// and tessera::ValueError (naming `op` and the values) for a negative or
// huge ndim, a null shape, negative sizes or strides, a null data pointer
// under elements, an extent that overflows, or data not aligned to its
// element size.
DLPackLayout checked_dlpack_layout(const dlpack::Tensor& dl, const char* op);

}  // namespace tessera_py
