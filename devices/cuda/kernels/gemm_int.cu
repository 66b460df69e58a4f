// Integer and bool batched products (gemm.h): 16x16 output tiles through
// shared memory, any operand strides, sums in 64-bit unsigned arithmetic
// (wrapping as the CPU device's int64 accumulation), then truncated to the
// output type; bool computes any(a && b).
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/gemm.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/core/error.h"

namespace tessera::cuda {
namespace {

constexpr int kTile = 16;

template <typename T>
__global__ void int_bmm_gpu(T* out, int64_t obs, int64_t ors, int64_t ocs, const T* a,
                            int64_t abs_, int64_t ars, int64_t acs, const T* b, int64_t bbs,
                            int64_t brs, int64_t bcs, int64_t M, int64_t N, int64_t K) {
  __shared__ T ta[kTile][kTile];
  __shared__ T tb[kTile][kTile];
  const int64_t batch = blockIdx.z;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  uint64_t acc = 0;
  bool any = false;
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] =
        row < M && ka < K ? a[batch * abs_ + row * ars + ka * acs] : T(0);
    tb[threadIdx.y][threadIdx.x] =
        kb < K && col < N ? b[batch * bbs + kb * brs + col * bcs] : T(0);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) {
      if constexpr (std::is_same_v<T, bool>) {
        any = any || (ta[threadIdx.y][k] && tb[k][threadIdx.x]);
      } else {
        acc += static_cast<uint64_t>(static_cast<int64_t>(ta[threadIdx.y][k])) *
               static_cast<uint64_t>(static_cast<int64_t>(tb[k][threadIdx.x]));
      }
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    T v;
    if constexpr (std::is_same_v<T, bool>) v = any;
    else v = static_cast<T>(static_cast<int64_t>(acc));
    out[batch * obs + row * ors + col * ocs] = v;
  }
}

}  // namespace

void integer_batched_matmul(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t B = out.sizes()[0], M = out.sizes()[1], N = out.sizes()[2], K = a.sizes()[2];
  TESSERA_CHECK(ceil_div(M, kTile) <= 65535, ValueError,
                "bmm: the cuda integer kernel takes at most 2^20 rows, got ", describe(out));
  const dim3 block(kTile, kTile);
  // grid.z holds at most 65535 batches: larger batches run in slices.
  constexpr int64_t kMaxBatches = 65535;
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_float_v<T>) {
      for (int64_t b0 = 0; b0 < B; b0 += kMaxBatches) {
        const int64_t nb = std::min(kMaxBatches, B - b0);
        const dim3 grid(static_cast<unsigned>(ceil_div(N, kTile)),
                        static_cast<unsigned>(ceil_div(M, kTile)), static_cast<unsigned>(nb));
        int_bmm_gpu<T><<<grid, block, 0, stream_of(ctx)>>>(
            out.data<T>() + b0 * out.strides()[0], out.strides()[0], out.strides()[1],
            out.strides()[2], a.data<T>() + b0 * a.strides()[0], a.strides()[0], a.strides()[1],
            a.strides()[2], b.data<T>() + b0 * b.strides()[0], b.strides()[0], b.strides()[1],
            b.strides()[2], M, N, K);
        after_launch(ctx, "bmm");
      }
    }
  });
}

}  // namespace tessera::cuda
