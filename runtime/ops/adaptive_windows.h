// The windows of adaptive pooling, shared by the average and max forms:
// output position i of `out` over `in` positions covers
// [floor(i * in / out), ceil((i + 1) * in / out)), as PyTorch's
// start_index / end_index, so windows overlap where out does not divide in.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/gather_sum.h"

namespace tessera::adaptive {

inline int64_t window_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
inline int64_t window_end(int64_t i, int64_t in, int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

// The windows as groups of input positions (sizes below 2^31, checked by
// check_sizes, keep i * in far from overflowing).
inline resample::Groups windows(int64_t out, int64_t in) {
  resample::Groups groups(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    for (int64_t k = window_start(i, in, out); k < window_end(i, in, out); ++k) {
      groups[static_cast<size_t>(i)].push_back({k});
    }
  }
  return groups;
}

// Checks an adaptive pooling's input ([N, C, spatial...] or [C, spatial...]
// with `rank` spatial dims, floating, non-empty but for the batch) and
// output_size (one entry for every dim, or `rank` entries); returns the
// output's spatial sizes.
inline Shape check_sizes(const char* op, const Tensor& input, const Shape& output_size,
                         int64_t rank) {
  TESSERA_CHECK(input.defined(), ValueError, op, ": undefined input");
  TESSERA_CHECK(input.dim() == rank + 1 || input.dim() == rank + 2, ValueError, op, ": expected a ",
                rank + 1, "-D or ", rank + 2, "-D input, got ", describe(input));
  TESSERA_CHECK(is_floating(input.dtype()), TypeError, op, ": expected a floating input, got ",
                describe(input));
  for (int64_t d = input.dim() - rank - 1; d < input.dim(); ++d) {
    TESSERA_CHECK(input.size(d) > 0, ValueError, op,
                  ": expected input to have non-zero size for non-batch dimensions, but input "
                  "has sizes ", shape_to_string(input.sizes()), " with dimension ", d,
                  " being empty");
  }
  TESSERA_CHECK(output_size.size() == 1 || static_cast<int64_t>(output_size.size()) == rank,
                ValueError, op, ": output_size must have 1 or ", rank, " elements, got ",
                shape_to_string(output_size));
  const Shape out = output_size.size() == 1 ? Shape(static_cast<size_t>(rank), output_size[0])
                                            : output_size;
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t j = 0; j < rank; ++j) {
    TESSERA_CHECK(out[j] >= 0, ValueError, op,
                  ": elements of output_size must be greater than or equal to 0, got ",
                  shape_to_string(out));
    TESSERA_CHECK(out[j] < kLimit && input.size(input.dim() - rank + j) < kLimit, ValueError, op,
                  ": sizes beyond 2^31 are not supported, got input ",
                  shape_to_string(input.sizes()), " and output_size ", shape_to_string(out));
  }
  return out;
}

// input's sizes with the last `out.size()` replaced by out.
inline Shape with_spatial(const Shape& sizes, const Shape& out) {
  Shape s = sizes;
  for (size_t j = 0; j < out.size(); ++j) s[s.size() - out.size() + j] = out[j];
  return s;
}

}  // namespace tessera::adaptive
