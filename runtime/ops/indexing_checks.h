// Checks shared by the indexing front ends (internal to runtime/ops).
//
// Index ranges are validated here, on the host side of every device: the
// IndexBounds kernel reduces an index tensor to its min and max on the
// device and the two numbers are read back. Kernels then never see an
// out-of-range index, so a GPU kernel need not report errors from the
// device, and every device raises the same IndexError.
#pragma once

#include "runtime/core/tensor.h"

namespace tessera::indexing {

// IndexError naming op, the offending index, dim and size when index holds
// a value outside [0, size) (or [-size, size) with allow_negative).
void check_index_bounds(const char* op, const Tensor& index, int64_t size, int64_t dim,
                        bool allow_negative);

// {min, max} of a non-empty integer tensor, read back to the host.
std::pair<int64_t, int64_t> index_min_max(const Tensor& index);

// DeviceError naming op unless t is on device.
void check_same_device(const char* op, const Tensor& t, Device device, const char* what);

// TypeError naming op unless index is a defined int64 tensor.
void check_int64_index(const char* op, const Tensor& index);

// The index of index_add, index_copy, index_fill and index_reduce: defined,
// on device, int64 or int32, at most 1-D (TypeError / IndexError naming op).
void check_index_vector(const char* op, const Tensor& index, Device device);

// A 0-d tensor behaves as a 1-element 1-D one in gather and scatter.
inline Tensor as_at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// The shape rules of gather and scatter: index has other's rank and is no
// larger than other in every dim but dim (in every dim when dim < 0).
void check_index_fits(const char* op, const Tensor& index, const Tensor& other, int64_t dim,
                      const char* other_name);

}  // namespace tessera::indexing
