// Large-degree Laguerre and Legendre polynomials, for special_math_
// polynomial.cc: asymptotic expansions used where PyTorch's recurrence
// would run for more steps than we allow.
#pragma once

#include <cstdint>

namespace tessera::cpu::special_math::detail {

// Degrees above this use legendre_large_degree instead of the recurrence,
// and laguerre_large_degree where laguerre_expansion_applies.
inline constexpr int64_t kLargeDegree = int64_t{1} << 16;

// Whether laguerre_large_degree is accurate for this x, n > kLargeDegree:
// always for n > 2^20, else for x below ~17 (n + 1/2)^(1/3).
bool laguerre_expansion_applies(double x, int64_t n);
// L_n(x) for n > kLargeDegree and x != 0.
double laguerre_large_degree(double x, int64_t n);
// P_n(x) for n > kLargeDegree and |x| != 1.
double legendre_large_degree(double x, int64_t n);

}  // namespace tessera::cpu::special_math::detail
