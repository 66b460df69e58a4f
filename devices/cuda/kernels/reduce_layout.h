// The plan of a reduction on the GPU (see reduce_engine.cuh): which input
// dims are kept and which are reduced, merged and ordered, the schedule,
// and the chunks that split long reductions.
#pragma once

#include <cstdint>

#include "devices/cuda/kernels/strided_layout.h"
#include "runtime/core/tensor.h"

namespace tessera::cuda {

struct ReduceLayout {
  int64_t num_out = 1;  // outputs: the product of the kept sizes
  int64_t R = 1;        // elements per output: the product of the reduced sizes
  int nk = 0, nr = 0;
  // Innermost (smallest input stride) first.
  int64_t ksize[kMaxDims] = {}, kin[kMaxDims] = {}, kout[kMaxDims] = {};
  int64_t rsize[kMaxDims] = {}, rin[kMaxDims] = {};
  bool rows = true;  // the rows schedule (see reduce_engine.cuh)
  int threads_per_out = 32;  // rows schedule: a warp, or a block for long rows
  int64_t chunks = 1;
  int64_t chunk_len = 1;
  // Rows read as 16-byte vectors (the op has load4, rows and chunks start
  // 16-byte aligned): set by run_reduce.
  bool vec4 = false;
};

// `dims` sorted and unique; out in keepdim layout. Dims beyond kMaxDims
// after merging raise ValueError (ranks that high do not occur in practice).
ReduceLayout plan_reduce(const char* op, const Tensor& out, const Tensor& in, const Shape& dims);

// Chooses chunks so that a reduction with few outputs still fills the GPU.
void choose_chunks(ReduceLayout& l, int multiprocessors);

}  // namespace tessera::cuda
