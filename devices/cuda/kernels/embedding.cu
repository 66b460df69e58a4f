// Embedding and EmbeddingDenseBackward on the GPU.
//
// The CPU kernels range-check the indices themselves (the front end does
// not), raising IndexError naming the first bad index in row-major order;
// here the kernels note the smallest bad position in a device flag
// (index_common.cuh, BadIndexFlag) and the host reads it back once all
// the work is enqueued. So both ops wait for the GPU, as the CPU's check
// requires; a bad index is never dereferenced.
//
// Embedding: one thread per output element (row i, column j), the column
// fastest, so reads of a weight row and writes of an out row coalesce.
//
// EmbeddingDenseBackward: deterministic, no atomics. grad_weight is zeroed;
// (index, position) pairs are radix-sorted stably by index, so each run of
// one index lists its gradient rows in row-major order; then one thread per
// (sorted entry, column) at the start of each run sums that column of the
// run's gradient rows in double, in order (the CPU's accumulation), and
// stores it. Rows of padding_idx stay zero.
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

struct Matrix {
  int64_t s0, s1;  // row and column strides, in elements
};

template <typename W, typename Idx>
__global__ void embedding_rows(W* out, Matrix o, const W* weight, Matrix w, const Idx* indices,
                               LinearOffsets ioff, int64_t n, int64_t D, int64_t V,
                               unsigned long long* bad) {
  // With D == 0 there is nothing to copy, but the indices are still checked.
  const int64_t cols = D > 0 ? D : 1;
  const int64_t total = n * cols;
  for (int64_t t = grid_index(); t < total; t += grid_step()) {
    const int64_t i = t / cols, j = t - i * cols;
    const int64_t v = static_cast<int64_t>(indices[ioff(i)]);
    if (v < 0 || v >= V) {
      if (j == 0) note_bad_index(bad, i);
      continue;
    }
    if (j < D) out[i * o.s0 + j * o.s1] = weight[v * w.s0 + j * w.s1];
  }
}

// keys[i] = indices[i] (row-major), or V (after every valid row) when out
// of range.
template <typename Idx>
__global__ void embedding_keys(const Idx* indices, LinearOffsets ioff, int64_t n, int64_t V,
                               uint64_t* keys, unsigned long long* bad) {
  for (int64_t i = grid_index(); i < n; i += grid_step()) {
    int64_t v = static_cast<int64_t>(indices[ioff(i)]);
    if (v < 0 || v >= V) {
      note_bad_index(bad, i);
      v = V;
    }
    keys[i] = static_cast<uint64_t>(v);
  }
}

template <typename T>
__global__ void embedding_backward_runs(T* grad_weight, Matrix gw, const T* grad, Matrix g,
                                        const uint64_t* keys, const int64_t* rows, int64_t n,
                                        int64_t D, int64_t V, int64_t padding_idx) {
  const int64_t total = n * D;
  for (int64_t t = grid_index(); t < total; t += grid_step()) {
    const int64_t p = t / D, j = t - p * D;
    if (!first_of_run(keys, p)) continue;
    const uint64_t key = keys[p];
    const int64_t row = static_cast<int64_t>(key);
    if (row >= V || row == padding_idx) continue;
    double acc = 0.0;
    const int64_t end = run_end(keys, p, n);
#pragma unroll 4
    for (int64_t q = p; q < end; ++q) acc += convert<double>(grad[rows[q] * g.s0 + j * g.s1]);
    grad_weight[row * gw.s0 + j * gw.s1] = convert<T>(acc);
  }
}

template <typename F>
void dispatch_index(const char* op, const Tensor& indices, F&& f) {
  if (indices.dtype() == DType::kI64) return f(int64_t{});
  TESSERA_CHECK(indices.dtype() == DType::kI32, TypeError, op,
                ": expected indices of dtype int64 or int32, got ", describe(indices));
  f(int32_t{});
}

// Raises the CPU kernel's IndexError if the flag caught a bad index.
void raise_bad_index(const BadIndexFlag& flag, const Tensor& indices, int64_t limit,
                     const char* op) {
  const int64_t pos = flag.first();  // waits for the GPU
  if (pos < 0) return;
  const int64_t value = indices.reshape({indices.numel()}).select(0, pos).item<int64_t>();
  TESSERA_CHECK(false, IndexError, op, ": index ", value, " out of range in self (size ", limit,
                ")");
}

void embedding_kernel(const KernelContext& ctx, Tensor& out, const Tensor& weight,
                      const Tensor& indices) {
  const char* op = "embedding";
  const int64_t n = indices.numel();
  if (n == 0) return;
  TESSERA_CHECK(weight.dim() == 2 && out.dim() == 2 && out.dtype() == weight.dtype() &&
                    out.size(0) == n && out.size(1) == weight.size(1),
                TypeError, op, ": the cuda kernel needs a 2-D weight and out [n, D] of its "
                "dtype, got weight ", describe(weight), ", out ", describe(out), ", indices ",
                describe(indices));
  const int64_t V = weight.size(0), D = weight.size(1);
  LinearOffsets ioff;
  const Tensor idx = fitted_input(indices, ioff);
  BadIndexFlag bad(ctx);
  const int64_t total = n * std::max<int64_t>(D, 1);
  dispatch_index(op, idx, [&](auto itag) {
    using Idx = decltype(itag);
    dispatch_width(weight.itemsize(), [&](auto wtag) {
      using W = decltype(wtag);
      embedding_rows<W, Idx><<<grid_for(total), kBlockSize, 0, stream_of(ctx)>>>(
          static_cast<W*>(out.data_ptr()), Matrix{out.strides()[0], out.strides()[1]},
          static_cast<const W*>(weight.data_ptr()), Matrix{weight.strides()[0], weight.strides()[1]},
          idx.data<Idx>(), ioff, n, D, V, bad.device_ptr());
    });
  });
  after_launch(ctx, op);
  raise_bad_index(bad, indices, V, op);
}

void embedding_dense_backward_kernel(const KernelContext& ctx, Tensor& grad_weight,
                                     const Tensor& grad, const Tensor& indices,
                                     int64_t padding_idx) {
  const char* op = "embedding_dense_backward";
  const int64_t n = indices.numel();
  TESSERA_CHECK(grad_weight.dim() == 2 && grad.dim() == 2 && grad.dtype() == grad_weight.dtype() &&
                    grad.size(0) == n && grad.size(1) == grad_weight.size(1),
                TypeError, op, ": the cuda kernel needs grad [n, D] and grad_weight [V, D] of "
                "one dtype, got grad ", describe(grad), ", grad_weight ", describe(grad_weight),
                ", indices ", describe(indices));
  const int64_t V = grad_weight.size(0), D = grad_weight.size(1);
  cudaStream_t stream = stream_of(ctx);
  // Rows no index names (and padding_idx's) are zero.
  if (grad_weight.is_contiguous()) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(grad_weight.data_ptr(), 0, grad_weight.nbytes(), stream),
                       ctx.device.index);
  } else {
    grad_weight.zero_();
  }
  if (n == 0) return;
  LinearOffsets ioff;
  const Tensor idx = fitted_input(indices, ioff);
  BadIndexFlag bad(ctx);
  Tensor keys = empty({n}, TensorOptions(DType::kI64, ctx.device));
  dispatch_index(op, idx, [&](auto itag) {
    using Idx = decltype(itag);
    embedding_keys<Idx><<<grid_for(n), kBlockSize, 0, stream>>>(idx.data<Idx>(), ioff, n, V,
                                                                as_keys(keys), bad.device_ptr());
  });
  after_launch(ctx, op);
  const SortedPairs sorted = sort_by_destination(ctx, keys, iota(ctx, n), static_cast<uint64_t>(V));
  const int64_t total = n * D;
  if (total > 0) {
    dispatch_cuda_dtype(grad.dtype(), [&](auto tag) {
      using T = decltype(tag);
      embedding_backward_runs<T><<<grid_for(total), kBlockSize, 0, stream>>>(
          grad_weight.data<T>(), Matrix{grad_weight.strides()[0], grad_weight.strides()[1]},
          grad.data<T>(), Matrix{grad.strides()[0], grad.strides()[1]}, as_keys(sorted.keys),
          sorted.values.data<int64_t>(), n, D, V, padding_idx);
    });
    after_launch(ctx, op);
  }
  raise_bad_index(bad, indices, V, op);
}

}  // namespace

void register_embedding_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Embedding>(type, &embedding_kernel);
  registry.register_kernel<kernels::EmbeddingDenseBackward>(type, &embedding_dense_backward_kernel);
}

}  // namespace tessera::cuda
