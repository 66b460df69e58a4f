// The elementary members of special_math: the C library's functions the
// kernels apply as they are, PyTorch's one-liners (frac, heaviside), entr,
// xlog1py, sinc and the 16-bit nextafter. Included by special_math.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {

TESSERA_HOST_DEVICE inline double erfc(double x) { return std::erfc(x); }
TESSERA_HOST_DEVICE inline double exp2(double x) { return std::exp2(x); }
TESSERA_HOST_DEVICE inline double frac(double x) { return x - std::trunc(x); }
TESSERA_HOST_DEVICE inline double hypot(double a, double b) { return std::hypot(a, b); }
TESSERA_HOST_DEVICE inline double copysign(double a, double b) { return std::copysign(a, b); }
TESSERA_HOST_DEVICE inline double fmax(double a, double b) { return std::fmax(a, b); }
TESSERA_HOST_DEVICE inline double fmin(double a, double b) { return std::fmin(a, b); }
TESSERA_HOST_DEVICE inline double heaviside(double x, double v) {
  return x == 0 ? v : static_cast<double>(x > 0);
}

TESSERA_HOST_DEVICE inline double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -detail::kInf;
}

TESSERA_HOST_DEVICE inline double xlog1py(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0.0;
  return x * std::log1p(y);
}

TESSERA_HOST_DEVICE inline double sinc(double x) {
  if (x == 0) return 1.0;
  // sin(pi x) / (pi x) as rounded: PyTorch's sinc(1) is 3.9e-17, not 0.
  const double product = detail::kPi * x;
  return std::sin(product) / product;
}

// Sign and magnitude formats: the neighbour away from zero is the next bit
// pattern, the one towards zero the previous; from +-0 the least subnormal
// of y's sign.
TESSERA_HOST_DEVICE inline uint16_t next_after_16bit(uint16_t x_bits, float fx, uint16_t y_bits,
                                                     float fy) {
  if (fx == fy) return y_bits;
  if (fx == 0) return static_cast<uint16_t>((fy < 0 ? 0x8000u : 0u) | 1u);
  const bool away_from_zero = (fy > fx) == (fx > 0);
  return static_cast<uint16_t>(x_bits + (away_from_zero ? 1 : -1));
}

}  // namespace tessera::special_math
