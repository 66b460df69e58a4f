// The sources and weights of PyTorch's interpolation modes along one
// spatial dim, computed on the host for the upsample composites
// (nn_upsample.cc), with ATen's index and weight arithmetic
// (aten/src/ATen/native/UpSample.h and the CPU kernels) in the compute type:
// double for float64, float otherwise, so that the same sources and
// weights come out.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/core/dtype.h"
#include "runtime/ops/gather_sum.h"
#include "runtime/ops/nn_ops.h"

namespace tessera::resample {

// Group i holds what output position i of a dim resized from `in` to
// `out` positions reads:
//   kNearest       one source, floor(i * s) clamped (ATen's nearest_idx:
//                  out == in copies and out == 2 in halves, whatever the
//                  scale), in float;
//   kNearestExact  one source, floor((i + 0.5) * s) clamped (ATen's
//                  nearest_neighbor_exact_compute_source_index), in float;
//   kLinear        two sources and weights (compute_source_index_and_lambda;
//                  out == in copies);
//   kCubic         four sources (clamped to the border, so one may repeat)
//                  with A = -0.75 cubic-convolution weights.
// s is 1 / scale when scale is given and positive, else in / out (ATen's
// compute_scales_value); align_corners (linear and cubic only) uses
// (in - 1) / (out - 1) instead and maps the corner pixels onto each other.
Groups interpolation_taps(Interpolation mode, DType compute, int64_t in, int64_t out,
                          bool align_corners, std::optional<double> scale);

// Whether groups (over `in` sources) read source i alone with weight 1 for
// every output i < in and there are `in` of them: the resize leaves the dim
// as it is.
bool is_identity(const Groups& groups, int64_t in);

}  // namespace tessera::resample
