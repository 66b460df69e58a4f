// Special functions at their edges and in their far ranges (NaN, +-inf,
// +-0, poles, huge arguments and degrees, each algorithm's branches) against
// the scalar functions of devices/common/special_math evaluated on the
// host. special_cases.cc checks the values against independent references
// over moderate ranges; these check that a device evaluates the same
// functions everywhere else: the CPU device runs the host build, the CUDA
// device the same source compiled for the GPU, whose math library (exp,
// log, sin, lgamma, ...) differs from the host's by ulps. Points are chosen
// away from zeros of the functions and from overflow thresholds, so that
// such ulps stay far inside the float64 tolerance (1e-9 relative, with no
// absolute floor: tiny values such as Legendre polynomials of degree 1e18
// are compared too).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "devices/common/special_math/special_math.h"
#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

using kernels::SpecialOp;
namespace sm = ::tessera::special_math;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kTiny = std::numeric_limits<double>::denorm_min();

using Points = std::vector<double>;
using Pairs = std::vector<std::pair<double, double>>;

// A host tensor of the values, in dtype.
Tensor host_tensor(const Points& values, DType dtype) {
  Tensor t = empty({static_cast<int64_t>(values.size())},
                   TensorOptions(DType::kF64, host_device()));
  for (size_t i = 0; i < values.size(); ++i) t.data<double>()[i] = values[i];
  return t.to(dtype);
}

Tolerance edge_tolerance(DType dtype, const Sample&) {
  if (dtype == DType::kF64) return {1e-9, 0.0};
  return default_tolerance(dtype);
}

OpCase edge_case(std::function<std::vector<Sample>(DType)> samples,
                 std::function<Tensor(const std::vector<Tensor>&, const Sample&)> run,
                 std::function<double(const std::vector<double>&, const Sample&)> f) {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64};
  c.samples = std::move(samples);
  c.run = [run](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{run(in, s)};
  };
  c.reference = [f](const Sample& s) {
    return std::vector<Expected>{map_reference(
        s.inputs, s.inputs[0].dtype(), [&](const std::vector<double>& v) { return f(v, s); })};
  };
  c.tolerance = edge_tolerance;
  return c;
}

// op(x) at the points and at NaN, +-inf, +-0.
OpCase edge_unary(SpecialOp op, double (*f)(double), Points points) {
  points.insert(points.end(), {kNaN, kInf, -kInf, 0.0, -0.0});
  return edge_case(
      [points](DType t) {
        return std::vector<Sample>{sample_of("edges", {host_tensor(points, t)})};
      },
      [op](const std::vector<Tensor>& in, const Sample&) { return special_function(op, in[0]); },
      [f](const std::vector<double>& v, const Sample&) { return f(v[0]); });
}

// op(a, b) at the pairs (a, b); f(a, b, the sample) is the reference.
OpCase edge_pairs(SpecialOp op, const Pairs& pairs,
                  std::function<double(const std::vector<double>&, const Sample&)> f) {
  Points a, b;
  for (const auto& [x, y] : pairs) {
    a.push_back(x);
    b.push_back(y);
  }
  return edge_case(
      [a, b](DType t) {
        return std::vector<Sample>{sample_of("edges", {host_tensor(a, t), host_tensor(b, t)})};
      },
      [op](const std::vector<Tensor>& in, const Sample&) {
        return special_function(op, in[0], in[1]);
      },
      std::move(f));
}

OpCase edge_binary(SpecialOp op, double (*f)(double, double), const Pairs& pairs) {
  return edge_pairs(op, pairs, [f](const std::vector<double>& v, const Sample&) {
    return f(v[0], v[1]);
  });
}

// I0, I1 and their scaled forms: the series up to 20, the asymptotic
// series beyond, overflow.
const Points kModifiedBesselIPoints = {-800, -30, -5, 1e-300, 0.7, 15, 20, 25, 700};
// K0, K1 and their scaled forms: the series up to 1, the integral beyond,
// underflow; 5e-324 makes log(x / 2) -inf.
const Points kModifiedBesselKPoints = {-1, kTiny, 1e-300, 0.5, 1, 1.0001, 30, 700, 800};
// J0, J1: the series up to 5, Hankel's integral beyond (its phase rounded).
const Points kBesselJPoints = {-1e15, -30, -5, 1e-300, 2.5, 5.0001, 30, 1e6};
const Points kBesselYPoints = {-1, 1e-300, 0.1, 4.9, 5.1, 100, 1e15};

// (x, n) for the Chebyshev polynomials on [-1, 1]: degrees below 0, the
// special values at +-1, the trigonometric forms, the recurrence inside and
// outside [-1, 1], the closed forms past 2^20 steps, and the degrees that
// NaN, inf and values past 2^63 become.
const Pairs kChebyshevPairs = {
    {0.3, -1},   {kNaN, 0},       {kNaN, 3},    {1, 7},      {-1, 7},
    {-1, 8},     {0.3, 2.9},      {0.3, 7},     {0.3, 9},    {0.3, 1000},
    {0.999, 1000}, {1.5, 30},     {-1.5, 31},   {1.5, 1e6},  {1 + 1e-12, 1048577},
    {-1.25, 1048578}, {0.6, kInf}, {0.6, 1e19}, {-0.8, 2},
};
// The same for the shifted polynomials, on [0, 1].
const Pairs kShiftedChebyshevPairs = {
    {0.6, -1}, {kNaN, 0}, {kNaN, 2},   {0, 5},         {1, 5},
    {0, 6},    {0.7, 5},  {0.7, 9},    {0.7, 1000},    {0.9, 9},
    {2, 40},   {-0.2, 31}, {1 + 5e-13, 1048577}, {0.6, kInf},
};
const Pairs kHermitePairs = {
    {0.5, -1}, {kNaN, 0}, {kNaN, 2}, {-1.5, 7}, {0.5, 10}, {3, 30}, {1e10, 40}, {2, 500},
    {0.5, 2e6},
};
// Laguerre: the recurrence, and past 2^16 Tricomi's expansion with each way
// of computing its Bessel functions (series, Miller's backward recurrence,
// forward recurrence; I_s for x < 0) or its overflow.
const Pairs kLaguerrePairs = {
    {2, -1},  {kNaN, 0},   {kNaN, 3},    {0, 50},     {2, 1},      {0.5, 10},
    {-3, 40}, {1e-7, 7e4}, {1e-3, 7e4},  {5, 1e5},    {100, 7e4},  {0.5, 3e6},
    {-1e-6, 1e5}, {-2, 1e5}, {1000, 7e4},
};
// Legendre: the recurrence, and past 2^16 Stieltjes' series (its phase in
// double-double up to degree 1e18), the Bessel-type expansions near and
// beyond +-1, and the overflow.
const Pairs kLegendrePairs = {
    {0.3, -2},    {kNaN, 0},  {kNaN, 3},      {1, 7},             {-1, 7},
    {0.5, 100},   {2, 40},    {0, 100001},    {0.3, 1e5},         {0.99999999, 1e5},
    {1.000000001, 1e5},       {1.0001, 1e5},  {0.3, 1e18},        {-0.7, 12345678901},
};
// (a, x) through every region of the incomplete gamma functions.
const Pairs kIncompleteGammaPairs = {
    {-1, 1},   {0, 0},      {0, 1},       {1, 0},     {kInf, 1},   {kInf, kInf},
    {1, kInf}, {kNaN, 1},   {1, kNaN},    {1e-10, 0.5}, {0.5, 1.4}, {0.5, 1.5},
    {1.5, 1.5}, {3, 1.2},   {25, 24},     {100, 125}, {1e4, 1.01e4}, {7.5, 30},
    {1e-3, 50}, {50, 10},
};

}  // namespace

// Each takes the points (or pairs) as one argument: a name or (Points{...}).
#define EDGE_UNARY(label, op, fn, points)                         \
  TESSERA_CONFORMANCE_OP("special edges " label) {                \
    return edge_unary(SpecialOp::op, &sm::fn, points);            \
  }
#define EDGE_BINARY(label, op, fn, pairs)                         \
  TESSERA_CONFORMANCE_OP("special edges " label) {                \
    return edge_binary(SpecialOp::op, &sm::fn, pairs);            \
  }

EDGE_UNARY("erfc", kErfc, erfc, (Points{-30, -6, -0.5, 0.3, 5, 20, 30}))
EDGE_UNARY("erfinv", kErfinv, erfinv,
           (Points{-1, -0.999999, -0.5, 1e-10, 0.3, 0.9999999999, 1, 1.5}))
EDGE_UNARY("exp2", kExp2, exp2, (Points{-1000, -3.3, 0.5, 1023.5, 1100}))
EDGE_UNARY("frac", kFrac, frac, (Points{-5.5, 1e300, 2.75, -1e-300, 0.1}))
EDGE_UNARY("sinc", kSinc, sinc, (Points{1, -2, 0.5, 1e-8, 1e10 + 0.5, 3.3}))
EDGE_UNARY("digamma", kDigamma, digamma,
           (Points{-2, -1.5, -1e-10, 1e-10, 0.5, 3, 1e6, 1e300}))
// Not between -11 and -2.26, where CUDA's lgamma is less accurate near the
// zeros of lgamma.
EDGE_UNARY("lgamma", kLgamma, lgamma,
           (Points{-1, -1.5, -20.5, 1e-300, 0.5, 1, 2, 3.7, 1e5, 1e305}))
EDGE_UNARY("i0", kI0, i0, kModifiedBesselIPoints)
EDGE_UNARY("i0e", kI0e, i0e, kModifiedBesselIPoints)
EDGE_UNARY("i1", kI1, i1, kModifiedBesselIPoints)
EDGE_UNARY("i1e", kI1e, i1e, kModifiedBesselIPoints)
EDGE_UNARY("ndtri", kNdtri, ndtri,
           (Points{-0.1, 1e-300, 1e-10, 0.02, 0.25, 0.5, 0.75, 0.9999, 1, 1.2}))
EDGE_UNARY("log_ndtr", kLogNdtr, log_ndtr, (Points{-1e10, -40, -2, -1, 3, 40}))
EDGE_UNARY("erfcx", kErfcx, erfcx, (Points{-30, -26, -5, 0.5, 11.9, 12, 1e5, 1e300}))
EDGE_UNARY("entr", kEntr, entr, (Points{-1, 1e-300, 0.5, 1, 1e300}))
EDGE_UNARY("airy_ai", kAiryAi, airy_ai,
           (Points{-1e10, -200, -10.5, -10, -5, -2, 0.5, 1, 1.5, 5, 50, 103, 104}))
EDGE_UNARY("bessel_j0", kBesselJ0, bessel_j0, kBesselJPoints)
EDGE_UNARY("bessel_j1", kBesselJ1, bessel_j1, kBesselJPoints)
EDGE_UNARY("bessel_y0", kBesselY0, bessel_y0, kBesselYPoints)
EDGE_UNARY("bessel_y1", kBesselY1, bessel_y1, kBesselYPoints)
EDGE_UNARY("modified_bessel_i0", kModifiedBesselI0, modified_bessel_i0, kModifiedBesselIPoints)
EDGE_UNARY("modified_bessel_i1", kModifiedBesselI1, modified_bessel_i1, kModifiedBesselIPoints)
EDGE_UNARY("modified_bessel_k0", kModifiedBesselK0, modified_bessel_k0, kModifiedBesselKPoints)
EDGE_UNARY("modified_bessel_k1", kModifiedBesselK1, modified_bessel_k1, kModifiedBesselKPoints)
EDGE_UNARY("scaled_modified_bessel_k0", kScaledModifiedBesselK0, scaled_modified_bessel_k0,
           kModifiedBesselKPoints)
EDGE_UNARY("scaled_modified_bessel_k1", kScaledModifiedBesselK1, scaled_modified_bessel_k1,
           kModifiedBesselKPoints)
EDGE_UNARY("spherical_bessel_j0", kSphericalBesselJ0, spherical_bessel_j0,
           (Points{-1e300, -3, 0.4, 1e-5, 7, 1e10}))

// polygamma(n, x) for several n (as the sample's scalar).
TESSERA_CONFORMANCE_OP("special edges polygamma") {
  const Points points = {-14.5, -2.5, -1, 1e-8, 0.5, 3, 1e4, kNaN, kInf, -kInf, 0.0, -0.0};
  return edge_case(
      [points](DType t) {
        std::vector<Sample> samples;
        for (int64_t n : {0, 1, 2, 5, 40}) {
          samples.push_back(sample_of("edges, n = " + std::to_string(n), {host_tensor(points, t)},
                                      {}, {Scalar(n)}));
        }
        return samples;
      },
      [](const std::vector<Tensor>& in, const Sample& s) {
        return polygamma(s.scalars[0].to<int64_t>(), in[0]);
      },
      [](const std::vector<double>& v, const Sample& s) {
        return sm::polygamma(s.scalars[0].to<int64_t>(), v[0]);
      });
}

EDGE_BINARY("zeta", kZeta, zeta,
            (Pairs{{1, 2}, {0.5, 2}, {2, -3}, {2.5, -1.5}, {3, -1.5}, {4, -14.5}, {2, 1e-5},
                   {30, 2}, {200, 1.5}, {1.5, 1e10}, {1e15, 2}, {kInf, 0.5}, {kInf, 1},
                   {kInf, 2}, {2, kInf}, {kNaN, 2}, {2, kNaN}}))
EDGE_BINARY("igamma", kIgamma, igamma, kIncompleteGammaPairs)
EDGE_BINARY("igammac", kIgammac, igammac, kIncompleteGammaPairs)
EDGE_BINARY("xlog1py", kXlog1py, xlog1py,
            (Pairs{{0, kNaN}, {0, -1}, {2, -1}, {3, 1e-10}, {-2, 1e300}, {1e-300, 5}, {kNaN, 0},
                   {1, kInf}}))
EDGE_BINARY("hypot", kHypot, hypot,
            (Pairs{{3, 4}, {1e300, 1e300}, {kInf, kNaN}, {-5, 12}, {kNaN, 1}, {1e-300, 0}}))
EDGE_BINARY("copysign", kCopysign, copysign,
            (Pairs{{1, -0.0}, {-2, 0}, {kNaN, -1}, {3, kNaN}, {kInf, -2}}))
EDGE_BINARY("fmax", kFmax, fmax,
            (Pairs{{kNaN, 1}, {1, kNaN}, {-0.0, 0}, {kInf, -kInf}, {2, 3}, {kNaN, kNaN}}))
EDGE_BINARY("fmin", kFmin, fmin,
            (Pairs{{kNaN, 1}, {1, kNaN}, {-0.0, 0}, {kInf, -kInf}, {2, 3}, {kNaN, kNaN}}))
EDGE_BINARY("heaviside", kHeaviside, heaviside,
            (Pairs{{0, 0.5}, {-0.0, 2}, {kNaN, 1}, {-kInf, 3}, {1e-300, 7}, {0, kNaN}}))
EDGE_BINARY("chebyshev_t", kChebyshevT, chebyshev_polynomial_t, kChebyshevPairs)
EDGE_BINARY("chebyshev_u", kChebyshevU, chebyshev_polynomial_u, kChebyshevPairs)
EDGE_BINARY("chebyshev_v", kChebyshevV, chebyshev_polynomial_v, kChebyshevPairs)
EDGE_BINARY("chebyshev_w", kChebyshevW, chebyshev_polynomial_w, kChebyshevPairs)
EDGE_BINARY("shifted_chebyshev_t", kShiftedChebyshevT, shifted_chebyshev_polynomial_t,
            kShiftedChebyshevPairs)
EDGE_BINARY("shifted_chebyshev_u", kShiftedChebyshevU, shifted_chebyshev_polynomial_u,
            kShiftedChebyshevPairs)
EDGE_BINARY("shifted_chebyshev_v", kShiftedChebyshevV, shifted_chebyshev_polynomial_v,
            kShiftedChebyshevPairs)
EDGE_BINARY("shifted_chebyshev_w", kShiftedChebyshevW, shifted_chebyshev_polynomial_w,
            kShiftedChebyshevPairs)
EDGE_BINARY("hermite_h", kHermiteH, hermite_polynomial_h, kHermitePairs)
EDGE_BINARY("hermite_he", kHermiteHe, hermite_polynomial_he, kHermitePairs)
EDGE_BINARY("laguerre_l", kLaguerreL, laguerre_polynomial_l, kLaguerrePairs)
EDGE_BINARY("legendre_p", kLegendreP, legendre_polynomial_p, kLegendrePairs)

#undef EDGE_UNARY
#undef EDGE_BINARY

// nextafter, exactly: C's nextafter in the dtype's precision.
TESSERA_CONFORMANCE_OP("special edges nextafter") {
  const Pairs pairs = {{0, 1},    {0, -1},     {1, 2},      {1, 0},        {-1, -2},
                       {kInf, 0}, {kMax, kInf}, {kNaN, 1},   {1, kNaN},     {2, 2},
                       {-0.0, 0}, {kTiny, 0},  {-kTiny, 0}, {1e300, -kInf}, {-3.5, 7}};
  OpCase c = edge_pairs(SpecialOp::kNextafter, pairs,
                        [](const std::vector<double>& v, const Sample& s) {
    if (s.inputs[0].dtype() == DType::kF32) {
      return static_cast<double>(
          std::nextafter(static_cast<float>(v[0]), static_cast<float>(v[1])));
    }
    return std::nextafter(v[0], v[1]);
  });
  c.tolerance = [](DType, const Sample&) { return Tolerance{0.0, 0.0}; };
  return c;
}

}  // namespace tessera::conformance
