// The SpecialFunction kernel on the CPU: each element evaluated in double
// by special_math.h (shared with the CUDA device's kernel), rounded to the
// output's dtype. nextafter is the exception: it steps in the dtype's own
// precision.
#include <cmath>
#include <cstdint>

#include "devices/common/special_math/special_math.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/pointwise_loops.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

using kernels::SpecialOp;
namespace sm = ::tessera::special_math;

using Unary = double (*)(double);
using Binary = double (*)(double, double);

Unary unary_fn(SpecialOp op) {
  switch (op) {
    case SpecialOp::kErfc: return &sm::erfc;
    case SpecialOp::kErfinv: return &sm::erfinv;
    case SpecialOp::kExp2: return &sm::exp2;
    case SpecialOp::kFrac: return &sm::frac;
    case SpecialOp::kSinc: return &sm::sinc;
    case SpecialOp::kDigamma: return &sm::digamma;
    case SpecialOp::kLgamma: return &sm::lgamma;
    case SpecialOp::kI0: return &sm::i0;
    case SpecialOp::kI0e: return &sm::i0e;
    case SpecialOp::kI1: return &sm::i1;
    case SpecialOp::kI1e: return &sm::i1e;
    case SpecialOp::kNdtri: return &sm::ndtri;
    case SpecialOp::kLogNdtr: return &sm::log_ndtr;
    case SpecialOp::kErfcx: return &sm::erfcx;
    case SpecialOp::kEntr: return &sm::entr;
    case SpecialOp::kAiryAi: return &sm::airy_ai;
    case SpecialOp::kBesselJ0: return &sm::bessel_j0;
    case SpecialOp::kBesselJ1: return &sm::bessel_j1;
    case SpecialOp::kBesselY0: return &sm::bessel_y0;
    case SpecialOp::kBesselY1: return &sm::bessel_y1;
    case SpecialOp::kModifiedBesselI0: return &sm::modified_bessel_i0;
    case SpecialOp::kModifiedBesselI1: return &sm::modified_bessel_i1;
    case SpecialOp::kModifiedBesselK0: return &sm::modified_bessel_k0;
    case SpecialOp::kModifiedBesselK1: return &sm::modified_bessel_k1;
    case SpecialOp::kScaledModifiedBesselK0: return &sm::scaled_modified_bessel_k0;
    case SpecialOp::kScaledModifiedBesselK1: return &sm::scaled_modified_bessel_k1;
    case SpecialOp::kSphericalBesselJ0: return &sm::spherical_bessel_j0;
    default: return nullptr;
  }
}

Binary binary_fn(SpecialOp op) {
  switch (op) {
    case SpecialOp::kZeta: return &sm::zeta;
    case SpecialOp::kIgamma: return &sm::igamma;
    case SpecialOp::kIgammac: return &sm::igammac;
    case SpecialOp::kXlog1py: return &sm::xlog1py;
    case SpecialOp::kHypot: return &sm::hypot;
    case SpecialOp::kCopysign: return &sm::copysign;
    case SpecialOp::kFmax: return &sm::fmax;
    case SpecialOp::kFmin: return &sm::fmin;
    case SpecialOp::kHeaviside: return &sm::heaviside;
    case SpecialOp::kChebyshevT: return &sm::chebyshev_polynomial_t;
    case SpecialOp::kChebyshevU: return &sm::chebyshev_polynomial_u;
    case SpecialOp::kChebyshevV: return &sm::chebyshev_polynomial_v;
    case SpecialOp::kChebyshevW: return &sm::chebyshev_polynomial_w;
    case SpecialOp::kShiftedChebyshevT: return &sm::shifted_chebyshev_polynomial_t;
    case SpecialOp::kShiftedChebyshevU: return &sm::shifted_chebyshev_polynomial_u;
    case SpecialOp::kShiftedChebyshevV: return &sm::shifted_chebyshev_polynomial_v;
    case SpecialOp::kShiftedChebyshevW: return &sm::shifted_chebyshev_polynomial_w;
    case SpecialOp::kHermiteH: return &sm::hermite_polynomial_h;
    case SpecialOp::kHermiteHe: return &sm::hermite_polynomial_he;
    case SpecialOp::kLaguerreL: return &sm::laguerre_polynomial_l;
    case SpecialOp::kLegendreP: return &sm::legendre_polynomial_p;
    default: return nullptr;
  }
}

// The neighbour of x towards y among the values of T.
template <typename T>
T next_after(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::nextafter(x, y);
  } else {  // Half, BFloat16: step the 16-bit pattern
    const float fx = static_cast<float>(x), fy = static_cast<float>(y);
    if (fx != fx || fy != fy) return T(fx + fy);  // NaN
    return T::from_bits(sm::next_after_16bit(x.bits, fx, y.bits, fy));
  }
}

template <typename T>
void floating(SpecialOp op, Tensor& out, const Tensor& a, const Tensor& b, Scalar p0) {
  using C = compute_t<T>;
  const char* name = "special_function";
  if (op == SpecialOp::kNextafter) {
    StridedIter<3> it({&out, &a, &b}, name);
    it.run({pw::bytes<T>(out), pw::bytes<T>(a), pw::bytes<T>(b)},
           [](char* const* p, const int64_t* s, int64_t n) {
             for (int64_t i = 0; i < n; ++i) {
               at<T>(p[0], s[0], i) =
                   next_after<T>(at<const T>(p[1], s[1], i), at<const T>(p[2], s[2], i));
             }
           });
    return;
  }
  if (op == SpecialOp::kPolygamma) {
    const int64_t order = p0.to<int64_t>();
    pw::map1<T, T>(out, a, [order](C x) {
      return static_cast<C>(sm::polygamma(order, static_cast<double>(x)));
    }, name);
    return;
  }
  if (const Unary f = unary_fn(op)) {
    pw::map1<T, T>(out, a, [f](C x) { return static_cast<C>(f(static_cast<double>(x))); }, name);
    return;
  }
  const Binary f = binary_fn(op);
  TESSERA_CHECK(f != nullptr, ValueError, "special_function: unknown op ",
                static_cast<int>(op));
  pw::map2<T, T>(out, a, b, [f](C x, C y) {
    return static_cast<C>(f(static_cast<double>(x), static_cast<double>(y)));
  }, name);
}

void special_function_kernel(const KernelContext&, SpecialOp op, Tensor& out, const Tensor& a,
                             const Tensor& b, Scalar p0) {
  if (out.numel() == 0) return;
  if (op == SpecialOp::kSignbit) {
    TESSERA_CHECK(out.dtype() == DType::kBool, TypeError,
                  "signbit: the cpu kernel needs a bool out, got ", describe(out));
    dispatch_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      pw::map1<bool, T>(out, a, [](compute_t<T> x) {
        if constexpr (std::is_same_v<T, bool>) {
          return false;
        } else {
          return std::signbit(static_cast<double>(x));
        }
      }, "signbit");
    });
    return;
  }
  TESSERA_CHECK(is_floating(out.dtype()) && a.dtype() == out.dtype() &&
                    (!b.defined() || b.dtype() == out.dtype()),
                TypeError, "special_function: the cpu kernel needs floating inputs of out's "
                "dtype, got out ", describe(out), ", a ", describe(a));
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) floating<T>(op, out, a, b, p0);
  });
}

}  // namespace

void register_special_function_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::SpecialFunction>(type, &special_function_kernel);
}

}  // namespace tessera::cpu
