// Uniform, Normal, Randint and Bernoulli from Philox (philox.cuh), with
// the CPU device's arithmetic (done in double, then converted), so that
// uniform, randint and bernoulli give the CPU's values bit for bit and
// normal agrees within the last bits of CUDA's double log and cos.
//
// Value i belongs to the flat row-major index i. Kernels write a
// contiguous buffer (the output itself when it is contiguous, else a
// temporary copied into it), one thread per Philox block where several
// elements share a block.
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/philox.cuh"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// The elements of one Philox block: 4 for the float types (one 32-bit lane
// each), 2 for double (a 64-bit pair of lanes each).
template <typename T>
__global__ void uniform_kernel_gpu(T* out, int64_t n, PhiloxState s, double low, double range) {
  constexpr int kPer = std::is_same_v<T, double> ? 2 : 4;
  // As many random bits as T's significand holds, so U never rounds to 1.
  constexpr int kBits = std::is_same_v<T, __half> ? 11 : std::is_same_v<T, __nv_bfloat16> ? 8 : 24;
  const int64_t blocks = (n + kPer - 1) / kPer;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Block4 r = philox(s.seed, s.offset + static_cast<uint64_t>(b), 0);
#pragma unroll
    for (int lane = 0; lane < kPer; ++lane) {
      const int64_t i = b * kPer + lane;
      if (i >= n) break;
      if constexpr (std::is_same_v<T, double>) {
        const uint64_t bits = ((static_cast<uint64_t>(r.v[lane * 2]) << 32) | r.v[lane * 2 + 1]) >> 11;
        out[i] = low + range * (static_cast<double>(bits) * 0x1.0p-53);
      } else {
        const float u = static_cast<float>(r.v[lane] >> (32 - kBits)) * (1.0f / (1u << kBits));
        out[i] = convert<T>(low + range * static_cast<double>(u));
      }
    }
  }
}

template <typename T>
__global__ void normal_kernel_gpu(T* out, int64_t n, PhiloxState s, double mean, double std) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = convert<T>(mean + std * philox_normal_d(s, static_cast<uint64_t>(i)));
  }
}

template <typename T>
__global__ void randint_kernel_gpu(T* out, int64_t n, PhiloxState s, int64_t low, uint64_t range) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = philox_bits64(s, static_cast<uint64_t>(i));
    out[i] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + r % range));
  }
}

template <typename T, typename P>
__global__ void bernoulli_kernel_gpu(T* out, const P* p, int64_t n, PhiloxState s) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double u = static_cast<double>(philox_bits64(s, static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    const double prob = static_cast<double>(convert<compute_t<P>>(p[i]));
    out[i] = convert<T>(u < prob ? 1 : 0);
  }
}

// The contiguous buffer a kernel writes: `out` itself, or a temporary.
Tensor dense_target(const Tensor& out) { return out.is_contiguous() ? out : empty(out.sizes(), TensorOptions(out.dtype(), out.device())); }

void finish(Tensor& out, const Tensor& dense) {
  if (!dense.is_same(out)) out.copy_(dense);
}

void uniform_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, double low, double high) {
  TESSERA_CHECK(is_floating(out.dtype()), TypeError,
                "uniform: the cuda kernel needs a floating dtype, got ", describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  Tensor dense = dense_target(out);
  dispatch_float_dtype(out.dtype(), "uniform", [&](auto tag) {
    using T = decltype(tag);
    constexpr int64_t kPer = std::is_same_v<T, double> ? 2 : 4;
    uniform_kernel_gpu<T><<<grid_for(ceil_div(n, kPer)), kBlockSize, 0, stream_of(ctx)>>>(
        dense.data<T>(), n, state, low, high - low);
  });
  after_launch(ctx, "uniform");
  finish(out, dense);
}

void normal_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, double mean, double std) {
  TESSERA_CHECK(is_floating(out.dtype()), TypeError,
                "normal: the cuda kernel needs a floating dtype, got ", describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  Tensor dense = dense_target(out);
  dispatch_float_dtype(out.dtype(), "normal", [&](auto tag) {
    using T = decltype(tag);
    normal_kernel_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(dense.data<T>(), n, state,
                                                                         mean, std);
  });
  after_launch(ctx, "normal");
  finish(out, dense);
}

void randint_kernel(const KernelContext& ctx, Tensor& out, PhiloxState state, int64_t low,
                    uint64_t range) {
  TESSERA_CHECK(range >= 1, ValueError, "randint: empty range for ", describe(out));
  const int64_t n = out.numel();
  if (n == 0) return;
  Tensor dense = dense_target(out);
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    randint_kernel_gpu<T><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(dense.data<T>(), n, state,
                                                                          low, range);
  });
  after_launch(ctx, "randint");
  finish(out, dense);
}

void bernoulli_kernel(const KernelContext& ctx, Tensor& out, const Tensor& p, PhiloxState state) {
  TESSERA_CHECK(is_floating(p.dtype()), TypeError,
                "bernoulli: the cuda kernel needs floating probabilities, got ", describe(p));
  const int64_t n = out.numel();
  if (n == 0) return;
  Tensor dense = dense_target(out);
  const Tensor probs = p.contiguous();  // materializes an expanded p
  dispatch_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    dispatch_float_dtype(p.dtype(), "bernoulli", [&](auto ptag) {
      using P = decltype(ptag);
      bernoulli_kernel_gpu<T, P><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          dense.data<T>(), probs.data<P>(), n, state);
    });
  });
  after_launch(ctx, "bernoulli");
  finish(out, dense);
}

}  // namespace

void register_random_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Uniform>(type, &uniform_kernel);
  registry.register_kernel<kernels::Normal>(type, &normal_kernel);
  registry.register_kernel<kernels::Randint>(type, &randint_kernel);
  registry.register_kernel<kernels::Bernoulli>(type, &bernoulli_kernel);
}

}  // namespace tessera::cuda
