// Small argument helpers shared by the nn front ends (nn_*.cc).
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/indexing_checks.h"

namespace tessera::nn_detail {

// A 2-D op's size argument: one entry applies to both dims, two are kept.
inline Shape pair_arg(const char* op, const char* name, const Shape& s) {
  TESSERA_CHECK(s.size() == 1 || s.size() == 2, ValueError, op, ": ", name,
                " must be a single int or a pair of ints, got ", shape_to_string(s));
  return s.size() == 1 ? Shape{s[0], s[0]} : s;
}

// A 3-D op's size argument: one entry applies to all three dims.
inline Shape triple_arg(const char* op, const char* name, const Shape& s) {
  TESSERA_CHECK(s.size() == 1 || s.size() == 3, ValueError, op, ": ", name,
                " must be a single int or a tuple of three ints, got ", shape_to_string(s));
  return s.size() == 1 ? Shape{s[0], s[0], s[0]} : s;
}

// Output length of one pooled dim, as PyTorch's pooling_output_shape: with
// ceil_mode the last window must still start inside the input or the left
// padding.
inline int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                           bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Max pooling's saved indices for a backward: int64, each a position in
// the pooled input's flattened spatial volume [0, volume) (a device kernel
// would scatter out of range). `input` names the input in the message.
inline void check_pool_indices(const char* op, const Tensor& indices, int64_t volume,
                               const Tensor& input) {
  TESSERA_CHECK(indices.dtype() == DType::kI64, TypeError, op, ": expected int64 indices, got ",
                describe(indices));
  if (indices.numel() == 0) return;
  const auto [lo, hi] = indexing::index_min_max(indices);
  TESSERA_CHECK(lo >= 0 && hi < volume, IndexError, op, ": index ", lo < 0 ? lo : hi,
                " is out of range for the ", volume, " positions of each plane of input ",
                shape_to_string(input.sizes()));
}

// The windows of a max or average pooling over the last `rank` (2 or 3)
// dims of input [N, C, spatial...]: kernel, stride (empty: the kernel),
// padding and dilation with single entries applied to every dim, checked
// as PyTorch checks them, and the output's sizes [N, C, pooled...]. The
// effective kernel that bounds the padding includes the dilation for max
// pooling only.
struct PoolWindows {
  Shape kernel, stride, padding, dilation;
  Shape out;
};

inline PoolWindows pool_windows(const char* op, const Tensor& input, int64_t rank,
                                const Shape& kernel_size, const Shape& stride,
                                const Shape& padding, const Shape& dilation, bool ceil_mode,
                                bool is_max) {
  auto spatial = [&](const char* name, const Shape& s) {
    return rank == 2 ? pair_arg(op, name, s) : triple_arg(op, name, s);
  };
  PoolWindows w;
  w.kernel = spatial("kernel_size", kernel_size);
  w.stride = stride.empty() ? w.kernel : spatial("stride", stride);
  w.padding = spatial("padding", padding);
  w.dilation = spatial("dilation", dilation);
  w.out = {input.size(0), input.size(1)};
  const int64_t first = input.dim() - rank;
  bool empty = false;
  for (int64_t i = 0; i < rank; ++i) {
    const size_t d = static_cast<size_t>(i);
    TESSERA_CHECK(w.kernel[d] > 0, ValueError, op, ": kernel_size must be greater than zero, got ",
                  shape_to_string(kernel_size));
    TESSERA_CHECK(w.stride[d] > 0, ValueError, op, ": stride must be greater than zero, got ",
                  shape_to_string(stride));
    TESSERA_CHECK(w.dilation[d] > 0, ValueError, op,
                  ": dilation must be greater than zero, got ", shape_to_string(dilation));
    const int64_t effective = is_max ? (w.kernel[d] - 1) * w.dilation[d] + 1 : w.kernel[d];
    TESSERA_CHECK(w.padding[d] >= 0 && w.padding[d] <= effective / 2, ValueError, op,
                  ": pad should be at most half of effective kernel size, but got pad=",
                  shape_to_string(padding), ", kernel_size=", shape_to_string(kernel_size),
                  " and dilation=", shape_to_string(dilation));
    w.out.push_back(pooled_size(input.size(first + i), w.kernel[d], w.padding[d], w.stride[d],
                                w.dilation[d], ceil_mode));
    empty = empty || w.out.back() < 1;
  }
  TESSERA_CHECK(!empty, ValueError, op, ": given input size ", shape_to_string(input.sizes()),
                ", calculated output size ", shape_to_string(w.out), " is too small");
  return w;
}

// The dtype an nn op computes in: float32 for the 16-bit floats (rounded
// once at the end, as PyTorch's kernels), the input's own otherwise.
inline DType compute_dtype(DType t) {
  return is_reduced_float(t) ? DType::kF32 : t;
}

inline Tensor in_dtype(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t : t.to(dtype);
}

inline void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.device() == b.device(), DeviceError, op,
                ": expected all tensors on the same device, got ", describe(a), " and ",
                describe(b));
}

// Whether `from` broadcasts to exactly `to` (checked by the ops so that
// the error names the argument rather than broadcast_shapes' generic text).
inline bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

}  // namespace tessera::nn_detail
