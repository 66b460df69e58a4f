// The reduction engine behind sum, mean, prod, amax/amin, all/any, norms,
// logsumexp, argmax/argmin, var/std and index bounds: out (keepdim layout)
// = the combination of `in` over the reduced dims.
//
// An op is a small struct: Acc, identity(), load(offset, r) (element at an
// input offset; r is its index along the reduction, for argmax), combine()
// and store(out_offset, acc). combine must be associative and commutative
// up to rounding; results are deterministic because every combination
// order depends only on the shapes.
//
// The input's dims split into kept dims (one output each) and reduced
// dims, each set sorted by input stride and merged where contiguous. Two
// schedules:
//  - rows (a reduced dim is innermost in memory: sum over the last dim, or
//    everything): a warp per output for short rows, a block for long ones,
//    reading coalesced along the row;
//  - columns (a kept dim is innermost: sum over dim 0 of a matrix): a
//    thread per output, neighbouring threads reading neighbouring columns.
// When there are too few outputs to fill the GPU, the reduced range is cut
// into chunks (grid y); partial results go to a scratch buffer and a last
// pass (a warp per output) combines each output's chunks in a fixed order.
//
// An op may also have load4(offset): the combination of the 4 contiguous
// elements from offset, read as one 16-byte vector. Contiguous rows whose
// starts are 16-byte aligned then read 4 elements a load, four loads in
// flight per thread, as memory bandwidth needs (the order still depends
// only on the shapes and on the input's alignment, which the caching
// allocator makes the same every run).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "devices/cuda/kernels/device_info.h"
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/reduce_layout.h"
#include "devices/cuda/kernels/warp_reduce.cuh"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {

template <typename Op>
__device__ __forceinline__ void reduce_offsets(const ReduceLayout& l, int64_t o, int64_t& in_base,
                                               int64_t& out_off) {
  in_base = 0;
  out_off = 0;
  for (int d = 0; d < l.nk; ++d) {
    const int64_t q = o / l.ksize[d];
    const int64_t idx = o - q * l.ksize[d];
    o = q;
    in_base += idx * l.kin[d];
    out_off += idx * l.kout[d];
  }
}

__device__ __forceinline__ int64_t reduced_offset(const ReduceLayout& l, int64_t r) {
  if (l.nr == 1) return r * l.rin[0];
  int64_t off = 0;
  for (int d = 0; d < l.nr; ++d) {
    const int64_t q = r / l.rsize[d];
    off += (r - q * l.rsize[d]) * l.rin[d];
    r = q;
  }
  return off;
}

// Finishes output o of chunk c: stores it, or parks it for the last pass.
template <typename Op>
__device__ __forceinline__ void finish(const Op& op, const ReduceLayout& l, int64_t o, int64_t c,
                                       int64_t out_off, const typename Op::Acc& acc,
                                       typename Op::Acc* partial) {
  if (l.chunks == 1) op.store(out_off, acc);
  else partial[o * l.chunks + c] = acc;
}

template <typename Op>
concept VectorLoadOp = requires(const Op& op, int64_t off) { op.load4(off); };

template <typename Op>
__global__ void reduce_rows_kernel(Op op, ReduceLayout l, typename Op::Acc* partial) {
  using Acc = typename Op::Acc;
  __shared__ Acc scratch[32];
  const int tpo = l.threads_per_out;
  const int group = threadIdx.x / tpo, lane = threadIdx.x % tpo;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kBlockSize / tpo) + group;
  const int64_t c = blockIdx.y;
  const bool active = o < l.num_out;
  int64_t in_base = 0, out_off = 0;
  if (active) reduce_offsets<Op>(l, o, in_base, out_off);
  const int64_t start = c * l.chunk_len, end = std::min(l.R, start + l.chunk_len);
  Acc acc = op.identity();
  bool done = false;
  if constexpr (VectorLoadOp<Op>) {
    if (active && l.vec4) {
      // [start, end) from a 16-byte aligned start: vectors, then the tail.
      const int64_t base = in_base + start, n4 = end > start ? (end - start) / 4 : 0;
      Acc a1 = op.identity(), a2 = op.identity(), a3 = op.identity();
      int64_t i = lane;
      for (; i + 3 * tpo < n4; i += 4 * tpo) {
        acc = op.combine(acc, op.load4(base + 4 * i));
        a1 = op.combine(a1, op.load4(base + 4 * (i + tpo)));
        a2 = op.combine(a2, op.load4(base + 4 * (i + 2 * tpo)));
        a3 = op.combine(a3, op.load4(base + 4 * (i + 3 * tpo)));
      }
      for (; i < n4; i += tpo) acc = op.combine(acc, op.load4(base + 4 * i));
      for (int64_t r = start + 4 * n4 + lane; r < end; r += tpo) {
        acc = op.combine(acc, op.load(in_base + r, r));
      }
      acc = op.combine(op.combine(acc, a1), op.combine(a2, a3));
      done = true;
    }
  }
  if (done) {
  } else if (active && l.nr == 1) {
    // One reduced dim (the common case): four independent accumulators, so
    // each thread has four loads in flight instead of one.
    const int64_t step = l.rin[0];
    Acc a1 = op.identity(), a2 = op.identity(), a3 = op.identity();
    int64_t r = start + lane;
    for (; r + 3 * tpo < end; r += 4 * tpo) {
      acc = op.combine(acc, op.load(in_base + r * step, r));
      a1 = op.combine(a1, op.load(in_base + (r + tpo) * step, r + tpo));
      a2 = op.combine(a2, op.load(in_base + (r + 2 * tpo) * step, r + 2 * tpo));
      a3 = op.combine(a3, op.load(in_base + (r + 3 * tpo) * step, r + 3 * tpo));
    }
    for (; r < end; r += tpo) acc = op.combine(acc, op.load(in_base + r * step, r));
    acc = op.combine(op.combine(acc, a1), op.combine(a2, a3));
  } else if (active) {
    for (int64_t r = start + lane; r < end; r += tpo) {
      acc = op.combine(acc, op.load(in_base + reduced_offset(l, r), r));
    }
  }
  auto combine = [&op](const Acc& a, const Acc& b) { return op.combine(a, b); };
  if (tpo == 32) {
    acc = warp_combine(acc, combine);
  } else {
    acc = block_combine(acc, combine, scratch);
  }
  if (active && lane == 0) finish(op, l, o, c, out_off, acc, partial);
}

template <typename Op>
__global__ void reduce_columns_kernel(Op op, ReduceLayout l, typename Op::Acc* partial) {
  using Acc = typename Op::Acc;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= l.num_out) return;
  const int64_t c = blockIdx.y;
  int64_t in_base = 0, out_off = 0;
  reduce_offsets<Op>(l, o, in_base, out_off);
  const int64_t start = c * l.chunk_len, end = std::min(l.R, start + l.chunk_len);
  Acc acc = op.identity();
  for (int64_t r = start; r < end; ++r) acc = op.combine(acc, op.load(in_base + reduced_offset(l, r), r));
  finish(op, l, o, c, out_off, acc, partial);
}

// A warp per output combines its chunks: lane i takes chunks i, i + 32, ...,
// then the warp's tree (a fixed order), so even thousands of chunks of a
// single output cost one short pass.
template <typename Op>
__global__ void reduce_chunks_kernel(Op op, ReduceLayout l, const typename Op::Acc* partial) {
  using Acc = typename Op::Acc;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kBlockSize / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const bool active = o < l.num_out;  // whole warps share o: the shuffles stay uniform
  Acc acc = op.identity();
  if (active) {
    for (int64_t c = lane; c < l.chunks; c += 32) acc = op.combine(acc, partial[o * l.chunks + c]);
  }
  acc = warp_combine(acc, [&op](const Acc& a, const Acc& b) { return op.combine(a, b); });
  if (active && lane == 0) {
    int64_t in_base = 0, out_off = 0;
    reduce_offsets<Op>(l, o, in_base, out_off);
    op.store(out_off, acc);
  }
}

// Runs the reduction `op` described by `l` (from plan_reduce) on ctx's
// stream.
template <typename Op>
void run_reduce(const KernelContext& ctx, const char* name, ReduceLayout l, const Op& op) {
  using Acc = typename Op::Acc;
  if (l.num_out == 0) return;
  choose_chunks(l, multiprocessors(ctx));
  if constexpr (VectorLoadOp<Op>) {
    bool aligned = l.rows && l.nr == 1 && l.rin[0] == 1 && op.vector_aligned();
    for (int d = 0; d < l.nk; ++d) aligned = aligned && l.kin[d] % 4 == 0;
    if (aligned) {
      l.vec4 = true;
      l.chunk_len = (l.chunk_len + 3) / 4 * 4;  // chunks start aligned too
    }
  }
  Tensor scratch;
  Acc* partial = nullptr;
  if (l.chunks > 1) {
    const int64_t bytes = l.num_out * l.chunks * static_cast<int64_t>(sizeof(Acc));
    scratch = empty({bytes}, TensorOptions(DType::kU8, ctx.device));
    partial = reinterpret_cast<Acc*>(scratch.data_ptr());
  }
  cudaStream_t stream = stream_of(ctx);
  if (l.rows) {
    const int64_t per_block = kBlockSize / l.threads_per_out;
    const dim3 grid(static_cast<unsigned>(ceil_div(l.num_out, per_block)),
                    static_cast<unsigned>(l.chunks));
    reduce_rows_kernel<Op><<<grid, kBlockSize, 0, stream>>>(op, l, partial);
  } else {
    const dim3 grid(static_cast<unsigned>(ceil_div(l.num_out, kBlockSize)),
                    static_cast<unsigned>(l.chunks));
    reduce_columns_kernel<Op><<<grid, kBlockSize, 0, stream>>>(op, l, partial);
  }
  after_launch(ctx, name);
  if (l.chunks > 1) {
    const unsigned grid = static_cast<unsigned>(ceil_div(l.num_out, kBlockSize / 32));
    reduce_chunks_kernel<Op><<<grid, kBlockSize, 0, stream>>>(op, l, partial);
    after_launch(ctx, name);
  }
}

}  // namespace tessera::cuda
