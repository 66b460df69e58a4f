// The Scatter kernel's operands, checked, and its call with PyTorch's
// rounding (internal to runtime/ops): shared by scatter, scatter_add,
// scatter_reduce and index_reduce.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::indexing {

// self (0-d as 1-D, a view of the caller's self), dim wrapped, the int64
// index, and src cut to index's sizes. `empty` when index has no elements
// (nothing to scatter; the index's range is then not checked, as in
// PyTorch).
struct ScatterOperands {
  Tensor self;
  int64_t dim = 0;
  Tensor index;
  Tensor src;
  bool empty = false;
};

// Every check of a scatter of src into self along dim at index (dtypes,
// devices, ranks, sizes, the index range, no internal overlap in self),
// before anything is written.
ScatterOperands scatter_operands(const char* op, const Tensor& self, int64_t dim,
                                 const Tensor& index, const Tensor& src);

// A scattered value as src: value in self's dtype on self's device,
// expanded (stride 0) to index's sizes, after checking both are defined and
// index is int64.
Tensor value_as_src(const char* op, const Tensor& self, const Tensor& index, Scalar value);

// How float16 and bfloat16 sums and products round. PyTorch's CPU
// scatter_add, index_add and scatter_reduce accumulate them in float and
// round once at the end; its index_reduce and index_put accumulate round
// after every step, as the Scatter kernel does.
enum class HalfRounding { kOnce, kEveryStep };

// The Scatter kernel with reduce over o (unless o is empty). With kOnce, a
// float16/bfloat16 sum or product runs on a float copy of o.self, written
// back once.
void run_scatter(const ScatterOperands& o, kernels::ScatterReduce reduce, HalfRounding rounding);

}  // namespace tessera::indexing
