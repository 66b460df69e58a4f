// The kernels a device may provide, one struct per op, each naming the op
// and the exact signature of its kernel (a small table in the style of
// ggml's backend interface). The op front ends have already validated the
// arguments, promoted dtypes, broadcast shapes and allocated outputs, so a
// kernel only computes.
//
// An op marked `optional` (fused attention, the fused optimizer steps) is
// a fast path: its front end runs a composite of other ops on a device
// without it (see kernel_registry.h).
//
// Convention, relied on by the CPU fallback: an output is passed as
// `Tensor&`, an input as `const Tensor&`. Unless said otherwise, tensors
// may have any strides (including 0 from broadcasting), and outputs never
// overlap inputs partially (they may be the same tensor for in-place ops).
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/signatures/pointwise.h"  // BinaryOp and the pointwise op enums
#include "runtime/random/philox.h"

namespace tessera::kernels {

// out[...] = value (converted to out's dtype).
struct Fill {
  static constexpr const char* name = "fill";
  using Fn = void (*)(const KernelContext&, Tensor& out, Scalar value);
};

// out[i] = start + i * step for a 1-D out; computed in double for floating
// dtypes and in int64 for integral ones, then converted.
struct Arange {
  static constexpr const char* name = "arange";
  using Fn = void (*)(const KernelContext&, Tensor& out, Scalar start, Scalar step);
};

// dst = src converted to dst's dtype. Same device, same sizes (the front
// end expands src); any strides on both sides.
struct Copy {
  static constexpr const char* name = "copy";
  using Fn = void (*)(const KernelContext&, Tensor& dst, const Tensor& src);
};

// out = a (op) b, where for kAdd/kSub b is first multiplied by alpha.
// a, b and out have one dtype and out's sizes (a and b are expanded with
// stride-0 dims). kDiv is true division and only gets floating dtypes.
struct Binary {
  static constexpr const char* name = "binary";
  using Fn = void (*)(const KernelContext&, BinaryOp op, Tensor& out,
                      const Tensor& a, const Tensor& b, Scalar alpha);
};

enum class ReduceOp : uint8_t { kSum, kMean };

// out = reduction of in over the dims in `dims` (sorted, unique). out has
// in's rank with size 1 in each reduced dim. out's dtype may differ from
// in's (sum of integers is int64); accumulation is in double for f64, in
// float for f32/f16/bf16, in int64 for integers. kMean gets floating dtypes.
// Reducing over zero elements gives 0 for sum and NaN for mean.
struct Reduce {
  static constexpr const char* name = "reduce";
  using Fn = void (*)(const KernelContext&, ReduceOp op, Tensor& out,
                      const Tensor& in, const Shape& dims);
};

// Batched matrix product: out[b] = a[b] @ b[b] for a [B, M, K], b [B, K, N],
// out [B, M, N], one dtype, any strides (including 0 on the batch dim).
struct Bmm {
  static constexpr const char* name = "bmm";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& a,
                      const Tensor& b);
};

// out[i] = low + (high - low) * U_i at flat row-major index i, with U_i from
// philox_uniform_float (f32), philox_uniform_float_bits with 11 bits (f16)
// or 8 bits (bf16), or philox_uniform_double (f64).
struct Uniform {
  static constexpr const char* name = "uniform";
  using Fn = void (*)(const KernelContext&, Tensor& out, PhiloxState state,
                      double low, double high);
};

// out[i] = mean + std * philox_normal(state, i) at flat row-major index i.
struct Normal {
  static constexpr const char* name = "normal";
  using Fn = void (*)(const KernelContext&, Tensor& out, PhiloxState state,
                      double mean, double std);
};

}  // namespace tessera::kernels

// The rest of the op set, one header per family.
#include "runtime/ops/signatures/foreach.h"
#include "runtime/ops/signatures/indexing.h"
#include "runtime/ops/signatures/nn.h"
#include "runtime/ops/signatures/optimizer.h"
#include "runtime/ops/signatures/pointwise.h"
#include "runtime/ops/signatures/reduction.h"
#include "runtime/ops/signatures/special.h"
