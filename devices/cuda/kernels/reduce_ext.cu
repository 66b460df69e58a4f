// prod, amax, amin, all, any, the vector norms and logsumexp (the
// ReduceExt kernel) on the reduction engine, with the CPU device's
// semantics: NaN propagates through amax/amin/inf-norm, integer products
// wrap in int64, the 1- and 2-norms and logsumexp's sum accumulate in
// double.
#include <limits>

#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/reduce_engine.cuh"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using Op = kernels::ReduceExtOp;

template <typename A>
__device__ __forceinline__ bool nan_v(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}

template <typename I, typename O>
struct ProdOp {
  using Acc = acc_t<I>;
  const I* in;
  O* out;
  __device__ Acc identity() const { return Acc(1); }
  __device__ Acc load(int64_t off, int64_t) const { return convert<Acc>(in[off]); }
  __device__ Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral_v<Acc>) {
      return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  }
  __device__ void store(int64_t off, Acc a) const { out[off] = convert<O>(a); }
};

// amax, amin and the inf-norm: the extreme value, NaN winning.
template <typename I>
struct ExtremeOp {
  using C = compute_t<I>;
  struct Acc {
    C value;
    bool any;  // has seen an element (the identity has none)
  };
  const I* in;
  I* out;
  bool is_max;
  bool absolute;
  __device__ Acc identity() const { return {C(0), false}; }
  __device__ Acc load(int64_t off, int64_t) const {
    C v = convert<C>(in[off]);
    if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
      if (absolute && v < C(0)) v = -v;
    }
    return {v, true};
  }
  __device__ Acc combine(Acc a, Acc b) const {
    if (!a.any) return b;
    if (!b.any) return a;
    if (nan_v(a.value)) return a;
    if (nan_v(b.value)) return b;
    return (is_max ? b.value > a.value : b.value < a.value) ? b : a;
  }
  __device__ void store(int64_t off, Acc a) const { out[off] = convert<I>(a.value); }
};

template <typename I, typename O>
struct AllAnyOp {
  using Acc = int;  // 4 bytes: shuffles move words
  const I* in;
  O* out;
  bool all;
  __device__ int identity() const { return all ? 1 : 0; }
  __device__ int load(int64_t off, int64_t) const { return convert<bool>(in[off]) ? 1 : 0; }
  __device__ int combine(int a, int b) const { return all ? (a & b) : (a | b); }
  __device__ void store(int64_t off, int a) const { out[off] = convert<O>(a != 0); }
};

template <typename I>
struct NormOp {
  using Acc = double;
  const I* in;
  I* out;
  bool squared;  // 2-norm; else 1-norm
  __device__ double identity() const { return 0.0; }
  __device__ double load(int64_t off, int64_t) const {
    const double v = convert<double>(in[off]);
    return squared ? v * v : (v < 0 ? -v : v);
  }
  __device__ double combine(double a, double b) const { return a + b; }
  __device__ void store(int64_t off, double a) const {
    out[off] = convert<I>(squared ? ::sqrt(a) : a);
  }
};

// logsumexp as the running pair (max, sum of exp(x - max)), the sum in
// double; an infinite max shifts by nothing, NaN propagates.
template <typename I>
struct LogSumExpOp {
  using C = compute_t<I>;
  struct Acc {
    C max;
    double sum;
  };
  const I* in;
  I* out;
  __device__ Acc identity() const { return {-std::numeric_limits<C>::infinity(), 0.0}; }
  __device__ Acc load(int64_t off, int64_t) const { return {convert<C>(in[off]), 1.0}; }
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.max != a.max) return a;
    if (b.max != b.max) return b;
    if (a.sum == 0.0) return b;
    if (b.sum == 0.0) return a;
    const C m = a.max > b.max ? a.max : b.max;
    if (dm::isinf(m)) return {m, a.max == b.max ? a.sum + b.sum : (a.max == m ? a.sum : b.sum)};
    return {m, a.sum * ::exp(static_cast<double>(a.max - m)) +
                   b.sum * ::exp(static_cast<double>(b.max - m))};
  }
  __device__ void store(int64_t off, Acc a) const {
    C r;
    if (a.max != a.max || a.sum == 0.0) r = a.sum == 0.0 ? -std::numeric_limits<C>::infinity() : a.max;
    else if (dm::isinf(a.max)) r = a.max;
    else r = static_cast<C>(::log(a.sum)) + a.max;
    out[off] = convert<I>(r);
  }
};

const char* name_of(Op op) {
  switch (op) {
    case Op::kProd: return "prod";
    case Op::kAmax: return "amax";
    case Op::kAmin: return "amin";
    case Op::kAll: return "all";
    case Op::kAny: return "any";
    case Op::kNorm1:
    case Op::kNorm2:
    case Op::kNormInf: return "norm";
    case Op::kLogSumExp: return "logsumexp";
  }
  return "reduce_ext";
}

[[noreturn]] void bad_dtypes(const char* name, const Tensor& out, const Tensor& in) {
  throw TypeError(detail::concat(name, ": the cuda kernel has no such reduction of ", describe(in),
                                 " into ", describe(out)));
}

void reduce_ext_kernel(const KernelContext& ctx, Op op, Tensor& out, const Tensor& in,
                       const Shape& dims) {
  const char* name = name_of(op);
  const ReduceLayout l = plan_reduce(name, out, in, dims);
  const DType idt = in.dtype(), odt = out.dtype();
  dispatch_cuda_dtype(idt, [&](auto tag) {
    using I = decltype(tag);
    switch (op) {
      case Op::kProd:
        if (is_floating(idt) && odt == idt) return run_reduce(ctx, name, l, ProdOp<I, I>{in.data<I>(), out.data<I>()});
        if constexpr (!is_float_v<I>) {
          if (odt == DType::kI64) return run_reduce(ctx, name, l, ProdOp<I, int64_t>{in.data<I>(), out.data<int64_t>()});
        }
        bad_dtypes(name, out, in);
      case Op::kAmax:
      case Op::kAmin:
      case Op::kNormInf:
        if (odt != idt) bad_dtypes(name, out, in);
        return run_reduce(ctx, name, l, ExtremeOp<I>{in.data<I>(), out.data<I>(), op != Op::kAmin,
                                                     op == Op::kNormInf});
      case Op::kAll:
      case Op::kAny:
        if (odt == DType::kBool) {
          return run_reduce(ctx, name, l, AllAnyOp<I, bool>{in.data<I>(), out.data<bool>(), op == Op::kAll});
        }
        if (odt == DType::kU8) {
          return run_reduce(ctx, name, l, AllAnyOp<I, uint8_t>{in.data<I>(), out.data<uint8_t>(), op == Op::kAll});
        }
        bad_dtypes(name, out, in);
      case Op::kNorm1:
      case Op::kNorm2:
        if constexpr (is_float_v<I>) {
          if (odt == idt) return run_reduce(ctx, name, l, NormOp<I>{in.data<I>(), out.data<I>(), op == Op::kNorm2});
        }
        bad_dtypes(name, out, in);
      case Op::kLogSumExp:
        if constexpr (is_float_v<I>) {
          if (odt == idt) return run_reduce(ctx, name, l, LogSumExpOp<I>{in.data<I>(), out.data<I>()});
        }
        bad_dtypes(name, out, in);
    }
  });
}

}  // namespace

void register_reduce_ext_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ReduceExt>(type, &reduce_ext_kernel);
}

}  // namespace tessera::cuda
