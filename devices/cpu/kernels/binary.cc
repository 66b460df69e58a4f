// Binary arithmetic on the CPU: out = a (op) b with add/sub's alpha.
//
// Semantics follow PyTorch's CPU kernels: integers wrap on overflow; the
// 16-bit floats compute in float; add/sub with alpha != 1 compute
// fma(alpha, b, a) as PyTorch's vectorized add does; bool add is logical or
// (with alpha: a || (alpha && b)) and bool mul logical and.
//
// Each inner row picks a loop by its strides: all contiguous, one input a
// broadcast scalar (stride 0), or strided. The contiguous loops use
// __restrict pointers; in-place calls (out is a, or b) get loops of their
// own, since out aliasing an input exactly is allowed but restrict is not.
#include <algorithm>
#include <cmath>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

// Functors on the compute type C.
template <typename C>
struct AddOne {
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else if constexpr (is_int_v<C>) return wrap_add(a, b);
    else return a + b;
  }
};
template <typename C>
struct SubOne {
  C operator()(C a, C b) const {
    if constexpr (is_int_v<C>) return wrap_sub(a, b);
    else return a - b;
  }
};
template <typename C>
struct AddAlpha {  // a + alpha * b; sub passes -alpha
  C alpha;
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a || (alpha && b);
    else if constexpr (is_int_v<C>) return wrap_add(a, wrap_mul(alpha, b));
    else return std::fma(alpha, b, a);
  }
};
template <typename C>
struct SubAlpha {  // integers: a - alpha * b (no negation, which could overflow)
  C alpha;
  C operator()(C a, C b) const { return wrap_sub(a, wrap_mul(alpha, b)); }
};
template <typename C>
struct Mul {
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else if constexpr (is_int_v<C>) return wrap_mul(a, b);
    else return a * b;
  }
};
template <typename C>
struct Div {
  C operator()(C a, C b) const { return a / b; }
};

template <typename T, typename F>
inline T apply(const F& f, T a, T b) {
  using C = compute_t<T>;
  return static_cast<T>(f(static_cast<C>(a), static_cast<C>(b)));
}

// Contiguous loops; __restrict on parameters (where GCC honours it) lets
// them vectorize without runtime alias checks. Exact aliasing of out with
// an input gets its own loop with one pointer for both.
template <typename T, typename F>
void vv(T* __restrict o, const T* __restrict a, const T* __restrict b, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, a[i], b[i]);
}
template <typename T, typename F>
void vv_out_is_a(T* __restrict o, const T* __restrict b, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, o[i], b[i]);
}
template <typename T, typename F>
void vv_out_is_b(T* __restrict o, const T* __restrict a, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, a[i], o[i]);
}
template <typename T, typename F>
void vv_all_same(T* __restrict o, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, o[i], o[i]);
}
template <typename T, typename F>
void vs(T* __restrict o, const T* __restrict a, T bv, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, a[i], bv);
}
template <typename T, typename F>
void vs_out_is_a(T* __restrict o, T bv, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, o[i], bv);
}
template <typename T, typename F>
void sv(T* __restrict o, T av, const T* __restrict b, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, av, b[i]);
}
template <typename T, typename F>
void sv_out_is_b(T* __restrict o, T av, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply(f, av, o[i]);
}

template <typename T, typename F>
void loop_vv(T* o, const T* a, const T* b, int64_t n, const F& f) {
  if (o == a && o == b) vv_all_same(o, n, f);
  else if (o == a) vv_out_is_a(o, b, n, f);
  else if (o == b) vv_out_is_b(o, a, n, f);
  else vv(o, a, b, n, f);
}

// b is one value.
template <typename T, typename F>
void loop_vs(T* o, const T* a, T bv, int64_t n, const F& f) {
  if (o == a) vs_out_is_a(o, bv, n, f);
  else vs(o, a, bv, n, f);
}

// a is one value.
template <typename T, typename F>
void loop_sv(T* o, T av, const T* b, int64_t n, const F& f) {
  if (o == b) sv_out_is_b(o, av, n, f);
  else sv(o, av, b, n, f);
}

// f16/bf16 rows: blocks staged through float buffers (vectorized
// conversions, vectorized float arithmetic). Reading a whole block before
// writing it keeps in-place calls correct.
template <typename T, typename F>
void half_row(char* const* p, const int64_t* s, int64_t n, const F& f) {
  float x[kStageBlock], y[kStageBlock], z[kStageBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
    const int64_t m = std::min(kStageBlock, n - i0);
    gather_float<T>(p[1] + i0 * s[1], s[1], x, m);
    gather_float<T>(p[2] + i0 * s[2], s[2], y, m);
    for (int64_t i = 0; i < m; ++i) z[i] = f(x[i], y[i]);
    scatter_float<T>(z, p[0] + i0 * s[0], s[0], m);
  }
}

template <typename T, typename F>
void run_binary(Tensor& out, const Tensor& a, const Tensor& b, const F& f) {
  const auto row = [&f](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (is_half_v<T>) {
      return half_row<T>(p, s, n, f);
    } else {
      constexpr int64_t w = sizeof(T);
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      const T* y = reinterpret_cast<const T*>(p[2]);
      if (s[0] == w) {
        if (s[1] == w && s[2] == w) return loop_vv(o, x, y, n, f);
        if (s[1] == w && s[2] == 0) return loop_vs(o, x, *y, n, f);
        if (s[1] == 0 && s[2] == w) return loop_sv(o, *x, y, n, f);
      }
      for (int64_t i = 0; i < n; ++i) {
        at<T>(p[0], s[0], i) = apply(f, at<const T>(p[1], s[1], i), at<const T>(p[2], s[2], i));
      }
    }
  };
  if (StridedIter<3>::run_contiguous({&out, &a, &b}, row)) return;
  StridedIter<3> it({&out, &a, &b}, "binary");
  it.run({static_cast<char*>(out.data_ptr()), static_cast<char*>(a.data_ptr()),
          static_cast<char*>(b.data_ptr())},
         row);
}

const char* op_name(kernels::BinaryOp op) {
  switch (op) {
    case kernels::BinaryOp::kAdd: return "add";
    case kernels::BinaryOp::kSub: return "sub";
    case kernels::BinaryOp::kMul: return "mul";
    case kernels::BinaryOp::kDiv: return "div";
  }
  return "binary";
}

void binary_kernel(const KernelContext&, kernels::BinaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, Scalar alpha) {
  using kernels::BinaryOp;
  TESSERA_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype(), TypeError, op_name(op),
                ": the cpu kernel needs one dtype, got out ", describe(out), ", a ", describe(a),
                ", b ", describe(b));
  const DType dt = out.dtype();
  TESSERA_CHECK(op != BinaryOp::kDiv || is_floating(dt), TypeError,
                "div: the cpu kernel needs a floating dtype, got ", dtype_name(dt));
  TESSERA_CHECK(!(op == BinaryOp::kSub && dt == DType::kBool), TypeError,
                "sub: subtraction of bool tensors is not supported (", describe(a), " - ",
                describe(b), ")");
  if (out.numel() == 0) return;
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub: {
        // alpha converted to C equal to 1 computes exactly as a plain add.
        const bool one = alpha.to<C>() == C(1);
        if constexpr (std::is_same_v<T, bool>) {
          if (one) run_binary<T>(out, a, b, AddOne<C>{});
          else run_binary<T>(out, a, b, AddAlpha<C>{alpha.to<C>()});
        } else if (op == BinaryOp::kAdd) {
          if (one) run_binary<T>(out, a, b, AddOne<C>{});
          else run_binary<T>(out, a, b, AddAlpha<C>{alpha.to<C>()});
        } else if (one) {
          run_binary<T>(out, a, b, SubOne<C>{});
        } else if constexpr (is_int_v<C>) {
          run_binary<T>(out, a, b, SubAlpha<C>{alpha.to<C>()});
        } else {
          run_binary<T>(out, a, b, AddAlpha<C>{static_cast<C>(-alpha.to<C>())});
        }
        break;
      }
      case BinaryOp::kMul: run_binary<T>(out, a, b, Mul<C>{}); break;
      case BinaryOp::kDiv:
        if constexpr (is_float_v<T>) run_binary<T>(out, a, b, Div<C>{});
        break;
    }
  });
}

}  // namespace

void register_binary_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Binary>(type, &binary_kernel);
}

}  // namespace tessera::cpu
