#include "devices/cuda/kernels/reduce_layout.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "devices/cuda/kernels/launch.h"
#include "runtime/core/error.h"

namespace tessera::cuda {
namespace {

struct Dim {
  int64_t size, in_stride, out_stride;
};

// Sorts by input stride (innermost first) and merges a dim into the one
// inside it when both tensors are contiguous across the pair.
int merge_dims(std::vector<Dim> dims, int64_t* size, int64_t* in, int64_t* out, const char* op) {
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) {
    return std::abs(a.in_stride) < std::abs(b.in_stride);
  });
  int n = 0;
  for (const Dim& d : dims) {
    if (n > 0 && d.in_stride == in[n - 1] * size[n - 1] && d.out_stride == out[n - 1] * size[n - 1]) {
      size[n - 1] *= d.size;
      continue;
    }
    TESSERA_CHECK(n < kMaxDims, ValueError, op, ": the cuda kernel supports at most ", kMaxDims,
                  " unmergeable dims");
    size[n] = d.size;
    in[n] = d.in_stride;
    out[n] = d.out_stride;
    ++n;
  }
  return n;
}

}  // namespace

ReduceLayout plan_reduce(const char* op, const Tensor& out, const Tensor& in, const Shape& dims) {
  const int64_t ndim = in.dim();
  TESSERA_CHECK(out.dim() == ndim, ValueError, op,
                ": the cuda kernel needs out in keepdim layout, got out ", describe(out),
                " for input ", describe(in));
  std::vector<bool> reduced(static_cast<size_t>(ndim), false);
  for (int64_t d : dims) {
    TESSERA_CHECK(d >= 0 && d < ndim, IndexError, op, ": dim ", d, " out of range for ", describe(in));
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<Dim> kept, red;
  ReduceLayout l;
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t size = in.sizes()[d];
    TESSERA_CHECK(out.sizes()[d] == (reduced[d] ? 1 : size), ValueError, op, ": out ",
                  describe(out), " is not the keepdim layout of ", describe(in));
    if (reduced[d]) {
      l.R *= size;
      if (size != 1) red.push_back({size, in.strides()[d], 0});
    } else {
      l.num_out *= size;
      if (size != 1) kept.push_back({size, in.strides()[d], out.strides()[d]});
    }
  }
  int64_t unused[kMaxDims];
  l.nk = merge_dims(kept, l.ksize, l.kin, l.kout, op);
  l.nr = merge_dims(red, l.rsize, l.rin, unused, op);
  // Rows unless a kept dim lies inside every reduced dim in memory.
  l.rows = l.nk == 0 || (l.nr > 0 && std::abs(l.rin[0]) < std::abs(l.kin[0]));
  l.threads_per_out = l.R >= 2048 ? kBlockSize : 32;
  l.chunk_len = std::max<int64_t>(l.R, 1);
  return l;
}

void choose_chunks(ReduceLayout& l, int multiprocessors) {
  // Aim for about 8 blocks of work per multiprocessor: 2048 threads, a
  // full multiprocessor, so enough loads are in flight to cover memory
  // latency.
  const int64_t target_blocks = int64_t{8} * std::max(multiprocessors, 1);
  const int64_t blocks = l.rows ? ceil_div(l.num_out, kBlockSize / l.threads_per_out)
                                : ceil_div(l.num_out, kBlockSize);
  // Each chunk keeps at least this many elements per thread of its block.
  const int64_t min_len = l.rows ? l.threads_per_out * 16 : 64;
  int64_t chunks = 1;
  if (blocks < target_blocks && l.R >= 2 * min_len) {
    chunks = std::min(ceil_div(target_blocks, blocks), l.R / min_len);
    chunks = std::clamp<int64_t>(chunks, 1, 65535);
  }
  l.chunk_len = ceil_div(std::max<int64_t>(l.R, 1), chunks);
  l.chunks = ceil_div(std::max<int64_t>(l.R, 1), l.chunk_len);
}

}  // namespace tessera::cuda
