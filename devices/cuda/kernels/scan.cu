// cumsum and cumprod (the Scan kernel): an inclusive scan along one dim,
// with the CPU device's accumulation: f32 / f64 in double (a running sum is
// exposed at every step, so its error must not grow with the line), f16 /
// bf16 in float, integers and bool in int64 with wrap-around; the result
// is converted to the input's dtype.
//
// Design: the scanned dim is brought last and the input made contiguous
// (no copy for the last dim of a contiguous tensor), giving [M, N] rows.
//  - N <= 1024: a warp per row, 32 elements per step (shuffle scan) with
//    the running total carried from step to step.
//  - longer rows: a block per row, tiles of 256 threads x 4 elements (a
//    shared-memory block scan of the threads' totals), carried from tile to
//    tile. When there are too few rows to fill the GPU, each row is cut in
//    fixed chunks: pass 1 computes every chunk's total, pass 2 scans the
//    totals of each row, pass 3 rescans each chunk from its carry-in.
// Every combination order depends only on the shape: the same bits on
// every run.
#include <algorithm>
#include <type_traits>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

constexpr int64_t kWarpRowMax = 1024;  // rows up to this long get a warp
constexpr int kScanThreads = 256;      // threads of the block kernel
constexpr int kItems = 4;              // consecutive elements per thread and tile
constexpr int64_t kTile = int64_t{kScanThreads} * kItems;
// Chunked rows: about this many blocks in all, chunks of at least this
// many elements. kTargetBlocks <= kWarpRowMax, so pass 2 (rows of at most
// kTargetBlocks totals) always takes the warp kernel.
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMinChunk = 16 * kTile;

// The scan's combination: sum or product, integers wrapping.
template <typename A, bool kProd>
struct Combine {
  __device__ static A identity() { return kProd ? A(1) : A(0); }
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return kProd ? wrap_mul(a, b) : wrap_add(a, b);
    else return kProd ? a * b : a + b;
  }
};

// Inclusive scan across the 32 lanes of a warp (every lane must call):
// lane i ends with v[0] op ... op v[i].
template <typename A, typename Op>
__device__ __forceinline__ A warp_inclusive_scan(A v, const Op& op) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int delta = 1; delta < 32; delta *= 2) {
    const A earlier = __shfl_up_sync(0xffffffffu, v, delta);
    if (lane >= delta) v = op(earlier, v);
  }
  return v;
}

// Exclusive scan across the block (every thread must call; blockDim.x a
// multiple of 32, at most 1024): thread t gets v[0] op ... op v[t - 1]
// (the identity for t = 0), and every thread the block's total.
// warp_totals is __shared__ A[32].
template <typename A, typename Op>
__device__ __forceinline__ A block_exclusive_scan(A v, const Op& op, A* warp_totals,
                                                  A& aggregate) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const A incl = warp_inclusive_scan(v, op);
  if (lane == 31) warp_totals[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    // Each lane reads and writes only its own slot.
    A t = lane < warps ? warp_totals[lane] : Op::identity();
    t = warp_inclusive_scan(t, op);
    warp_totals[lane] = t;
  }
  __syncthreads();
  const A prev_lane = __shfl_up_sync(0xffffffffu, incl, 1);
  A excl;
  if (warp == 0) {
    excl = lane == 0 ? Op::identity() : prev_lane;
  } else {
    const A warp_prefix = warp_totals[warp - 1];
    excl = lane == 0 ? warp_prefix : op(warp_prefix, prev_lane);
  }
  aggregate = warp_totals[warps - 1];
  __syncthreads();  // warp_totals is rewritten by the next call
  return excl;
}

// A warp per row (the grid strides over rows; a warp's lanes share a row,
// so the shuffles see all 32 lanes). x and y may be the same buffer: each
// lane reads its element before writing it.
template <typename In, typename Out, typename A, bool kProd>
__global__ void scan_rows_warp_kernel(const In* x, Out* y, int64_t rows, int64_t n) {
  using Op = Combine<A, kProd>;
  const Op op;
  const int lane = threadIdx.x % 32;
  const int64_t warps = blockDim.x / 32;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / 32; row < rows;
       row += step) {
    const In* xr = x + row * n;
    Out* yr = y + row * n;
    A carry = Op::identity();
    for (int64_t base = 0; base < n; base += 32) {
      const int64_t i = base + lane;
      A v = i < n ? convert<A>(xr[i]) : Op::identity();
      v = op(carry, warp_inclusive_scan(v, op));
      if (i < n) yr[i] = convert<Out>(v);
      carry = __shfl_sync(0xffffffffu, v, 31);
    }
  }
}

// Block b (grid-stride) scans chunk b % chunks of row b / chunks: elements
// [chunk * chunk_len, min(n, (chunk + 1) * chunk_len)). The scan starts
// from carry_incl[b - 1] (the inclusive scan of the row's chunk totals)
// when carry_incl is given and the chunk is not the row's first, else from
// the identity. y may be null (only totals); totals, when given, gets the
// chunk's total. x and y may be the same buffer: each thread reads its
// elements of a tile before the block scan and writes only those after it.
template <typename In, typename Out, typename A, bool kProd>
__global__ void __launch_bounds__(kScanThreads)
    scan_chunks_kernel(const In* x, Out* y, int64_t rows, int64_t n, int64_t chunk_len,
                       int64_t chunks, const A* carry_incl, A* totals) {
  using Op = Combine<A, kProd>;
  const Op op;
  __shared__ A warp_totals[32];
  const int64_t blocks = rows * chunks;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t row = b / chunks, chunk = b - row * chunks;
    const int64_t begin = chunk * chunk_len;
    const int64_t end = std::min(n, begin + chunk_len);
    const In* xr = x + row * n;
    A carry = carry_incl != nullptr && chunk > 0 ? carry_incl[b - 1] : Op::identity();
    // Tiles are uniform across the block: every thread reaches the scan.
    for (int64_t tile = begin; tile < end; tile += kTile) {
      const int64_t first = tile + static_cast<int64_t>(threadIdx.x) * kItems;
      A items[kItems];
      A local = Op::identity();
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        items[k] = first + k < end ? convert<A>(xr[first + k]) : Op::identity();
        local = op(local, items[k]);
      }
      A aggregate;
      const A excl = block_exclusive_scan(local, op, warp_totals, aggregate);
      if (y != nullptr) {
        Out* yr = y + row * n;
        A run = op(carry, excl);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          run = op(run, items[k]);
          if (first + k < end) yr[first + k] = convert<Out>(run);
        }
      }
      carry = op(carry, aggregate);
    }
    if (totals != nullptr && threadIdx.x == 0) totals[b] = carry;
  }
}

// Inclusive scan of each of `rows` contiguous rows of n elements.
template <typename In, typename Out, typename A, bool kProd>
void scan_rows(const KernelContext& ctx, const char* name, const In* x, Out* y, int64_t rows,
               int64_t n) {
  cudaStream_t stream = stream_of(ctx);
  if (n <= kWarpRowMax) {
    scan_rows_warp_kernel<In, Out, A, kProd>
        <<<grid_for(rows, kBlockSize / 32), kBlockSize, 0, stream>>>(x, y, rows, n);
    after_launch(ctx, name);
    return;
  }
  const int64_t wanted = std::max<int64_t>(1, kTargetBlocks / rows);
  const int64_t chunk_len = std::max(kMinChunk, ceil_div(n, wanted));
  const int64_t chunks = ceil_div(n, chunk_len);
  if (chunks == 1) {
    scan_chunks_kernel<In, Out, A, kProd><<<grid_for(rows, 1), kScanThreads, 0, stream>>>(
        x, y, rows, n, n, 1, nullptr, nullptr);
    after_launch(ctx, name);
    return;
  }
  // chunks > 1 needs rows < kTargetBlocks and chunks <= kTargetBlocks.
  const Tensor buf = empty({rows * chunks * static_cast<int64_t>(sizeof(A))},
                           TensorOptions(DType::kU8, ctx.device));
  A* totals = reinterpret_cast<A*>(buf.data_ptr());
  scan_chunks_kernel<In, Out, A, kProd><<<grid_for(rows * chunks, 1), kScanThreads, 0, stream>>>(
      x, nullptr, rows, n, chunk_len, chunks, nullptr, totals);
  after_launch(ctx, name);
  scan_rows<A, A, A, kProd>(ctx, name, totals, totals, rows, chunks);  // in place
  scan_chunks_kernel<In, Out, A, kProd><<<grid_for(rows * chunks, 1), kScanThreads, 0, stream>>>(
      x, y, rows, n, chunk_len, chunks, totals, nullptr);
  after_launch(ctx, name);
}

Shape dim_last_perm(int64_t rank, int64_t dim) {
  Shape perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) perm.push_back(d);
  }
  perm.push_back(dim);
  return perm;
}

void scan_kernel(const KernelContext& ctx, kernels::ScanOp op, Tensor& out, const Tensor& in,
                 int64_t dim) {
  const bool is_sum = op == kernels::ScanOp::kSum;
  const char* name = is_sum ? "cumsum" : "cumprod";
  TESSERA_CHECK(out.dtype() == in.dtype() && out.sizes() == in.sizes(), TypeError, name,
                ": the cuda kernel needs an output of the input's dtype and sizes, got ",
                describe(out), " for input ", describe(in));
  if (in.numel() == 0) return;
  // A 0-d tensor is one row of one element.
  const Tensor in1 = in.dim() == 0 ? in.unsqueeze(0) : in;
  Tensor out1 = out.dim() == 0 ? out.unsqueeze(0) : out;
  const int64_t d = in.dim() == 0 ? 0 : dim;
  TESSERA_CHECK(d >= 0 && d < in1.dim(), IndexError, name, ": dim ", dim, " out of range for ",
                describe(in));
  const Shape perm = dim_last_perm(in1.dim(), d);
  const Tensor x = in1.permute(perm).contiguous();
  // The rows of out: out itself when that view is contiguous, else a
  // temporary copied back at the end.
  Tensor out_view = out1.permute(perm);
  const Tensor y = out_view.is_contiguous()
                       ? out_view
                       : empty(out_view.sizes(), TensorOptions(out.dtype(), out.device()));
  const int64_t n = in1.sizes()[static_cast<size_t>(d)];
  const int64_t rows = in1.numel() / n;
  dispatch_cuda_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<is_half_v<T>, float,
                                 std::conditional_t<is_float_v<T>, double, int64_t>>;
    if (is_sum) {
      scan_rows<T, T, A, false>(ctx, name, x.data<T>(), y.data<T>(), rows, n);
    } else {
      scan_rows<T, T, A, true>(ctx, name, x.data<T>(), y.data<T>(), rows, n);
    }
  });
  if (!y.is_same(out_view)) out_view.copy_(y);
}

}  // namespace

void register_scan_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Scan>(type, &scan_kernel);
}

}  // namespace tessera::cuda
