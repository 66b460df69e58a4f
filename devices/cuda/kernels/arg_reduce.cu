// max/min with indices (ArgReduce) and var/std (VarStd) on the reduction
// engine, with the CPU device's semantics.
#include <limits>

#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/reduce_engine.cuh"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// The extreme and its index; among equal values the smallest index wins,
// and the NaN of smallest index wins over everything: the first index of
// the extreme in order, whatever order the engine combines in.
template <typename I>
struct ArgOp {
  using C = compute_t<I>;
  struct Acc {
    C value;
    int64_t index;  // -1: no element yet
  };
  const I* in;
  I* values;  // may be null (argmax / argmin)
  int64_t* indices;
  bool is_max;
  __device__ Acc identity() const { return {C(0), -1}; }
  __device__ Acc load(int64_t off, int64_t r) const { return {convert<C>(in[off]), r}; }
  __device__ static bool nan(C v) {
    if constexpr (std::is_floating_point_v<C>) return v != v;
    else return false;
  }
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool an = nan(a.value), bn = nan(b.value);
    if (an || bn) {
      if (an && bn) return a.index < b.index ? a : b;
      return an ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    return (is_max ? b.value > a.value : b.value < a.value) ? b : a;
  }
  __device__ void store(int64_t off, Acc a) const {
    indices[off] = a.index;
    if (values != nullptr) values[off] = convert<I>(a.value);
  }
};

void arg_reduce_kernel(const KernelContext& ctx, bool is_max, Tensor& values, Tensor& indices,
                       const Tensor& in, int64_t dim) {
  const char* name = is_max ? "max" : "min";
  const Shape dims = in.dim() == 0 ? Shape{} : Shape{dim};
  TESSERA_CHECK(in.dim() == 0 || in.sizes()[static_cast<size_t>(dim)] > 0, IndexError, name,
                ": the cuda kernel needs a non-empty reduction dim, got ", describe(in));
  TESSERA_CHECK(indices.dtype() == DType::kI64 &&
                    (!values.defined() || values.dtype() == in.dtype()),
                TypeError, name, ": the cuda kernel needs int64 indices and values of the input's "
                "dtype, got ", describe(in));
  // One layout serves both outputs; values with other strides go through
  // a temporary of the indices' layout.
  Tensor vals = values;
  if (values.defined() && values.strides() != indices.strides()) {
    vals = empty_strided(indices.sizes(), indices.strides(), TensorOptions(in.dtype(), ctx.device));
  }
  const ReduceLayout l = plan_reduce(name, indices, in, dims);
  dispatch_cuda_dtype(in.dtype(), [&](auto tag) {
    using I = decltype(tag);
    run_reduce(ctx, name, l, ArgOp<I>{in.data<I>(), vals.defined() ? vals.data<I>() : nullptr,
                                       indices.data<int64_t>(), is_max});
  });
  if (vals.defined() && !vals.is_same(values)) values.copy_(vals);
}

// Welford's running (count, mean, sum of squared deviations) in double,
// combined with Chan's formula: one pass, no cancellation.
struct Moments {
  double n, mean, m2;
};

template <typename I>
struct VarOp {
  using Acc = Moments;
  const I* in;
  I* out;
  double divisor;
  bool take_sqrt;
  __device__ Moments identity() const { return {0.0, 0.0, 0.0}; }
  __device__ Moments load(int64_t off, int64_t) const { return {1.0, convert<double>(in[off]), 0.0}; }
  __device__ Moments combine(Moments a, Moments b) const {
    if (a.n == 0.0) return b;
    if (b.n == 0.0) return a;
    const double n = a.n + b.n;
    const double delta = b.mean - a.mean;
    return {n, a.mean + delta * (b.n / n), a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
  }
  __device__ void store(int64_t off, Moments a) const {
    double v = a.n == 0.0 ? std::numeric_limits<double>::quiet_NaN() : a.m2 / divisor;
    if (take_sqrt) v = ::sqrt(v);
    out[off] = convert<I>(v);
  }
};

void var_std_kernel(const KernelContext& ctx, bool take_sqrt, Tensor& out, const Tensor& in,
                    const Shape& dims, double correction) {
  const char* name = take_sqrt ? "std" : "var";
  TESSERA_CHECK(is_floating(in.dtype()) && out.dtype() == in.dtype(), TypeError, name,
                ": the cuda kernel needs one floating dtype, got ", describe(in), " into ",
                describe(out));
  const ReduceLayout l = plan_reduce(name, out, in, dims);
  const double divisor = std::max(0.0, static_cast<double>(l.R) - correction);
  dispatch_float_dtype(in.dtype(), name, [&](auto tag) {
    using I = decltype(tag);
    run_reduce(ctx, name, l, VarOp<I>{in.data<I>(), out.data<I>(), divisor, take_sqrt});
  });
}

}  // namespace

void register_arg_reduce_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ArgReduce>(type, &arg_reduce_kernel);
  registry.register_kernel<kernels::VarStd>(type, &var_std_kernel);
}

}  // namespace tessera::cuda
