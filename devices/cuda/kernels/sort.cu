// Sort (sort, argsort and topk's first k) on the GPU, with the CPU
// device's order: ascending or descending, NaN above every number, -0.0
// equal to +0.0, and ties kept in index order (always stable).
//
// self is permuted so that dim is last and made contiguous: lines of len
// elements. Each element becomes an unsigned key whose integer order is
// the CPU's order (floats: the sign bit flipped for positives, all bits
// for negatives, one NaN key above +inf, -0.0 as +0.0; signed integers:
// the sign bit flipped), complemented for descending, so a stable
// ascending sort of (key, position) pairs gives exactly the CPU's order.
// The sort is CUB's: a segmented stable sort when there are many short
// lines, else (one line, or long lines, where a block per line would
// leave the GPU idle) a stable device-wide radix sort by key followed by
// a stable one by line. The first k positions of each line then pick the
// values (moved as raw bits) and their indices, written with the outputs'
// strides.
#include <cub/device/device_segmented_sort.cuh>

#include <cstring>

#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

// Lines up to this long go through the segmented sort.
constexpr int64_t kSegmentedMaxLen = 4096;

template <size_t N> struct unsigned_of;
template <> struct unsigned_of<1> { using type = uint8_t; };
template <> struct unsigned_of<2> { using type = uint16_t; };
template <> struct unsigned_of<4> { using type = uint32_t; };
template <> struct unsigned_of<8> { using type = uint64_t; };
template <typename T>
using key_of_t = typename unsigned_of<sizeof(T)>::type;

// The bits of +inf (exponent all ones, mantissa 0) of each float type.
template <typename T>
constexpr uint64_t inf_bits() {
  if constexpr (std::is_same_v<T, __half>) return 0x7C00u;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return 0x7F80u;
  else if constexpr (std::is_same_v<T, float>) return 0x7F800000u;
  else return 0x7FF0000000000000ull;
}

template <typename T>
__device__ __forceinline__ key_of_t<T> order_key(T v) {
  using K = key_of_t<T>;
  constexpr K sign = static_cast<K>(K(1) << (8 * sizeof(K) - 1));
  if constexpr (std::is_same_v<T, bool>) {
    return v ? K(1) : K(0);
  } else if constexpr (std::is_unsigned_v<T>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<K>(static_cast<K>(v) ^ sign);
  } else {
    K bits;
    memcpy(&bits, &v, sizeof(K));
    const K mag = static_cast<K>(bits & static_cast<K>(~sign));
    if (mag > static_cast<K>(inf_bits<T>())) return static_cast<K>(~K(0));  // every NaN
    if (mag == 0) return sign;  // -0.0 sorts as +0.0
    return (bits & sign) ? static_cast<K>(~bits) : static_cast<K>(bits | sign);
  }
}

template <typename T>
__global__ void sort_keys(const T* x, int64_t total, bool descending, key_of_t<T>* keys) {
  using K = key_of_t<T>;
  for (int64_t i = grid_index(); i < total; i += grid_step()) {
    const K key = order_key(x[i]);
    keys[i] = descending ? static_cast<K>(~key) : key;
  }
}

__global__ void line_offsets(int64_t* offsets, int64_t count, int64_t len) {
  for (int64_t i = grid_index(); i < count; i += grid_step()) offsets[i] = i * len;
}

__global__ void line_keys(const int64_t* positions, int64_t total, int64_t len, uint64_t* keys) {
  for (int64_t i = grid_index(); i < total; i += grid_step()) {
    keys[i] = static_cast<uint64_t>(positions[i] / len);
  }
}

// Output o = (line, j < k) takes the j-th sorted position of its line.
template <typename W>
__global__ void sort_write(const W* x, const int64_t* sorted, int64_t len, int64_t k,
                           int64_t count, W* values, LinearOffsets voff, int64_t* indices,
                           LinearOffsets ioff) {
  for (int64_t o = grid_index(); o < count; o += grid_step()) {
    const int64_t line = o / k, j = o - line * k;
    const int64_t p = sorted[line * len + j];
    values[voff(o)] = x[p];
    indices[ioff(o)] = p - line * len;
  }
}

// Sorted flat positions (int64 [total]) of the lines of x by key.
template <typename T>
Tensor sorted_positions(const KernelContext& ctx, const Tensor& x, int64_t lines, int64_t len,
                        bool descending) {
  using K = key_of_t<T>;
  cudaStream_t stream = stream_of(ctx);
  const int64_t total = lines * len;
  const TensorOptions bytes_opts(DType::kU8, ctx.device);
  Tensor keys = empty({total * static_cast<int64_t>(sizeof(K))}, bytes_opts);
  Tensor sorted_keys = empty({total * static_cast<int64_t>(sizeof(K))}, bytes_opts);
  K* k_in = static_cast<K*>(keys.data_ptr());
  K* k_out = static_cast<K*>(sorted_keys.data_ptr());
  sort_keys<T><<<grid_for(total), kBlockSize, 0, stream>>>(x.data<T>(), total, descending, k_in);
  after_launch(ctx, "sort");
  const Tensor positions = iota(ctx, total);
  Tensor sorted = empty({total}, TensorOptions(DType::kI64, ctx.device));
  if (lines > 1 && len <= kSegmentedMaxLen) {
    Tensor offsets = empty({lines + 1}, TensorOptions(DType::kI64, ctx.device));
    const int64_t* off = offsets.data<int64_t>();
    line_offsets<<<grid_for(lines + 1), kBlockSize, 0, stream>>>(offsets.data<int64_t>(),
                                                                 lines + 1, len);
    after_launch(ctx, "sort");
    size_t bytes = 0;
    TESSERA_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
                           nullptr, bytes, k_in, k_out, positions.data<int64_t>(),
                           sorted.data<int64_t>(), total, lines, off, off + 1, stream),
                       ctx.device.index);
    Tensor temp = empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, bytes_opts);
    TESSERA_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
                           temp.data_ptr(), bytes, k_in, k_out, positions.data<int64_t>(),
                           sorted.data<int64_t>(), total, lines, off, off + 1, stream),
                       ctx.device.index);
    return sorted;
  }
  // Device-wide: by key (stable, so ties stay in position order), then by
  // line (stable, so each line keeps that order).
  radix_sort_pairs(ctx, k_in, k_out, positions.data<int64_t>(), sorted.data<int64_t>(), total,
                   static_cast<int>(8 * sizeof(K)));
  if (lines == 1) return sorted;
  Tensor lkeys = empty({total}, TensorOptions(DType::kI64, ctx.device));
  Tensor lkeys_out = empty({total}, TensorOptions(DType::kI64, ctx.device));
  line_keys<<<grid_for(total), kBlockSize, 0, stream>>>(sorted.data<int64_t>(), total, len,
                                                        as_keys(lkeys));
  after_launch(ctx, "sort");
  Tensor by_line = empty({total}, TensorOptions(DType::kI64, ctx.device));
  radix_sort_pairs(ctx, as_keys(lkeys), as_keys(lkeys_out), sorted.data<int64_t>(),
                   by_line.data<int64_t>(), total, key_bits(static_cast<uint64_t>(lines - 1)));
  return by_line;
}

void sort_kernel(const KernelContext& ctx, Tensor& values, Tensor& indices, const Tensor& self,
                 int64_t dim, bool descending, bool /*stable: always*/) {
  if (self.numel() == 0) return;
  TESSERA_CHECK(values.dtype() == self.dtype() && indices.dtype() == DType::kI64 &&
                    values.sizes() == indices.sizes() && values.dim() == self.dim(),
                TypeError, "sort: the cuda kernel needs values of self's dtype and int64 "
                "indices of values' sizes, got self ", describe(self), ", values ",
                describe(values), ", indices ", describe(indices));
  // A 0-d self is one line of one element.
  const bool scalar = self.dim() == 0;
  const Tensor x0 = scalar ? self.reshape({1}) : self;
  const Tensor v0 = scalar ? values.view({1}) : values;
  const Tensor i0 = scalar ? indices.view({1}) : indices;
  const int64_t d = scalar ? 0 : dim;
  // dim last, the other dims in order: lines in row-major order.
  Shape perm;
  for (int64_t e = 0; e < x0.dim(); ++e) {
    if (e != d) perm.push_back(e);
  }
  perm.push_back(d);
  const Tensor x = x0.permute(perm).contiguous();
  const int64_t len = x0.sizes()[static_cast<size_t>(d)];
  const int64_t k = v0.sizes()[static_cast<size_t>(d)];
  if (k == 0) return;
  TESSERA_CHECK(k <= len, ValueError, "sort: ", k, " entries asked of lines of ", len, " (",
                describe(self), ")");
  const int64_t lines = x.numel() / len;
  Tensor sorted;
  dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    sorted = sorted_positions<T>(ctx, x, lines, len, descending);
  });
  StagedOutput vout(v0.permute(perm)), iout(i0.permute(perm));
  const int64_t count = lines * k;
  dispatch_width(self.itemsize(), [&](auto tag) {
    using W = decltype(tag);
    sort_write<W><<<grid_for(count), kBlockSize, 0, stream_of(ctx)>>>(
        static_cast<const W*>(x.data_ptr()), sorted.data<int64_t>(), len, k, count,
        static_cast<W*>(vout.work().data_ptr()), vout.offsets(),
        static_cast<int64_t*>(iout.work().data_ptr()), iout.offsets());
  });
  after_launch(ctx, "sort");
  vout.finish();
  iout.finish();
}

}  // namespace

void register_sort_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Sort>(type, &sort_kernel);
}

}  // namespace tessera::cuda
