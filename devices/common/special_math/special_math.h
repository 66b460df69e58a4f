// Scalar special functions in double precision, for the SpecialFunction
// kernels of every device that has one: compiled as host C++ (the CPU
// device) and as CUDA device code (the CUDA device) from this one source.
//
// Each function returns what PyTorch's CPU kernel returns for a float64
// input (torch.special.* / torch.*) to ~1e-12 relative where the function
// is well conditioned, edge cases included: NaN in gives NaN out unless
// noted, and the values at +-inf, +-0, poles and outside the domain are
// PyTorch's, found by running it (torch 2.13). Where PyTorch's own kernel is
// inaccurate (noted below, checked against mpmath) these return the accurate
// value instead. The implementations are our own (series, continued
// fractions, asymptotic expansions, quadrature and recurrences from the
// literature); they are thread-safe (no state), and every call finishes in a
// bounded number of steps whatever its arguments.
//
// Header-only: the functions are inline and their definitions follow the
// declarations (the *_impl.h headers included at the end), because CUDA
// device code calls only what its own translation unit defines (the CUDA
// build has no relocatable device code). On the device they use CUDA's
// math library where the host uses the C library (erfc, exp, log, sin,
// ...: the two may differ by an ulp or so), and CUDA's lgamma where the
// host uses lgamma_r; everything else is the same arithmetic.
#pragma once

#include <cstdint>

#include "devices/common/special_math/host_device.h"

namespace tessera::special_math {

// --- Elementary: the C library's functions and PyTorch's one-liners, here
// so that every device evaluates them alike ---------------------------------
TESSERA_HOST_DEVICE inline double erfc(double x);
TESSERA_HOST_DEVICE inline double exp2(double x);
// frac: x - trunc(x) (-0 for negative integers, NaN at +-inf).
TESSERA_HOST_DEVICE inline double frac(double x);
TESSERA_HOST_DEVICE inline double hypot(double a, double b);
TESSERA_HOST_DEVICE inline double copysign(double a, double b);
// fmax, fmin: the non-NaN operand if one is NaN.
TESSERA_HOST_DEVICE inline double fmax(double a, double b);
TESSERA_HOST_DEVICE inline double fmin(double a, double b);
// heaviside: v where x == 0, else x > 0 (NaN x gives 0).
TESSERA_HOST_DEVICE inline double heaviside(double x, double v);
// entr: -x log x; 0 -> 0, x < 0 -> -inf.
TESSERA_HOST_DEVICE inline double entr(double x);
// xlog1py: x log1p(y), 0 where x == 0 (unless y is NaN).
TESSERA_HOST_DEVICE inline double xlog1py(double x, double y);
// sinc: sin(pi x) / (pi x), 1 at 0 (sinc(1) is 3.9e-17, not 0, as PyTorch).
TESSERA_HOST_DEVICE inline double sinc(double x);
// nextafter of a 16-bit float format (float16, bfloat16), on bit patterns:
// the neighbour of x (bits x_bits, value fx) towards y (bits y_bits, value
// fy). Neither may be NaN (the caller returns NaN first).
TESSERA_HOST_DEVICE inline uint16_t next_after_16bit(uint16_t x_bits, float fx, uint16_t y_bits,
                                                     float fy);

// --- Error function family -------------------------------------------------
// erfinv: inverse of erf; +-1 -> +-inf, |x| > 1 -> NaN, -0 -> -0.
TESSERA_HOST_DEVICE inline double erfinv(double x);
// ndtri: inverse of the standard normal CDF; 0 -> -inf (also -0), 1 -> inf,
// outside [0, 1] -> NaN.
TESSERA_HOST_DEVICE inline double ndtri(double p);
// log_ndtr: log of the standard normal CDF; accurate in both tails
// (-inf -> -inf, +inf -> -0).
TESSERA_HOST_DEVICE inline double log_ndtr(double x);
// erfcx: exp(x^2) erfc(x); +inf -> 0, below about -26.6 -> inf.
TESSERA_HOST_DEVICE inline double erfcx(double x);

// --- Gamma function family -------------------------------------------------
// lgamma: log |Gamma(x)| (on the host the C library's thread-safe variant,
// on the device CUDA's); poles and -inf -> inf.
TESSERA_HOST_DEVICE inline double lgamma(double x);
// digamma: psi(x) = Gamma'(x) / Gamma(x); 0 -> -inf, -0 -> +inf, negative
// integers and -inf -> NaN (as PyTorch).
TESSERA_HOST_DEVICE inline double digamma(double x);
// polygamma: psi^(n)(x) for n >= 0 (NaN for n < 0). n = 1 reproduces
// PyTorch's trigamma, whose truncated asymptotic series limits it to about
// 5e-10 relative accuracy; n >= 2 is (-1)^(n+1) exp(lgamma(n+1)) zeta(n+1, x)
// as in PyTorch, so overflow gives inf, and inf * 0 gives NaN, where it does.
TESSERA_HOST_DEVICE inline double polygamma(int64_t n, double x);
// zeta: Hurwitz zeta(s, q) = sum_k (q + k)^-s. s == 1 -> inf, s < 1 -> NaN;
// q a non-positive integer -> inf; q < 0 with non-integer s -> NaN, with
// integer s the sum continued past the poles (PyTorch's semantics). For
// q < -1 and larger s PyTorch's term-by-term sum loses every digit to the
// terms around the poles (polygamma(10, -14.5) is off by a factor of 5); this
// one pairs them analytically and is accurate where the value is well
// conditioned. PyTorch's oddities kept: zeta(inf, q > 1) and zeta(s, inf) are
// NaN, and so is zeta(s > ~2.5e13, q > 1).
TESSERA_HOST_DEVICE inline double zeta(double s, double q);

// --- Incomplete gamma ------------------------------------------------------
// igamma / igammac: regularized lower / upper incomplete gamma P(a, x),
// Q(a, x). a or x negative -> NaN; a == 0 -> P = 1 for x > 0 (NaN at x == 0);
// x == 0 -> P = 0; a == inf -> P = 0 (NaN if x is inf too); x == inf -> P = 1.
// Accurate (about 1e-13, less only as the problem's conditioning demands)
// for all a, x; PyTorch itself is off by up to ~2e-9 relative for a > 20
// within 30% of x == a, its igammac by up to a factor of 3 for a < 1e-5 and
// x <= 1.1, and its igamma is 0 for subnormal a: there these differ from it.
TESSERA_HOST_DEVICE inline double igamma(double a, double x);
TESSERA_HOST_DEVICE inline double igammac(double a, double x);

// --- Modified Bessel functions -----------------------------------------------
// i0, i1 (= modified_bessel_i0/i1): +-inf -> NaN as PyTorch, overflow -> inf.
// i0e, i1e: exp(-|x|) I_n(x); i0e(+-inf) = 0, i1e(+-inf) = +-0. I1 and I1e
// of -0 are +0, as PyTorch.
TESSERA_HOST_DEVICE inline double i0(double x);
TESSERA_HOST_DEVICE inline double i0e(double x);
TESSERA_HOST_DEVICE inline double i1(double x);
TESSERA_HOST_DEVICE inline double i1e(double x);
TESSERA_HOST_DEVICE inline double modified_bessel_i0(double x);
TESSERA_HOST_DEVICE inline double modified_bessel_i1(double x);
// K0, K1 and exp(x) K0, exp(x) K1: x < 0 -> NaN, 0 -> inf, inf -> 0.
TESSERA_HOST_DEVICE inline double modified_bessel_k0(double x);
TESSERA_HOST_DEVICE inline double modified_bessel_k1(double x);
TESSERA_HOST_DEVICE inline double scaled_modified_bessel_k0(double x);
TESSERA_HOST_DEVICE inline double scaled_modified_bessel_k1(double x);

// --- Bessel functions of the first and second kind -------------------------
// J0 (even), J1 (odd) for any x; Y0, Y1: x < 0 -> NaN, 0 -> -inf. +-inf ->
// NaN for all four, as PyTorch (its phase cos(x - pi/4) is NaN there). The
// phase x - pi/4 (3pi/4) is rounded as PyTorch rounds it, so that large x
// agree. PyTorch's rational approximations are off by up to ~1e-6 absolute
// for 2 < |x| < 20; these are exact to ~2e-15 of sqrt(2 / (pi |x|)) there.
TESSERA_HOST_DEVICE inline double bessel_j0(double x);
TESSERA_HOST_DEVICE inline double bessel_j1(double x);
TESSERA_HOST_DEVICE inline double bessel_y0(double x);
TESSERA_HOST_DEVICE inline double bessel_y1(double x);
// spherical_bessel_j0: sin(x) / x; +-inf -> 0.
TESSERA_HOST_DEVICE inline double spherical_bessel_j0(double x);
// airy_ai: Ai(x); +-inf -> NaN and x > 103.892 -> 0 as PyTorch; NaN where
// x is so negative that (2/3)|x|^(3/2) overflows. PyTorch is off by up to
// ~3e-6 absolute for -4.8 < x < -2.1; this is not.
TESSERA_HOST_DEVICE inline double airy_ai(double x);

// --- Orthogonal polynomials --------------------------------------------------
// n is converted as PyTorch does (truncated towards zero; NaN, +-inf and
// |n| >= 2^63 become a negative degree): degree < 0 -> 0, degree 0 -> 1 (even
// for NaN x). PyTorch's evaluation is reproduced step by step (special values
// at +-1, its trigonometric forms for |x| < 1, its fused three-term
// recurrence), so results are bitwise equal to PyTorch's (up to the degrees
// below); NaN x gives NaN for
// degree >= 1 (PyTorch returns uninitialized memory there). The recurrence
// runs for at most 2^20 steps (~5 ms, PyTorch's own time for such n);
// beyond, and above 2^16 for Legendre (and Laguerre where it converges
// well), closed forms and asymptotic expansions take over, accurate to
// ~1e-15 relative (or as conditioning allows) where PyTorch's recurrence has
// drifted (by up to 1e-9 for Legendre near +-1, 1e-6 for Laguerre near 0 at
// n = 1e6): huge n (PyTorch: up to 2^63 steps) take microseconds.
TESSERA_HOST_DEVICE inline double chebyshev_polynomial_t(double x, double n);
TESSERA_HOST_DEVICE inline double chebyshev_polynomial_u(double x, double n);
TESSERA_HOST_DEVICE inline double chebyshev_polynomial_v(double x, double n);
TESSERA_HOST_DEVICE inline double chebyshev_polynomial_w(double x, double n);
// The shifted polynomials are those of 2x - 1 (PyTorch evaluates x + x - 1).
TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_t(double x, double n);
TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_u(double x, double n);
TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_v(double x, double n);
TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_w(double x, double n);
// Hermite (physicists' H and probabilists' He): overflow leads to NaN, as in
// PyTorch's recurrence.
TESSERA_HOST_DEVICE inline double hermite_polynomial_h(double x, double n);
TESSERA_HOST_DEVICE inline double hermite_polynomial_he(double x, double n);
TESSERA_HOST_DEVICE inline double laguerre_polynomial_l(double x, double n);
TESSERA_HOST_DEVICE inline double legendre_polynomial_p(double x, double n);

}  // namespace tessera::special_math

// The definitions, one family per header (each is included here only).
#include "devices/common/special_math/elementary_impl.h"
#include "devices/common/special_math/error_impl.h"
#include "devices/common/special_math/gamma_impl.h"
#include "devices/common/special_math/incomplete_gamma_impl.h"
#include "devices/common/special_math/bessel_impl.h"
#include "devices/common/special_math/airy_impl.h"
#include "devices/common/special_math/polynomial_impl.h"
#include "devices/common/special_math/polynomial_asymptotic_impl.h"
