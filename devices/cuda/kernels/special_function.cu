// The SpecialFunction kernel on the GPU: each element evaluated in double by
// the same source as the CPU device's kernel (devices/common/special_math),
// then rounded to the output's dtype as the CPU device rounds it (through
// float for the 16-bit floats). nextafter steps in the dtype's own
// precision; signbit reads any dtype and writes bool.
//
// One kernel per op, each inlining its one function; the dtypes are read
// and written through a switch on the element type instead of template
// parameters, so the math is compiled once per op rather than once per op
// and dtype. This file is compiled with --fmad=false (BUILD): every product
// and sum rounds as written, as the algorithms assume (the double-double
// steps of the large-degree Legendre polynomials, the recurrences that
// reproduce PyTorch's with explicit fma).
#include <cmath>
#include <cstdint>

#include "devices/common/special_math/special_math.h"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/special_ops.h"

namespace tessera::cuda {
namespace {

using kernels::SpecialOp;
namespace sm = ::tessera::special_math;

// Operands: out, a and, for the binary ops, b (element offsets from the
// merged layout, or the linear index when the layout is flat).
template <int N>
struct SpecialArgs {
  StridedLayout<N, int64_t> layout;
  bool flat = false;         // every operand unit-stride or a broadcast scalar
  bool scalar[N - 1] = {};   // (flat) input k has stride 0
  char* out = nullptr;
  const char* in[N - 1] = {};
  DType out_dtype = DType::kF32;
  DType in_dtype = DType::kF32;
  int64_t order = 0;  // polygamma's n
};

// Element i of an array of `dtype` as a double: exact for every dtype but
// int64 beyond 2^53 (which only signbit reads, and keeps its sign).
__device__ __forceinline__ double load_as_double(const char* base, int64_t i, DType dtype) {
  switch (dtype) {
    case DType::kF16: return convert<float>(reinterpret_cast<const __half*>(base)[i]);
    case DType::kBF16: return convert<float>(reinterpret_cast<const __nv_bfloat16*>(base)[i]);
    case DType::kF32: return reinterpret_cast<const float*>(base)[i];
    case DType::kF64: return reinterpret_cast<const double*>(base)[i];
    case DType::kBool: return reinterpret_cast<const bool*>(base)[i] ? 1.0 : 0.0;
    case DType::kU8: return reinterpret_cast<const uint8_t*>(base)[i];
    case DType::kI8: return reinterpret_cast<const int8_t*>(base)[i];
    case DType::kI16: return reinterpret_cast<const int16_t*>(base)[i];
    case DType::kI32: return reinterpret_cast<const int32_t*>(base)[i];
    case DType::kI64: return static_cast<double>(reinterpret_cast<const int64_t*>(base)[i]);
  }
  return 0;
}

// Stores v into a floating array as the CPU device's kernel does: rounded to
// the compute type (float for the 16-bit floats), then to the storage type.
__device__ __forceinline__ void store_floating(char* base, int64_t i, DType dtype, double v) {
  switch (dtype) {
    case DType::kF16:
      reinterpret_cast<__half*>(base)[i] = convert<__half>(static_cast<float>(v));
      return;
    case DType::kBF16:
      reinterpret_cast<__nv_bfloat16*>(base)[i] = convert<__nv_bfloat16>(static_cast<float>(v));
      return;
    case DType::kF32: reinterpret_cast<float*>(base)[i] = static_cast<float>(v); return;
    case DType::kF64: reinterpret_cast<double*>(base)[i] = v; return;
    default: return;  // the host checked that out is floating
  }
}

// nextafter(a[ia], b[ib]) into out[io], in the dtype's own precision (as the
// CPU device: C's nextafter for float and double, the bit pattern stepped
// for the 16-bit floats).
__device__ __forceinline__ void next_after_element(char* out, int64_t io, const char* a,
                                                   int64_t ia, const char* b, int64_t ib,
                                                   DType dtype) {
  switch (dtype) {
    case DType::kF64:
      reinterpret_cast<double*>(out)[io] = ::nextafter(reinterpret_cast<const double*>(a)[ia],
                                                       reinterpret_cast<const double*>(b)[ib]);
      return;
    case DType::kF32:
      reinterpret_cast<float*>(out)[io] = ::nextafterf(reinterpret_cast<const float*>(a)[ia],
                                                       reinterpret_cast<const float*>(b)[ib]);
      return;
    case DType::kF16: {
      const __half x = reinterpret_cast<const __half*>(a)[ia];
      const __half y = reinterpret_cast<const __half*>(b)[ib];
      const float fx = __half2float(x), fy = __half2float(y);
      reinterpret_cast<__half*>(out)[io] =
          (fx != fx || fy != fy)
              ? __float2half_rn(fx + fy)
              : __ushort_as_half(
                    sm::next_after_16bit(__half_as_ushort(x), fx, __half_as_ushort(y), fy));
      return;
    }
    case DType::kBF16: {
      const __nv_bfloat16 x = reinterpret_cast<const __nv_bfloat16*>(a)[ia];
      const __nv_bfloat16 y = reinterpret_cast<const __nv_bfloat16*>(b)[ib];
      const float fx = __bfloat162float(x), fy = __bfloat162float(y);
      reinterpret_cast<__nv_bfloat16*>(out)[io] =
          (fx != fx || fy != fy)
              ? __float2bfloat16_rn(fx + fy)
              : __ushort_as_bfloat16(sm::next_after_16bit(__bfloat16_as_ushort(x), fx,
                                                          __bfloat16_as_ushort(y), fy));
      return;
    }
    default: return;  // the host checked that out is floating
  }
}

// The op's value at (a, b) in double; the CPU device's kernel maps the ops
// to the same functions (devices/cpu/kernels/special_function.cc).
template <SpecialOp OP>
__device__ __forceinline__ double evaluate(double a, double b, int64_t order) {
  if constexpr (OP == SpecialOp::kErfc) return sm::erfc(a);
  else if constexpr (OP == SpecialOp::kErfinv) return sm::erfinv(a);
  else if constexpr (OP == SpecialOp::kExp2) return sm::exp2(a);
  else if constexpr (OP == SpecialOp::kFrac) return sm::frac(a);
  else if constexpr (OP == SpecialOp::kSinc) return sm::sinc(a);
  else if constexpr (OP == SpecialOp::kDigamma) return sm::digamma(a);
  else if constexpr (OP == SpecialOp::kLgamma) return sm::lgamma(a);
  else if constexpr (OP == SpecialOp::kI0) return sm::i0(a);
  else if constexpr (OP == SpecialOp::kI0e) return sm::i0e(a);
  else if constexpr (OP == SpecialOp::kI1) return sm::i1(a);
  else if constexpr (OP == SpecialOp::kI1e) return sm::i1e(a);
  else if constexpr (OP == SpecialOp::kNdtri) return sm::ndtri(a);
  else if constexpr (OP == SpecialOp::kLogNdtr) return sm::log_ndtr(a);
  else if constexpr (OP == SpecialOp::kErfcx) return sm::erfcx(a);
  else if constexpr (OP == SpecialOp::kEntr) return sm::entr(a);
  else if constexpr (OP == SpecialOp::kAiryAi) return sm::airy_ai(a);
  else if constexpr (OP == SpecialOp::kBesselJ0) return sm::bessel_j0(a);
  else if constexpr (OP == SpecialOp::kBesselJ1) return sm::bessel_j1(a);
  else if constexpr (OP == SpecialOp::kBesselY0) return sm::bessel_y0(a);
  else if constexpr (OP == SpecialOp::kBesselY1) return sm::bessel_y1(a);
  else if constexpr (OP == SpecialOp::kModifiedBesselI0) return sm::modified_bessel_i0(a);
  else if constexpr (OP == SpecialOp::kModifiedBesselI1) return sm::modified_bessel_i1(a);
  else if constexpr (OP == SpecialOp::kModifiedBesselK0) return sm::modified_bessel_k0(a);
  else if constexpr (OP == SpecialOp::kModifiedBesselK1) return sm::modified_bessel_k1(a);
  else if constexpr (OP == SpecialOp::kScaledModifiedBesselK0) {
    return sm::scaled_modified_bessel_k0(a);
  } else if constexpr (OP == SpecialOp::kScaledModifiedBesselK1) {
    return sm::scaled_modified_bessel_k1(a);
  } else if constexpr (OP == SpecialOp::kSphericalBesselJ0) return sm::spherical_bessel_j0(a);
  else if constexpr (OP == SpecialOp::kPolygamma) return sm::polygamma(order, a);
  else if constexpr (OP == SpecialOp::kZeta) return sm::zeta(a, b);
  else if constexpr (OP == SpecialOp::kIgamma) return sm::igamma(a, b);
  else if constexpr (OP == SpecialOp::kIgammac) return sm::igammac(a, b);
  else if constexpr (OP == SpecialOp::kXlog1py) return sm::xlog1py(a, b);
  else if constexpr (OP == SpecialOp::kHypot) return sm::hypot(a, b);
  else if constexpr (OP == SpecialOp::kCopysign) return sm::copysign(a, b);
  else if constexpr (OP == SpecialOp::kFmax) return sm::fmax(a, b);
  else if constexpr (OP == SpecialOp::kFmin) return sm::fmin(a, b);
  else if constexpr (OP == SpecialOp::kHeaviside) return sm::heaviside(a, b);
  else if constexpr (OP == SpecialOp::kChebyshevT) return sm::chebyshev_polynomial_t(a, b);
  else if constexpr (OP == SpecialOp::kChebyshevU) return sm::chebyshev_polynomial_u(a, b);
  else if constexpr (OP == SpecialOp::kChebyshevV) return sm::chebyshev_polynomial_v(a, b);
  else if constexpr (OP == SpecialOp::kChebyshevW) return sm::chebyshev_polynomial_w(a, b);
  else if constexpr (OP == SpecialOp::kShiftedChebyshevT) {
    return sm::shifted_chebyshev_polynomial_t(a, b);
  } else if constexpr (OP == SpecialOp::kShiftedChebyshevU) {
    return sm::shifted_chebyshev_polynomial_u(a, b);
  } else if constexpr (OP == SpecialOp::kShiftedChebyshevV) {
    return sm::shifted_chebyshev_polynomial_v(a, b);
  } else if constexpr (OP == SpecialOp::kShiftedChebyshevW) {
    return sm::shifted_chebyshev_polynomial_w(a, b);
  } else if constexpr (OP == SpecialOp::kHermiteH) return sm::hermite_polynomial_h(a, b);
  else if constexpr (OP == SpecialOp::kHermiteHe) return sm::hermite_polynomial_he(a, b);
  else if constexpr (OP == SpecialOp::kLaguerreL) return sm::laguerre_polynomial_l(a, b);
  else if constexpr (OP == SpecialOp::kLegendreP) return sm::legendre_polynomial_p(a, b);
  else static_assert(OP != OP, "signbit and nextafter are not evaluated in double");
}

template <SpecialOp OP, int N>
__global__ void special_function_elements(SpecialArgs<N> args, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[N];
    if (args.flat) {
      off[0] = i;
#pragma unroll
      for (int k = 1; k < N; ++k) off[k] = args.scalar[k - 1] ? 0 : i;
    } else {
      offsets_of<N, int64_t>(args.layout, i, off);
    }
    if constexpr (OP == SpecialOp::kNextafter) {
      next_after_element(args.out, off[0], args.in[0], off[1], args.in[1], off[2], args.out_dtype);
    } else if constexpr (OP == SpecialOp::kSignbit) {
      // bool gives 0.0, whose sign bit is clear: false, as on the CPU device.
      reinterpret_cast<bool*>(args.out)[off[0]] =
          std::signbit(load_as_double(args.in[0], off[1], args.in_dtype));
    } else {
      const double a = load_as_double(args.in[0], off[1], args.in_dtype);
      double b = 0;
      if constexpr (N == 3) b = load_as_double(args.in[1], off[2], args.in_dtype);
      store_floating(args.out, off[0], args.out_dtype, evaluate<OP>(a, b, args.order));
    }
  }
}

template <SpecialOp OP>
void launch(const KernelContext& ctx, Tensor& out, const Tensor& a, const Tensor& b,
            int64_t order) {
  constexpr int N = kernels::is_binary(OP) ? 3 : 2;
  std::array<const Tensor*, N> operands;
  operands[0] = &out;
  operands[1] = &a;
  if constexpr (N == 3) operands[2] = &b;
  const LayoutPlan<N> plan = plan_layout<N>(operands);
  if (plan.too_many_dims) {
    // Rare: more unmergeable dims than the layout holds; retry with dense
    // operands (out through a dense temporary).
    Tensor dense = empty(out.sizes(), TensorOptions(out.dtype(), ctx.device));
    if constexpr (N == 3) {
      launch<OP>(ctx, dense, a.contiguous(), b.contiguous(), order);
    } else {
      launch<OP>(ctx, dense, a.contiguous(), b, order);
    }
    out.copy_(dense);
    return;
  }
  SpecialArgs<N> args;
  args.layout = narrow_layout<N, int64_t>(plan);
  args.flat = is_flat<N>(plan);
  for (int k = 1; k < N; ++k) {
    args.scalar[k - 1] = plan.ndim == 1 && plan.strides[k][0] == 0;
    args.in[k - 1] = static_cast<const char*>(operands[k]->data_ptr());
  }
  args.out = static_cast<char*>(out.data_ptr());
  args.out_dtype = out.dtype();
  args.in_dtype = a.dtype();
  args.order = order;
  const int64_t n = out.numel();
  special_function_elements<OP, N><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(args, n);
  after_launch(ctx, "special_function");
}

#define TESSERA_SPECIAL_CASE(op) \
  case SpecialOp::op: return launch<SpecialOp::op>(ctx, out, a, b, order);

void special_function_kernel(const KernelContext& ctx, SpecialOp op, Tensor& out, const Tensor& a,
                             const Tensor& b, Scalar p0) {
  if (out.numel() == 0) return;
  const char* name = special_name(op);
  TESSERA_CHECK(a.defined() && (!kernels::is_binary(op) || b.defined()), ValueError, name,
                ": the cuda kernel needs ", kernels::is_binary(op) ? "two operands" : "an operand");
  TESSERA_CHECK(a.sizes() == out.sizes() && (!b.defined() || b.sizes() == out.sizes()),
                ValueError, name, ": the cuda kernel needs operands of out's sizes, got out ",
                describe(out), ", a ", describe(a), b.defined() ? ", b " + describe(b) : "");
  if (op == SpecialOp::kSignbit) {
    TESSERA_CHECK(out.dtype() == DType::kBool, TypeError,
                  "signbit: the cuda kernel needs a bool out, got ", describe(out));
  } else {
    TESSERA_CHECK(is_floating(out.dtype()) && a.dtype() == out.dtype() &&
                      (!b.defined() || b.dtype() == out.dtype()),
                  TypeError, name, ": the cuda kernel needs floating inputs of out's dtype, "
                  "got out ", describe(out), ", a ", describe(a));
  }
  const int64_t order = op == SpecialOp::kPolygamma ? p0.to<int64_t>() : 0;
  switch (op) {
    TESSERA_SPECIAL_CASE(kErfc) TESSERA_SPECIAL_CASE(kErfinv) TESSERA_SPECIAL_CASE(kExp2)
    TESSERA_SPECIAL_CASE(kFrac) TESSERA_SPECIAL_CASE(kSinc) TESSERA_SPECIAL_CASE(kDigamma)
    TESSERA_SPECIAL_CASE(kLgamma) TESSERA_SPECIAL_CASE(kI0) TESSERA_SPECIAL_CASE(kI0e)
    TESSERA_SPECIAL_CASE(kI1) TESSERA_SPECIAL_CASE(kI1e) TESSERA_SPECIAL_CASE(kNdtri)
    TESSERA_SPECIAL_CASE(kLogNdtr) TESSERA_SPECIAL_CASE(kErfcx) TESSERA_SPECIAL_CASE(kEntr)
    TESSERA_SPECIAL_CASE(kAiryAi) TESSERA_SPECIAL_CASE(kBesselJ0) TESSERA_SPECIAL_CASE(kBesselJ1)
    TESSERA_SPECIAL_CASE(kBesselY0) TESSERA_SPECIAL_CASE(kBesselY1)
    TESSERA_SPECIAL_CASE(kModifiedBesselI0) TESSERA_SPECIAL_CASE(kModifiedBesselI1)
    TESSERA_SPECIAL_CASE(kModifiedBesselK0) TESSERA_SPECIAL_CASE(kModifiedBesselK1)
    TESSERA_SPECIAL_CASE(kScaledModifiedBesselK0) TESSERA_SPECIAL_CASE(kScaledModifiedBesselK1)
    TESSERA_SPECIAL_CASE(kSphericalBesselJ0) TESSERA_SPECIAL_CASE(kPolygamma)
    TESSERA_SPECIAL_CASE(kSignbit) TESSERA_SPECIAL_CASE(kZeta) TESSERA_SPECIAL_CASE(kIgamma)
    TESSERA_SPECIAL_CASE(kIgammac) TESSERA_SPECIAL_CASE(kXlog1py) TESSERA_SPECIAL_CASE(kHypot)
    TESSERA_SPECIAL_CASE(kCopysign) TESSERA_SPECIAL_CASE(kNextafter) TESSERA_SPECIAL_CASE(kFmax)
    TESSERA_SPECIAL_CASE(kFmin) TESSERA_SPECIAL_CASE(kHeaviside)
    TESSERA_SPECIAL_CASE(kChebyshevT) TESSERA_SPECIAL_CASE(kChebyshevU)
    TESSERA_SPECIAL_CASE(kChebyshevV) TESSERA_SPECIAL_CASE(kChebyshevW)
    TESSERA_SPECIAL_CASE(kShiftedChebyshevT) TESSERA_SPECIAL_CASE(kShiftedChebyshevU)
    TESSERA_SPECIAL_CASE(kShiftedChebyshevV) TESSERA_SPECIAL_CASE(kShiftedChebyshevW)
    TESSERA_SPECIAL_CASE(kHermiteH) TESSERA_SPECIAL_CASE(kHermiteHe)
    TESSERA_SPECIAL_CASE(kLaguerreL) TESSERA_SPECIAL_CASE(kLegendreP)
  }
  throw ValueError(detail::concat("special_function: unknown op ", static_cast<int>(op)));
}

#undef TESSERA_SPECIAL_CASE

}  // namespace

void register_special_function_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::SpecialFunction>(type, &special_function_kernel);
}

}  // namespace tessera::cuda
