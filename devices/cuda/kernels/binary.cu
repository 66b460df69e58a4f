// Binary arithmetic: out = a (op) b with add/sub's alpha, as the CPU
// device computes it: integers wrap, 16-bit floats compute in float,
// alpha != 1 is fma(alpha, b, a), bool add is logical or (with alpha:
// a || (alpha && b)) and bool mul logical and.
#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::BinaryOp;

template <typename C>
struct AddOne {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else if constexpr (is_int_v<C>) return wrap_add(a, b);
    else return a + b;
  }
};
template <typename C>
struct SubOne {
  __device__ C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return wrap_sub(a, b);
    else return a - b;
  }
};
template <typename C>
struct AddAlpha {  // a + alpha * b; float sub passes -alpha
  C alpha;
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a || (alpha && b);
    else if constexpr (is_int_v<C>) return wrap_add(a, wrap_mul(alpha, b));
    else return dm::fma(alpha, b, a);
  }
};
template <typename C>
struct SubAlpha {  // integers: a - alpha * b (negating alpha could overflow)
  C alpha;
  __device__ C operator()(C a, C b) const { return wrap_sub(a, wrap_mul(alpha, b)); }
};
template <typename C>
struct Mul {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else if constexpr (is_int_v<C>) return wrap_mul(a, b);
    else return a * b;
  }
};
template <typename C>
struct Div {
  __device__ C operator()(C a, C b) const { return a / b; }
};

void binary_kernel(const KernelContext& ctx, BinaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, Scalar alpha) {
  const char* name = kernels::name_of(op);
  TESSERA_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype(), TypeError, name,
                ": the cuda kernel needs one dtype, got out ", describe(out), ", a ", describe(a),
                ", b ", describe(b));
  const DType dt = out.dtype();
  TESSERA_CHECK(op != BinaryOp::kDiv || is_floating(dt), TypeError,
                "div: the cuda kernel needs a floating dtype, got ", dtype_name(dt));
  TESSERA_CHECK(!(op == BinaryOp::kSub && dt == DType::kBool), TypeError,
                "sub: subtraction of bool tensors is not supported (", describe(a), " - ",
                describe(b), ")");
  dispatch_cuda_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const C alpha_c = is_half_v<T> ? static_cast<C>(alpha.to<double>()) : alpha.to<C>();
    const bool one = alpha_c == C(1);
    switch (op) {
      case BinaryOp::kAdd:
        if (one) elementwise<T, T, T>(ctx, name, out, {a, b}, AddOne<C>{});
        else elementwise<T, T, T>(ctx, name, out, {a, b}, AddAlpha<C>{alpha_c});
        break;
      case BinaryOp::kSub:
        if constexpr (!std::is_same_v<T, bool>) {
          if (one) elementwise<T, T, T>(ctx, name, out, {a, b}, SubOne<C>{});
          else if constexpr (is_int_v<C>) elementwise<T, T, T>(ctx, name, out, {a, b}, SubAlpha<C>{alpha_c});
          else elementwise<T, T, T>(ctx, name, out, {a, b}, AddAlpha<C>{static_cast<C>(-alpha_c)});
        }
        break;
      case BinaryOp::kMul: elementwise<T, T, T>(ctx, name, out, {a, b}, Mul<C>{}); break;
      case BinaryOp::kDiv:
        if constexpr (is_float_v<T>) elementwise<T, T, T>(ctx, name, out, {a, b}, Div<C>{});
        break;
    }
  });
}

}  // namespace

void register_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Binary>(type, &binary_kernel);
}

}  // namespace tessera::cuda
