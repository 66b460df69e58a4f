// Scatter (scatter, scatter_add, the scatter reductions) and IndexPut
// (index_put with and without accumulate) on the GPU, deterministic and
// equal to the CPU device's results: duplicates resolve as the CPU's
// row-major loop does, without atomics (index_common.cuh, sort_by_destination).
//
// Scatter: one key per index element, the element offset in self it
// writes, paired with the offset of its src element; a stable radix sort
// groups equal destinations in row-major order of index. Then one thread
// per sorted entry: without reduce, the last entry of each run writes its
// value (the CPU's last write wins); with kAdd, kMul, kMax or kMin, the
// first entry of each run folds the run's values in order into self's old
// value, rounding as the CPU does after every step.
//
// IndexPut: duplicates can only come from two index tuples naming the same
// row of self's first k dims, so the sort is over the B tuples (key: the
// row's offset in self), and a thread per (sorted tuple, element of the
// row) writes or sums as above. A destination named many times is summed
// by one thread, in order: the price of the CPU's exact summation order.
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::ScatterReduce;

// -- Scatter.

// keys[i] = self offset written by index element i (row-major), values[i]
// = offset of its src element. Operands: (index, src, base), base being
// self with index's sizes and stride 0 along dim.
template <typename I>
__global__ void scatter_keys(StridedLayout<3, I> l, const int64_t* index, int64_t n, int64_t size,
                             int64_t dim_stride, uint64_t* keys, int64_t* values) {
  for (int64_t i = grid_index(); i < n; i += grid_step()) {
    I off[3];
    offsets_of<3, I>(l, static_cast<I>(i), off);
    int64_t k = index[off[0]];
    if (k < 0) k += size;  // the front end range-checked [-size, size)
    keys[i] = static_cast<uint64_t>(static_cast<int64_t>(off[2]) + k * dim_stride);
    values[i] = static_cast<int64_t>(off[1]);
  }
}

template <typename T, ScatterReduce kReduce>
__global__ void scatter_runs(T* self, const T* src, const uint64_t* keys, const int64_t* values,
                             int64_t n) {
  for (int64_t p = grid_index(); p < n; p += grid_step()) {
    const uint64_t key = keys[p];
    if constexpr (kReduce != ScatterReduce::kNone) {
      if (!first_of_run(keys, p)) continue;
      T acc = self[key];
      const int64_t end = run_end(keys, p, n);
#pragma unroll 4
      for (int64_t q = p; q < end; ++q) acc = fold_as_cpu<kReduce>(acc, src[values[q]]);
      self[key] = acc;
    } else {
      if (last_of_run(keys, p, n)) self[key] = src[values[p]];
    }
  }
}

// index and src share index's sizes; the base view keeps self's strides
// but 0 along dim.
LayoutPlan<3> scatter_plan(const Tensor& self, const Tensor& index, const Tensor& src,
                           int64_t dim, Tensor& base) {
  Shape strides = self.strides();
  strides[static_cast<size_t>(dim)] = 0;
  base = self.as_strided(index.sizes(), strides, self.storage_offset());
  return plan_layout<3>({&index, &src, &base});
}

void scatter_kernel(const KernelContext& ctx, Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src, ScatterReduce reduce) {
  const char* name = reduce == ScatterReduce::kNone  ? "scatter"
                     : reduce == ScatterReduce::kAdd ? "scatter_add"
                                                     : "scatter_reduce";
  const int64_t n = index.numel();
  if (n == 0) return;
  TESSERA_CHECK(index.dtype() == DType::kI64 && src.dtype() == self.dtype() &&
                    src.sizes() == index.sizes() && self.dim() == index.dim() && self.dim() > 0,
                TypeError, name, ": the cuda kernel needs an int64 index, src of index's sizes "
                "and self's dtype, and self of index's rank, got self ", describe(self),
                ", index ", describe(index), ", src ", describe(src));
  Tensor idx = index, s = src, base;
  LayoutPlan<3> plan = scatter_plan(self, idx, s, dim, base);
  if (plan.too_many_dims) {
    idx = index.contiguous();
    s = src.contiguous();
    plan = scatter_plan(self, idx, s, dim, base);
  }
  // As plan_reduce: ranks that high do not occur in practice.
  TESSERA_CHECK(!plan.too_many_dims, ValueError, name, ": the cuda kernel supports at most ",
                kMaxDims, " dims after merging, got self ", describe(self), ", index ",
                describe(index));
  cudaStream_t stream = stream_of(ctx);
  const int64_t size = self.sizes()[static_cast<size_t>(dim)];
  const int64_t dim_stride = self.strides()[static_cast<size_t>(dim)];
  Tensor keys = empty({n}, TensorOptions(DType::kI64, ctx.device));
  Tensor values = empty({n}, TensorOptions(DType::kI64, ctx.device));
  if (plan.fits_32bit) {
    scatter_keys<int32_t><<<grid_for(n), kBlockSize, 0, stream>>>(
        narrow_layout<3, int32_t>(plan), idx.data<int64_t>(), n, size, dim_stride, as_keys(keys),
        values.data<int64_t>());
  } else {
    scatter_keys<int64_t><<<grid_for(n), kBlockSize, 0, stream>>>(
        narrow_layout<3, int64_t>(plan), idx.data<int64_t>(), n, size, dim_stride, as_keys(keys),
        values.data<int64_t>());
  }
  after_launch(ctx, name);
  const SortedPairs sorted =
      sort_by_destination(ctx, keys, values, static_cast<uint64_t>(max_offset(self)));
  auto fold_runs = [&](auto reduce_tag) {
    constexpr ScatterReduce kReduce = decltype(reduce_tag)::value;
    dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
      using T = decltype(tag);
      scatter_runs<T, kReduce><<<grid_for(n), kBlockSize, 0, stream>>>(
          self.data<T>(), s.data<T>(), as_keys(sorted.keys), sorted.values.data<int64_t>(), n);
    });
  };
  using std::integral_constant;
  switch (reduce) {
    case ScatterReduce::kAdd:
      fold_runs(integral_constant<ScatterReduce, ScatterReduce::kAdd>{});
      break;
    case ScatterReduce::kMul:
      fold_runs(integral_constant<ScatterReduce, ScatterReduce::kMul>{});
      break;
    case ScatterReduce::kMax:
      fold_runs(integral_constant<ScatterReduce, ScatterReduce::kMax>{});
      break;
    case ScatterReduce::kMin:
      fold_runs(integral_constant<ScatterReduce, ScatterReduce::kMin>{});
      break;
    case ScatterReduce::kNone:
      dispatch_width(self.itemsize(), [&](auto tag) {
        using W = decltype(tag);
        scatter_runs<W, ScatterReduce::kNone><<<grid_for(n), kBlockSize, 0, stream>>>(
            static_cast<W*>(self.data_ptr()), static_cast<const W*>(s.data_ptr()),
            as_keys(sorted.keys), sorted.values.data<int64_t>(), n);
      });
      break;
  }
  after_launch(ctx, name);
}

// -- IndexPut.

// keys[b] (+)= wrapped(indices[d][b]) * stride: the offset of tuple b's row
// in self, built one indexed dim per launch.
__global__ void index_put_keys(const int64_t* index_d, LinearOffsets tuple_off, int64_t nb,
                               int64_t size, int64_t stride, bool first, uint64_t* keys) {
  for (int64_t b = grid_index(); b < nb; b += grid_step()) {
    int64_t v = index_d[tuple_off(b)];
    if (v < 0) v += size;  // the front end range-checked [-size, size)
    const uint64_t part = static_cast<uint64_t>(v * stride);
    keys[b] = first ? part : keys[b] + part;
  }
}

// self_rest: self's dims k..; val_tuple / val_rest: values' first B dims and
// the rest. Thread t handles element r of sorted tuple p.
template <typename T, bool kAccumulate>
__global__ void index_put_runs(T* self, const T* values, const uint64_t* keys, const int64_t* tuples,
                               int64_t nb, int64_t R, LinearOffsets self_rest,
                               LinearOffsets val_tuple, LinearOffsets val_rest) {
  const int64_t total = nb * R;
  for (int64_t t = grid_index(); t < total; t += grid_step()) {
    const int64_t p = t / R, r = t - p * R;
    // The run's first entry sums it; without accumulate its last writes.
    if (kAccumulate ? !first_of_run(keys, p) : !last_of_run(keys, p, nb)) continue;
    const int64_t dst = static_cast<int64_t>(keys[p]) + self_rest(r);
    const int64_t vr = val_rest(r);
    if constexpr (kAccumulate) {
      T acc = self[dst];
      const int64_t end = run_end(keys, p, nb);
      for (int64_t q = p; q < end; ++q) acc = add_as_cpu(acc, values[val_tuple(tuples[q]) + vr]);
      self[dst] = acc;
    } else {
      self[dst] = values[val_tuple(tuples[p]) + vr];
    }
  }
}

void index_put_kernel(const KernelContext& ctx, Tensor& self, const Tensor& indices,
                      const Tensor& values, bool accumulate) {
  const char* name = "index_put";
  TESSERA_CHECK(indices.dtype() == DType::kI64 && indices.dim() >= 1 &&
                    values.dtype() == self.dtype(),
                TypeError, name, ": the cuda kernel needs int64 indices [k, B...] and values of "
                "self's dtype, got self ", describe(self), ", indices ", describe(indices),
                ", values ", describe(values));
  const int64_t k = indices.sizes()[0];
  if (k == 0 || indices.numel() == 0 || self.numel() == 0) return;
  const int64_t nb = indices.numel() / k;
  const size_t nbdims = static_cast<size_t>(indices.dim() - 1);
  TESSERA_CHECK(k <= self.dim() && values.dim() == static_cast<int64_t>(nbdims) + self.dim() - k,
                ValueError, name, ": indices ", describe(indices), " and values ",
                describe(values), " do not match self ", describe(self));
  // Layouts: tuples over indices' B dims, values split at B, self's rest.
  LinearOffsets tuple_off, val_tuple, val_rest, self_rest;
  Tensor idx = indices;
  if (!plan_offsets(idx.sizes(), idx.strides(), 1, idx.sizes().size(), tuple_off)) {
    idx = indices.contiguous();
    plan_offsets(idx.sizes(), idx.strides(), 1, idx.sizes().size(), tuple_off);
  }
  Tensor vals = values;
  if (!plan_offsets(vals.sizes(), vals.strides(), 0, nbdims, val_tuple) ||
      !plan_offsets(vals.sizes(), vals.strides(), nbdims, vals.sizes().size(), val_rest)) {
    vals = values.contiguous();
    plan_offsets(vals.sizes(), vals.strides(), 0, nbdims, val_tuple);
    plan_offsets(vals.sizes(), vals.strides(), nbdims, vals.sizes().size(), val_rest);
  }
  if (!plan_offsets(self.sizes(), self.strides(), static_cast<size_t>(k), self.sizes().size(),
                    self_rest)) {
    Tensor dense = self.contiguous();  // rare: a layout of too many dims
    index_put_kernel(ctx, dense, idx, vals, accumulate);
    self.copy_(dense);
    return;
  }
  int64_t R = 1;
  int64_t max_key = 0;
  for (int64_t d = k; d < self.dim(); ++d) R *= self.sizes()[d];
  for (int64_t d = 0; d < k; ++d) max_key += (self.sizes()[d] - 1) * self.strides()[d];

  cudaStream_t stream = stream_of(ctx);
  Tensor keys = empty({nb}, TensorOptions(DType::kI64, ctx.device));
  for (int64_t d = 0; d < k; ++d) {
    index_put_keys<<<grid_for(nb), kBlockSize, 0, stream>>>(
        idx.data<int64_t>() + d * idx.strides()[0], tuple_off, nb, self.sizes()[d],
        self.strides()[d], d == 0, as_keys(keys));
    after_launch(ctx, name);
  }
  const SortedPairs sorted =
      sort_by_destination(ctx, keys, iota(ctx, nb), static_cast<uint64_t>(max_key));
  const int64_t total = nb * R;
  if (accumulate) {
    dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
      using T = decltype(tag);
      index_put_runs<T, true><<<grid_for(total), kBlockSize, 0, stream>>>(
          self.data<T>(), vals.data<T>(), as_keys(sorted.keys), sorted.values.data<int64_t>(), nb,
          R, self_rest, val_tuple, val_rest);
    });
  } else {
    dispatch_width(self.itemsize(), [&](auto tag) {
      using W = decltype(tag);
      index_put_runs<W, false><<<grid_for(total), kBlockSize, 0, stream>>>(
          static_cast<W*>(self.data_ptr()), static_cast<const W*>(vals.data_ptr()),
          as_keys(sorted.keys), sorted.values.data<int64_t>(), nb, R, self_rest, val_tuple,
          val_rest);
    });
  }
  after_launch(ctx, name);
}

}  // namespace

void register_scatter_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Scatter>(type, &scatter_kernel);
  registry.register_kernel<kernels::IndexPut>(type, &index_put_kernel);
}

}  // namespace tessera::cuda
