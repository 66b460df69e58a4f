// Helpers shared by the reduction front ends: normalizing dim lists, the
// keepdim layout kernels write into, and dropping reduced dims afterwards.
#pragma once

#include "runtime/core/tensor.h"

namespace tessera::reduction {

// Sorted, unique, wrapped dims; empty `dims` means every dim. A 0-d tensor
// accepts dim 0 and -1 (as PyTorch) and gives an empty list.
Shape normalize_dims(const char* op, const Tensor& t, const Shape& dims);

// t's sizes with 1 in every dim of rdims.
Shape keepdim_sizes(const Tensor& t, const Shape& rdims);

// The result's sizes: keepdim_sizes, or t's sizes without rdims.
Shape result_sizes(const Tensor& t, const Shape& rdims, bool keepdim);

// A keepdim-layout result viewed with the reduced dims dropped.
Tensor drop_dims(const Tensor& kept, const Tensor& t, const Shape& rdims, bool keepdim);

// IndexError "op(): Expected reduction dim d to have non-zero size." when a
// dim of rdims is empty (reductions with no identity); ValueError for a
// full reduction (all_dims: `dims` given empty) of an empty tensor.
void check_nonempty(const char* op, const Tensor& t, const Shape& rdims, bool all_dims);

// softmax (log_softmax when log) of floating x along dim from primitives
// (amax, sub, exp, sum, div, log): what a device without a fused Softmax
// kernel runs.
Tensor softmax_composite(bool log, const Tensor& x, int64_t dim);

}  // namespace tessera::reduction
