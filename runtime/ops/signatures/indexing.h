// Kernel signatures: shape and indexing ops, and creation/random ops beyond
// the first slice (randint, bernoulli, dropout, eye, linspace, tril, triu).
// See kernel_signatures.h for the conventions.
//
// Most shape ops (cat, stack, split, chunk, flip, roll, repeat, pad, eye,
// one_hot, topk, masked_select, dropout) are composites in the front end,
// built from views, copy_ and the few kernels below, so a new device only
// needs these. Index tensors reaching a kernel have been range-checked by
// the front end (with IndexBounds), so kernels never see an out-of-range
// index; negative indices are already wrapped where said.
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/random/philox.h"

namespace tessera::kernels {

// out = {min, max} of an integer index tensor (any integer dtype, any
// strides, at least one element), as int64 in a 1-D out of 2 elements. The
// front ends read it back to validate index ranges before indexing.
struct IndexBounds {
  static constexpr const char* name = "index_bounds";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& index);
};

// out[..., i, ...] = self[..., index[..., i, ...], ...] along dim (torch.gather).
// index is int64 with out's sizes (any strides, stride 0 from expand: so
// index_select is a gather of an expanded index); self has out's rank and
// dtype, and size >= out's size in every dim but dim. Indices are in
// [-self.size(dim), self.size(dim)); negatives count from the end.
struct Gather {
  static constexpr const char* name = "gather";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& self, int64_t dim,
                      const Tensor& index);
};

// How a scatter combines src with what self holds: kNone replaces; the
// others fold every src element into the destination in row-major order of
// index, one element at a time, rounding to self's dtype after each step
// (PyTorch's index_reduce; where PyTorch rounds float16/bfloat16 sums once,
// the front ends scatter into a float copy). kAdd adds (bool: or), kMul
// multiplies (bool: and; integers wrap), kMax/kMin keep the larger/smaller
// and propagate NaN from either side (bool: or/and).
enum class ScatterReduce : uint8_t { kNone, kAdd, kMul, kMax, kMin };

// self[..., index[..., i, ...], ...] (= | op=) src[..., i, ...] along dim.
// index (int64) and src (self's dtype, may be expanded) have one shape,
// <= self's in every dim but dim. With duplicate indices and kNone the last
// write in row-major order of index wins on the CPU (PyTorch leaves it
// unspecified). Indices are in [-size, size) as for Gather.
struct Scatter {
  static constexpr const char* name = "scatter";
  using Fn = void (*)(const KernelContext&, Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor& src, ScatterReduce reduce);
};

// Advanced-index assignment over the first k dims of self:
//   self[indices[0][b], ..., indices[k-1][b], r...] (=|+=) values[b, r...]
// for b over the broadcast index shape B and r over self's remaining dims.
// indices is int64 [k, B...] (any strides); values is self's dtype with
// shape [B..., self.sizes()[k:]...] (may be expanded). Indices are in
// [-size, size) of their dim. Duplicates: last write wins on the CPU
// without accumulate; accumulate sums them.
struct IndexPut {
  static constexpr const char* name = "index_put";
  using Fn = void (*)(const KernelContext&, Tensor& self, const Tensor& indices,
                      const Tensor& values, bool accumulate);
};

// values, indices = sort of self along dim (torch.sort), or its first k
// entries (torch.topk): values has self's dtype and self's sizes except
// along dim, where it has k <= self.size(dim) entries; indices (int64) has
// values' sizes. NaN sorts as the largest value. Equal values keep their
// order (the CPU kernel breaks ties by index, hence is always stable).
struct Sort {
  static constexpr const char* name = "sort";
  using Fn = void (*)(const KernelContext&, Tensor& values, Tensor& indices, const Tensor& self,
                      int64_t dim, bool descending, bool stable);
};

// out [n, ndim] int64 = coordinates of the nonzero elements of self in
// row-major order; the front end has counted n (for a 0-d self, ndim is 0).
struct Nonzero {
  static constexpr const char* name = "nonzero";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& self);
};

// self[i] = value where mask[i] (mask is bool, expanded to self's sizes).
struct MaskedFill {
  static constexpr const char* name = "masked_fill";
  using Fn = void (*)(const KernelContext&, Tensor& self, const Tensor& mask, Scalar value);
};

// out = in with the elements above (upper = false, tril) or below (upper =
// true, triu) the given diagonal set to zero, over the last two dims. out
// and in have one dtype and sizes (may be the same tensor).
struct Triangle {
  static constexpr const char* name = "triangle";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& in, int64_t diagonal,
                      bool upper);
};

// out (1-D, n >= 1 elements) = linspace(start, end, n), computed in double
// as start + i * step for i < n / 2 and end - (n - 1 - i) * step above (so
// both ends are exact), step = (end - start) / (n - 1), then converted to
// out's dtype (truncating for integers; the front end passes integer
// ends for integer dtypes).
struct Linspace {
  static constexpr const char* name = "linspace";
  using Fn = void (*)(const KernelContext&, Tensor& out, double start, double end);
};

// out[i] = low + (R_i mod range) at flat row-major index i, R_i the 64-bit
// value of lanes (2*(i%2), 2*(i%2)+1) of Philox block offset + i / 2.
// range >= 1; the sum wraps as out's integer type (it never overflows the
// range the front end validated).
struct Randint {
  static constexpr const char* name = "randint";
  using Fn = void (*)(const KernelContext&, Tensor& out, PhiloxState state, int64_t low,
                      uint64_t range);
};

// out[i] = (U_i < p[i]) ? 1 : 0 at flat row-major index i, U_i =
// philox_uniform_double(state, i). p is floating, expanded to out's sizes;
// out is any dtype.
struct Bernoulli {
  static constexpr const char* name = "bernoulli";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& p, PhiloxState state);
};

}  // namespace tessera::kernels
