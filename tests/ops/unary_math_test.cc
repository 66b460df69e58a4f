// The float32 transcendental unary ops (exp, expm1, log, log1p, erf, sin,
// cos, silu, gelu (exact and with tanh), the gelu and silu gradients, and pow's
// integer-exponent shortcuts) against double-precision references,
// in ulps: the CPU device computes them on vector code of its own
// (devices/cpu/kernels/vec_math.h), so every region of each function is
// swept here, with denormals, infinities, NaN and signed zeros, through
// contiguous tensors (the vector path) and strided ones (staged rows).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Distance in units of the last place between two floats of one sign
// (both NaN: 0; a NaN and a number, or different infinities: huge).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return INT64_MAX;
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};  // monotone over all floats
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

// Arguments: a geometric sweep of both signs from the least denormal to
// FLT_MAX, a dense linear sweep of [-lin, lin], and the special values.
std::vector<float> sweep(float lin) {
  std::vector<float> v;
  for (double m = 1.4e-45; m < 3.4e38; m *= 1.37) {
    v.push_back(static_cast<float>(m));
    v.push_back(static_cast<float>(-m));
  }
  for (int i = -4000; i <= 4000; ++i) v.push_back(lin * static_cast<float>(i) / 4000.0f);
  for (float s : {0.0f, -0.0f, kInf, -kInf, kNaN, 1.0f, -1.0f, 0.5f, -0.5f}) v.push_back(s);
  return v;
}

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  int64_t max_ulps;
  double abs_tol;  // passes too when |actual - exact| is below this (results near 0)
  bool zero_sign = true;  // a zero result must carry the reference's sign
};

// Runs op on x (contiguous, then as every other element of a wider
// tensor) and compares each result with the reference rounded to float.
void check(const Case& c, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<double> xd(x.begin(), x.end());
  Tensor contiguous = make_tensor(xd, {n});
  std::vector<double> wide(2 * n, 0.0);
  for (int64_t i = 0; i < n; ++i) wide[2 * i] = xd[i];
  Tensor strided = make_tensor(wide, {n, 2}).select(1, 0);
  for (const Tensor& in : {contiguous, strided}) {
    const std::vector<double> got = to_doubles(c.op(in));
    int failures = 0;
    std::string report;
    for (int64_t i = 0; i < n; ++i) {
      const double exact = c.reference(static_cast<double>(x[i]));
      const float expected = static_cast<float>(exact);
      const float actual = static_cast<float>(got[i]);
      const bool ok = ulps(actual, expected) <= c.max_ulps ||
                      (std::isfinite(exact) && std::fabs(actual - exact) <= c.abs_tol);
      const bool sign_ok = !c.zero_sign || !(expected == 0.0f && actual == 0.0f) ||
                           std::signbit(expected) == std::signbit(actual);
      if ((!ok || !sign_ok) && ++failures <= 5) {
        report += std::string(c.name) + "(" + std::to_string(x[i]) + ") = " +
                  std::to_string(actual) + ", expected " + std::to_string(expected) + " (" +
                  std::to_string(ulps(actual, expected)) + " ulp)\n";
      }
    }
    INFO(report);
    CHECK(failures == 0);
  }
}

double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh_ref(double x) {
  const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(u));
}

}  // namespace

TEST_CASE("unary math: exp, log and erf of float32 within 2 ulp over their range") {
  check({"exp", [](const Tensor& t) { return tessera::exp(t); },
         [](double x) { return std::exp(x); }, 2, 0.0},
        sweep(110.0f));
  check({"log", [](const Tensor& t) { return tessera::log(t); },
         [](double x) { return std::log(x); }, 2, 0.0},
        sweep(4.0f));
  check({"erf", [](const Tensor& t) { return tessera::erf(t); },
         [](double x) { return std::erf(x); }, 2, 0.0},
        sweep(6.0f));
}

TEST_CASE("unary math: expm1 and log1p of float32 within 2 ulp, small arguments included") {
  check({"expm1", [](const Tensor& t) { return tessera::expm1(t); },
         [](double x) { return std::expm1(x); }, 2, 0.0},
        sweep(2.0f));
  check({"log1p", [](const Tensor& t) { return tessera::log1p(t); },
         [](double x) { return std::log1p(x); }, 2, 0.0},
        sweep(1.5f));
}

TEST_CASE("unary math: sin and cos of float32 within 2 ulp, large arguments included") {
  // The sweep reaches past 8192 (the vector reduction's limit) to FLT_MAX.
  check({"sin", [](const Tensor& t) { return tessera::sin(t); },
         [](double x) { return std::sin(x); }, 2, 0.0},
        sweep(40.0f));
  check({"cos", [](const Tensor& t) { return tessera::cos(t); },
         [](double x) { return std::cos(x); }, 2, 0.0},
        sweep(40.0f));
  // Near the reduction's limit, where k pi/2 must stay exact.
  std::vector<float> near_limit;
  for (int i = 0; i < 4000; ++i) near_limit.push_back(8192.0f - 0.0123f * static_cast<float>(i));
  check({"sin", [](const Tensor& t) { return tessera::sin(t); },
         [](double x) { return std::sin(x); }, 2, 0.0},
        near_limit);
}

TEST_CASE("unary math: silu and tanh-approximated gelu of float32") {
  // Relative to the value, except where the exact value is so small that
  // float's own rounding of the intermediate terms dominates.
  check({"silu", [](const Tensor& t) { return tessera::silu(t); }, silu_ref, 4, 1e-30},
        sweep(100.0f));
  check({"gelu(tanh)", [](const Tensor& t) { return tessera::gelu(t, "tanh"); }, gelu_tanh_ref,
         4, 1e-6},
        sweep(12.0f));
}

TEST_CASE("unary math: exact (erf) gelu of float32") {
  // As vec_activation.h's gelu_v promises: within 8 ulp (5e-7 relative)
  // for x >= 0, within 4e-7 of the exact value for x < 0 (where the
  // rounding of x^2 / 2 in e^(-x^2 / 2) costs a few ulp per unit of x^2 /
  // 2, yet erfc is never 1 - erf, so the tail keeps its magnitude), -0
  // where the result underflows.
  check({"gelu", [](const Tensor& t) { return tessera::gelu(t); },
         [](double x) { return 0.5 * x * std::erfc(-x * 0.70710678118654752440); }, 8, 4e-7},
        sweep(12.0f));
}

TEST_CASE("unary math: the gelu and silu gradients of float32") {
  // With a gradient of ones, the derivative itself; within a few ulp, or
  // 1e-6 absolute where the derivative nears 0 and float's rounding of
  // the terms dominates (and there the sign of a zero means nothing).
  // The tanh form cubes x: past |x| = 1e12 float overflows to inf * 0 =
  // NaN, as in PyTorch's kernel, so the sweep stops there for it.
  std::vector<float> moderate;
  for (float v : sweep(12.0f)) {
    if (!(std::fabs(v) > 1e12f)) moderate.push_back(v);
  }
  auto with_ones = [](auto gradient) {
    return [gradient](const Tensor& x) { return gradient(ones_like(x), x); };
  };
  const double inv_sqrt2 = 0.70710678118654752440, inv_sqrt_2pi = 0.39894228040143267794;
  check({"gelu_backward",
         with_ones([](const Tensor& g, const Tensor& x) { return gelu_backward(g, x); }),
         [&](double x) {
           return 0.5 * std::erfc(-x * inv_sqrt2) + x * inv_sqrt_2pi * std::exp(-0.5 * x * x);
         },
         4, 1e-6, false},
        sweep(12.0f));
  check({"gelu_backward(tanh)",
         with_ones([](const Tensor& g, const Tensor& x) { return gelu_backward(g, x, "tanh"); }),
         [](double x) {
           const double k = 0.79788456080286535588, t = std::tanh(k * (x + 0.044715 * x * x * x));
           return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
         },
         4, 2e-6, false},  // 1 - tanh^2 is 0 in float from |u| = 9 on
        moderate);
  check({"silu_backward",
         with_ones([](const Tensor& g, const Tensor& x) { return silu_backward(g, x); }),
         [](double x) {
           const double s = 1.0 / (1.0 + std::exp(-x));
           return s * (1.0 + x * (1.0 - s));
         },
         4, 1e-6, false},
        sweep(100.0f));
}

TEST_CASE("unary math: pow's exponents 1, 2, 3, -1 and -2 give IEEE pow's values") {
  const std::vector<float> x = sweep(8.0f);
  for (double e : {1.0, 2.0, -1.0, -2.0, 0.5, 3.0}) {
    // pow(x, -2) is (1 / x)^2 and pow(x, 3) is (x x) x: two roundings.
    check({"pow", [e](const Tensor& t) { return tessera::pow(t, e); },
           [e](double v) { return std::pow(v, e); }, e == -2.0 || e == 3.0 ? 2 : 1, 0.0},
          x);
  }
  // x^3 keeps the sign of zero and of infinity.
  CHECK(to_doubles(tessera::pow(make_tensor({-0.0, -INFINITY, 2.0}, {3}), 3.0)) ==
        std::vector<double>{-0.0, -INFINITY, 8.0});
  CHECK(std::signbit(to_doubles(tessera::pow(make_tensor({-0.0}, {1}), 3.0))[0]));
  // In place: the result overwrites the operand it reads.
  Tensor t = make_tensor({3.0, -2.0, 0.5}, {3});
  tessera::pow_(t, 2.0);
  CHECK(to_doubles(t) == std::vector<double>{9.0, 4.0, 0.25});
  tessera::pow_(t, -2.0);
  CHECK(to_doubles(t) == std::vector<double>{1.0f / 81.0f, 1.0 / 16.0, 16.0});
  tessera::pow_(t, 1.0);
  CHECK(to_doubles(t) == std::vector<double>{1.0f / 81.0f, 1.0 / 16.0, 16.0});
  Tensor c = make_tensor({3.0, -2.0, 0.5}, {3});
  tessera::pow_(c, 3.0);
  CHECK(to_doubles(c) == std::vector<double>{27.0, -8.0, 0.125});
  // x^1 of an integer tensor with a float exponent: the float result.
  CHECK(to_doubles(tessera::pow(make_tensor({3.0, -2.0}, {2}, DType::kI32), 1.0)) ==
        std::vector<double>{3.0, -2.0});
  // Integer tensors keep the integer kernel (and its checks).
  Tensor i = make_tensor({3.0, -2.0}, {2}, DType::kI64);
  CHECK(to_doubles(tessera::pow(i, 2)) == std::vector<double>{9.0, 4.0});
}
