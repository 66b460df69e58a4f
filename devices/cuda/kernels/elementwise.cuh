// The elementwise engine: out[i] = f(in0[i], in1[i], ...) over tensors of
// one shape with any strides (inputs expanded to the output's sizes).
//
// Two kernels per functor: a flat one for unit-stride operands and
// broadcast scalars (16-byte vector loads and stores when every pointer is
// aligned), and a strided one that turns a linear index into each
// operand's offset over the merged dims in 32-bit math (larger operations
// are split into parts that fit).
// Functors take and return compute types (float for the 16-bit floats);
// the engine converts on load and store.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/strided_layout.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Elements per thread and vector width of the flat kernel: 16 bytes of the
// widest operand.
template <typename Out, typename... In>
constexpr int vec_width() {
  constexpr size_t widest = std::max({sizeof(Out), sizeof(In)...});
  return static_cast<int>(16 / widest) < 1 ? 1 : static_cast<int>(16 / widest);
}

template <int NIN>
struct FlatArgs {
  char* out;
  const char* in[NIN > 0 ? NIN : 1];
  bool scalar[NIN > 0 ? NIN : 1];  // stride 0: one value for every element
};

template <typename Out, typename... In, typename F, size_t... K>
__device__ __forceinline__ void flat_one(const FlatArgs<sizeof...(In)>& a, int64_t i, const F& f,
                                         std::index_sequence<K...>) {
  reinterpret_cast<Out*>(a.out)[i] = convert<Out>(f(convert<compute_t<In>>(
      reinterpret_cast<const In*>(a.in[K])[a.scalar[K] ? 0 : i])...));
}

template <int V, typename Out, typename... In, typename F, size_t... K>
__device__ __forceinline__ void flat_vec(const FlatArgs<sizeof...(In)>& a, int64_t base, const F& f,
                                         std::index_sequence<K...>) {
  // Each input as V values: a vector load, or its scalar repeated.
  std::tuple<Vec<In, V>...> ins;
  (
      [&] {
        auto& dst = std::get<K>(ins);
        using T = std::remove_reference_t<decltype(dst.v[0])>;
        if (a.scalar[K]) {
          const T s = reinterpret_cast<const T*>(a.in[K])[0];
          for (int j = 0; j < V; ++j) dst.v[j] = s;
        } else {
          dst = *reinterpret_cast<const Vec<T, V>*>(reinterpret_cast<const T*>(a.in[K]) + base);
        }
      }(),
      ...);
  Vec<Out, V> out;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    out.v[j] = convert<Out>(f(convert<compute_t<In>>(std::get<K>(ins).v[j])...));
  }
  *reinterpret_cast<Vec<Out, V>*>(reinterpret_cast<Out*>(a.out) + base) = out;
}

template <int V, typename F, typename Out, typename... In>
__global__ void elementwise_flat_kernel(FlatArgs<sizeof...(In)> a, int64_t n, bool vectorized, F f) {
  using Seq = std::index_sequence_for<In...>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (vectorized) {
    const int64_t groups = n / V;
    for (int64_t g = i; g < groups; g += stride) flat_vec<V, Out, In...>(a, g * V, f, Seq{});
    for (int64_t t = groups * V + i; t < n; t += stride) flat_one<Out, In...>(a, t, f, Seq{});
  } else {
    for (; i < n; i += stride) flat_one<Out, In...>(a, i, f, Seq{});
  }
}

template <int N, typename I>
__device__ __forceinline__ void offsets_of(const StridedLayout<N, I>& l, I linear, I (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = 0; d < l.ndim; ++d) {
    const I size = l.sizes[d];
    const I q = linear / size;
    const I idx = linear - q * size;
    linear = q;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * l.strides[k][d];
  }
}

template <typename I, typename Out, typename... In, typename F, size_t... K>
__device__ __forceinline__ void strided_one(const I (&off)[1 + sizeof...(In)], char* out,
                                            const std::array<const char*, sizeof...(In)>& in,
                                            const F& f, std::index_sequence<K...>) {
  reinterpret_cast<Out*>(out)[off[0]] = convert<Out>(
      f(convert<compute_t<In>>(reinterpret_cast<const In*>(in[K])[off[K + 1]])...));
}

template <typename F, typename Out, typename... In>
__global__ void elementwise_strided_kernel(StridedLayout<1 + sizeof...(In), int32_t> l, char* out,
                                           std::array<const char*, sizeof...(In)> in, int32_t n,
                                           F f) {
  using I = int32_t;
  constexpr int N = 1 + sizeof...(In);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[N];
    offsets_of<N, I>(l, i, off);
    strided_one<I, Out, In...>(off, out, in, f, std::index_sequence_for<In...>{});
  }
}

// out = f(ins...) elementwise. Out and In... are the CUDA storage types of
// out and the inputs; every tensor has out's sizes and is on ctx's device.
// Operand layouts of more than kMaxDims unmergeable dims are made
// contiguous first.
template <typename Out, typename... In, typename F>
void elementwise(const KernelContext& ctx, const char* name, Tensor& out,
                 std::array<Tensor, sizeof...(In)> ins, const F& f) {
  constexpr int NIN = sizeof...(In);
  constexpr int N = 1 + NIN;
  const int64_t n = out.numel();
  if (n == 0) return;
  std::array<const Tensor*, N> ts;
  ts[0] = &out;
  for (int k = 0; k < NIN; ++k) ts[k + 1] = &ins[k];
  LayoutPlan<N> plan = plan_layout<N>(ts);
  if (plan.too_many_dims) {
    // Rare: make the inputs contiguous (the output keeps its layout through
    // a contiguous temporary).
    Tensor dense_out = out.is_contiguous() ? out : empty_like(out);
    for (auto& t : ins) t = t.contiguous();
    elementwise<Out, In...>(ctx, name, dense_out, ins, f);
    if (!dense_out.is_same(out)) out.copy_(dense_out);
    return;
  }
  if (!plan.fits_32bit && !is_flat<N>(plan)) {
    // The strided kernel indexes in 32 bits (64-bit division costs several
    // times more): halve the largest dim until each part fits.
    int64_t dim = 0;
    for (int64_t d = 1; d < out.dim(); ++d) {
      if (out.sizes()[d] > out.sizes()[dim]) dim = d;
    }
    const int64_t half = out.sizes()[dim] / 2;
    for (const auto& [start, length] : {std::pair{int64_t{0}, half},
                                        std::pair{half, out.sizes()[dim] - half}}) {
      Tensor part = out.narrow(dim, start, length);
      std::array<Tensor, NIN> part_ins;
      for (int k = 0; k < NIN; ++k) part_ins[k] = ins[k].narrow(dim, start, length);
      elementwise<Out, In...>(ctx, name, part, part_ins, f);
    }
    return;
  }
  cudaStream_t stream = stream_of(ctx);
  if (is_flat<N>(plan)) {
    FlatArgs<NIN> a;
    a.out = static_cast<char*>(out.data_ptr());
    constexpr int V = vec_width<Out, In...>();
    bool aligned = reinterpret_cast<uintptr_t>(a.out) % (sizeof(Out) * V) == 0;
    for (int k = 0; k < NIN; ++k) {
      a.in[k] = static_cast<const char*>(ins[k].data_ptr());
      a.scalar[k] = plan.ndim == 1 && plan.strides[k + 1][0] == 0;
    }
    [&]<size_t... K>(std::index_sequence<K...>) {
      ((aligned &= a.scalar[K] ||
                   reinterpret_cast<uintptr_t>(a.in[K]) % (sizeof(In) * V) == 0),
       ...);
    }(std::index_sequence_for<In...>{});
    const bool vectorized = V > 1 && aligned;
    elementwise_flat_kernel<V, F, Out, In...><<<grid_for(vectorized ? ceil_div(n, V) : n), kBlockSize, 0,
                                            stream>>>(a, n, vectorized, f);
  } else {
    std::array<const char*, NIN> in_ptrs;
    for (int k = 0; k < NIN; ++k) in_ptrs[k] = static_cast<const char*>(ins[k].data_ptr());
    elementwise_strided_kernel<F, Out, In...><<<grid_for(n), kBlockSize, 0, stream>>>(
        narrow_layout<N, int32_t>(plan), static_cast<char*>(out.data_ptr()), in_ptrs,
        static_cast<int32_t>(n), f);
  }
  after_launch(ctx, name);
}

}  // namespace tessera::cuda
