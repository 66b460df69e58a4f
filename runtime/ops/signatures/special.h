// Kernel signature: the special functions of torch.special and the
// elementwise math PyTorch ships beside them (erfinv, digamma, Bessel
// functions, orthogonal polynomials, hypot, nextafter...). See
// kernel_signatures.h for the conventions.
//
// One kernel covers the family, switching on SpecialOp. It is optional: a
// device without it runs these ops through the runtime's CPU fallback
// (host copies, the host kernel), which suits functions that models call
// rarely and whose series and continued fractions a GPU gains little on.
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::kernels {

enum class SpecialOp : uint8_t {
  // Unary, out = f(a); floating out of a's dtype.
  kErfc, kErfinv, kExp2, kFrac, kSinc, kDigamma, kLgamma, kI0, kI0e, kI1, kI1e, kNdtri,
  kLogNdtr, kErfcx, kEntr, kAiryAi, kBesselJ0, kBesselJ1, kBesselY0, kBesselY1,
  kModifiedBesselI0, kModifiedBesselI1, kModifiedBesselK0, kModifiedBesselK1,
  kScaledModifiedBesselK0, kScaledModifiedBesselK1, kSphericalBesselJ0,
  kPolygamma,  // polygamma(p0, a): p0 is the order n >= 0
  kSignbit,    // bool out, a of any dtype
  // Binary, out = f(a, b); a, b and out of one floating dtype.
  kZeta,  // Hurwitz zeta(a, b)
  kIgamma, kIgammac, kXlog1py, kHypot, kCopysign,
  kNextafter,  // in the dtype's own precision
  kFmax, kFmin,  // NaN-ignoring max/min
  kHeaviside,
  // Orthogonal polynomials f(x = a, n = b); n is truncated to an integer.
  kChebyshevT, kChebyshevU, kChebyshevV, kChebyshevW, kShiftedChebyshevT,
  kShiftedChebyshevU, kShiftedChebyshevV, kShiftedChebyshevW, kHermiteH, kHermiteHe,
  kLaguerreL, kLegendreP,
};

constexpr bool is_binary(SpecialOp op) { return op >= SpecialOp::kZeta; }

// out = op(a) or op(a, b) elementwise (b undefined for the unary ops);
// inputs have out's sizes (expanded) and dtype, except signbit's a.
struct SpecialFunction {
  static constexpr const char* name = "special_function";
  static constexpr bool optional = true;  // host-staged on devices without it
  using Fn = void (*)(const KernelContext&, SpecialOp op, Tensor& out, const Tensor& a,
                      const Tensor& b, Scalar p0);
};

}  // namespace tessera::kernels
