// Sum and mean (the Reduce kernel) and the min/max of an index tensor
// (IndexBounds), on the reduction engine.
//
// Accumulation as on the CPU device: double when the input or output is
// f64, float when either is another floating dtype, else int64 (wrapping).
// Reducing zero elements gives 0 for sum and NaN for mean.
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/reduce_engine.cuh"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::ReduceOp;

template <typename In, typename Out, typename A>
struct SumOp {
  using Acc = A;
  const In* in;
  Out* out;
  bool mean;
  int64_t count;
  __device__ A identity() const { return A(0); }
  __device__ A load(int64_t off, int64_t) const { return convert<A>(in[off]); }
  __device__ A combine(A a, A b) const {
    if constexpr (is_int_v<A>) return wrap_add(a, b);
    else return a + b;
  }
  // float rows read as 16-byte vectors (see reduce_engine.cuh).
  __device__ A load4(int64_t off) const
    requires(std::is_same_v<In, float> && std::is_same_v<A, float>)
  {
    const float4 v = *reinterpret_cast<const float4*>(in + off);
    return (v.x + v.y) + (v.z + v.w);
  }
  bool vector_aligned() const
    requires(std::is_same_v<In, float> && std::is_same_v<A, float>)
  {
    return reinterpret_cast<uintptr_t>(in) % 16 == 0;
  }
  __device__ void store(int64_t off, A a) const {
    if constexpr (is_float_v<A>) {
      if (mean) a = a / static_cast<A>(count);
    }
    out[off] = convert<Out>(a);
  }
};

template <typename In, typename Out>
void run_sum(const KernelContext& ctx, ReduceOp op, Tensor& out, const Tensor& in,
             const ReduceLayout& l) {
  using A = std::conditional_t<std::is_same_v<In, double> || std::is_same_v<Out, double>, double,
                               std::conditional_t<is_float_v<In> || is_float_v<Out>, float, int64_t>>;
  SumOp<In, Out, A> sum{in.data<In>(), out.data<Out>(), op == ReduceOp::kMean, l.R};
  run_reduce(ctx, op == ReduceOp::kMean ? "mean" : "sum", l, sum);
}

void reduce_kernel(const KernelContext& ctx, ReduceOp op, Tensor& out, const Tensor& in,
                   const Shape& dims) {
  const char* name = op == ReduceOp::kMean ? "mean" : "sum";
  const DType idt = in.dtype(), odt = out.dtype();
  TESSERA_CHECK(idt == odt || (odt == DType::kI64 && !is_floating(idt)), TypeError, name,
                ": the cuda kernel reduces into the input's dtype or, from integers, int64; got ",
                describe(in), " into ", describe(out));
  TESSERA_CHECK(op != ReduceOp::kMean || is_floating(odt), TypeError, name,
                ": the cuda kernel needs a floating output dtype, got ", describe(out));
  const ReduceLayout l = plan_reduce(name, out, in, dims);
  dispatch_cuda_dtype(idt, [&](auto tag) {
    using In = decltype(tag);
    if (odt == idt) {
      run_sum<In, In>(ctx, op, out, in, l);
    } else if constexpr (!is_float_v<In>) {
      run_sum<In, int64_t>(ctx, op, out, in, l);
    }
  });
}

struct Bounds {
  int64_t lo, hi;
};

template <typename I>
struct BoundsOp {
  using Acc = Bounds;
  const I* in;
  int64_t* out;
  __device__ Bounds identity() const {
    return {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  }
  __device__ Bounds load(int64_t off, int64_t) const {
    const int64_t v = static_cast<int64_t>(in[off]);
    return {v, v};
  }
  __device__ Bounds combine(Bounds a, Bounds b) const {
    return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
  __device__ void store(int64_t, Bounds b) const {
    out[0] = b.lo;
    out[1] = b.hi;
  }
};

void index_bounds_kernel(const KernelContext& ctx, Tensor& out, const Tensor& index) {
  TESSERA_CHECK(is_integral(index.dtype()) && out.dtype() == DType::kI64 && out.numel() == 2 &&
                    out.is_contiguous(),
                TypeError, "index_bounds: the cuda kernel needs an integer index and a contiguous "
                "int64 out of 2 elements, got index ", describe(index), ", out ", describe(out));
  TESSERA_CHECK(index.numel() > 0, ValueError, "index_bounds: empty index ", describe(index));
  // Everything reduced into one output; its offset is unused.
  Shape all(static_cast<size_t>(index.dim()));
  for (int64_t d = 0; d < index.dim(); ++d) all[static_cast<size_t>(d)] = d;
  const Tensor one = out.narrow(0, 0, 1).view(Shape(static_cast<size_t>(index.dim()), 1));
  const ReduceLayout l = plan_reduce("index_bounds", one, index, all);
  dispatch_cuda_dtype(index.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if constexpr (is_int_v<I>) run_reduce(ctx, "index_bounds", l, BoundsOp<I>{index.data<I>(), out.data<int64_t>()});
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Reduce>(type, &reduce_kernel);
  registry.register_kernel<kernels::IndexBounds>(type, &index_bounds_kernel);
}

}  // namespace tessera::cuda
