// The elementary members of special_math: entr, xlog1py, sinc. The other
// families live in special_math_<family>.cc.
#include "devices/cpu/kernels/special_math.h"

#include <cmath>

#include "devices/cpu/kernels/special_math_internal.h"

namespace tessera::cpu::special_math {

using detail::kInf;
using detail::kPi;

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -kInf;
}

double xlog1py(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0.0;
  return x * std::log1p(y);
}

double sinc(double x) {
  if (x == 0) return 1.0;
  // sin(pi x) / (pi x) as rounded: PyTorch's sinc(1) is 3.9e-17, not 0.
  const double product = kPi * x;
  return std::sin(product) / product;
}

}  // namespace tessera::cpu::special_math
