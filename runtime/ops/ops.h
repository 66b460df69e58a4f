// The op front ends: device-generic functions that validate their inputs
// (shapes, dtypes, devices), broadcast, promote types, allocate outputs and
// call the kernel registered for the device (or the CPU fallback).
#pragma once

#include <optional>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_options.h"
#include "runtime/random/generator.h"

// The rest of the op set, one header per family.
#include "runtime/ops/amp_ops.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/indexing_ops.h"
#include "runtime/ops/nn_ops.h"
#include "runtime/ops/optimizer_ops.h"
#include "runtime/ops/pointwise_ops.h"
#include "runtime/ops/reduction_ops.h"
#include "runtime/ops/special_ops.h"

namespace tessera {

// -- Creation.
Tensor empty(const Shape& sizes, TensorOptions options = {});
Tensor empty_strided(const Shape& sizes, const Shape& strides, TensorOptions options = {});
Tensor empty_like(const Tensor& t);
Tensor zeros(const Shape& sizes, TensorOptions options = {});
Tensor ones(const Shape& sizes, TensorOptions options = {});
// Without a dtype: bool, int64 or float32 after the kind of value.
Tensor full(const Shape& sizes, Scalar value, TensorOptions options = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, Scalar value);
// [start, end) by step. Without a dtype: int64 if all three are integers,
// float32 otherwise.
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, TensorOptions options = {});

// -- Random (Philox; same seed, same values on every device).
Tensor rand(const Shape& sizes, TensorOptions options = {}, Generator* gen = nullptr);
Tensor randn(const Shape& sizes, TensorOptions options = {}, Generator* gen = nullptr);
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);

// -- Copy: dst = src broadcast to dst's shape, cast to dst's dtype, across
// devices. Same as dst.copy_(src). non_blocking, as in PyTorch: a copy
// between a device and pinned host memory (empty_pinned, pin_memory) is
// left in flight on the device's current stream (the pinned block is kept
// until the stream passes it); synchronize that stream before reading a
// device-to-host result. Every other copy is complete when it returns.
Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking = false);

// A host tensor in page-locked memory (see PinnedHostAllocator), contiguous,
// uninitialized.
Tensor empty_pinned(const Shape& sizes, DType dtype = DType::kF32);

// -- Elementwise arithmetic with broadcasting and type promotion.
// add/sub compute a + alpha * b and a - alpha * b.
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);

// The dtype of an elementwise result (torch.result_type): dimensioned
// tensors take part by dtype, 0-d tensors and Scalars only when of a higher
// category.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);

// The broadcast of two shapes; ValueError naming op when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// -- Reductions. Empty dims means all dims. sum of bool/integers gives
// int64; mean needs a floating dtype (or a floating `dtype`).
Tensor sum(const Tensor& t, const Shape& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& t, const Shape& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

// -- Linear algebra.
Tensor mm(const Tensor& a, const Tensor& b);   // [M, K] @ [K, N]
Tensor bmm(const Tensor& a, const Tensor& b);  // [B, M, K] @ [B, K, N]
// torch.matmul: 1-D and N-D operands, batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }

}  // namespace tessera
