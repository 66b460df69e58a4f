// The naive pooling reference shared by nn3d_cases.cc and
// adaptive_pool_cases.cc: windows given per spatial dim (sliding or
// adaptive), then max or average over their cartesian product, in double.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {

// One spatial dim's windows: for each output position the input positions
// it reads, ascending, and the length PyTorch divides by with
// count_include_pad (the window clipped to the padded input).
struct PoolDim {
  std::vector<std::vector<int64_t>> positions;
  std::vector<int64_t> padded_length;
};

// Output length of a sliding pooled dim, as PyTorch's pooling_output_shape:
// with ceil_mode the last window must start inside the input or the left
// padding.
inline int64_t pooled_length(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                             bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1;
  int64_t out = (ceil_mode ? span + stride - 1 : span) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Window o reads o * stride - pad + j * dilation for j < k.
inline PoolDim sliding_windows(int64_t in, int64_t k, int64_t stride, int64_t pad,
                               int64_t dilation, bool ceil_mode) {
  PoolDim dim;
  const int64_t out = pooled_length(in, k, stride, pad, dilation, ceil_mode);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad;
    std::vector<int64_t> window;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t p = start + j * dilation;
      if (p >= 0 && p < in) window.push_back(p);
    }
    dim.positions.push_back(window);
    dim.padded_length.push_back(std::min(start + k, in + pad) - start);
  }
  return dim;
}

// Adaptive window i of `out` over `in` covers [floor(i in / out),
// ceil((i + 1) in / out)).
inline PoolDim adaptive_windows(int64_t in, int64_t out) {
  PoolDim dim;
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    std::vector<int64_t> window;
    for (int64_t p = start; p < end; ++p) window.push_back(p);
    dim.positions.push_back(window);
    dim.padded_length.push_back(end - start);
  }
  return dim;
}

enum class PoolKind { kMax, kAvg };

struct PoolResult {
  Expected values;
  Expected indices;     // max: flat position in the spatial volume
  Expected grad_input;  // when a grad_output was given
};

// Pools x ([lead..., spatial...], one PoolDim per spatial dim). Max takes
// the first maximum in row-major window order, NaN above all (samples keep
// one NaN per window: of several, PyTorch's kernels keep the last); average
// divides by divisor_override if non-zero, else by the product of the
// padded lengths (count_include_pad) or of the window sizes. With grad
// (row-major, of the output's shape), also the adjoint: each output's
// gradient to its maximum, or divided over its window.
inline PoolResult pool_reference(const Tensor& x, const std::vector<PoolDim>& dims, PoolKind kind,
                                 bool count_include_pad, int64_t divisor_override,
                                 const std::vector<double>* grad) {
  const size_t rank = dims.size();
  const DType t = x.dtype();
  const std::vector<double> v = values_of(x);
  Shape out_sizes = x.sizes(), in_spatial, out_spatial;
  for (size_t j = 0; j < rank; ++j) {
    const size_t d = x.sizes().size() - rank + j;
    in_spatial.push_back(x.size(static_cast<int64_t>(d)));
    out_spatial.push_back(static_cast<int64_t>(dims[j].positions.size()));
    out_sizes[d] = out_spatial.back();
  }
  const int64_t volume = numel_of(in_spatial);
  const int64_t planes = volume == 0 ? 0 : numel_of(x.sizes()) / volume;
  PoolResult r{{out_sizes, t, {}}, {out_sizes, DType::kI64, {}}, {x.sizes(), t, std::vector<double>(v.size(), 0.0)}};
  for (int64_t p = 0; p < planes; ++p) {
    for_each_coord(out_spatial, [&](const Shape& o) {
      Shape counts;
      double padded = 1, valid = 1;
      for (size_t j = 0; j < rank; ++j) {
        counts.push_back(static_cast<int64_t>(dims[j].positions[o[j]].size()));
        padded *= static_cast<double>(dims[j].padded_length[o[j]]);
        valid *= static_cast<double>(counts.back());
      }
      // The window's flat positions in the plane, in row-major order.
      std::vector<int64_t> window;
      for_each_coord(counts, [&](const Shape& k) {
        int64_t flat = 0;
        for (size_t j = 0; j < rank; ++j) flat = flat * in_spatial[j] + dims[j].positions[o[j]][k[j]];
        window.push_back(flat);
      });
      const size_t out_index = r.values.values.size();
      const double g = grad ? (*grad)[out_index] : 0.0;
      if (kind == PoolKind::kMax) {
        int64_t best = -1;
        for (int64_t w : window) {
          const double a = v[p * volume + w], b = best < 0 ? 0 : v[p * volume + best];
          if (best < 0 || a > b || (std::isnan(a) && !std::isnan(b))) best = w;
        }
        r.values.values.push_back(v[p * volume + best]);
        r.indices.values.push_back(static_cast<double>(best));
        r.grad_input.values[p * volume + best] += g;
      } else {
        const double divisor = divisor_override ? divisor_override : count_include_pad ? padded : valid;
        double sum = 0;
        for (int64_t w : window) sum += v[p * volume + w];
        r.values.values.push_back(round_to_dtype(sum / divisor, t));
        for (int64_t w : window) r.grad_input.values[p * volume + w] += g / divisor;
      }
    });
  }
  for (double& e : r.grad_input.values) e = round_to_dtype(e, t);
  return r;
}

// The samples with a grad_output of out_sizes(sample) appended to their
// inputs, values in [-2, 2].
inline std::vector<Sample> with_grad_outputs(std::vector<Sample> samples, DType t,
                                             const std::function<Shape(const Sample&)>& out_sizes) {
  uint64_t seed = 9001;
  for (Sample& s : samples) s.inputs.push_back(make_input(out_sizes(s), t, seed++, -2, 2));
  return samples;
}

}  // namespace tessera::conformance
