// f64 on the Vulkan device: where it has shaderFloat64 (lavapipe does),
// conversions, elementwise ops and reductions run in the *_f64 shaders and
// give the CPU device's results; where it has not (or with
// TESSERA_VULKAN_SHADER_F64=0, as vulkan_device_staged_copies_test runs
// this file), they stage through the host with the same results. The
// conversions are compared exactly: the shaders round on the bits, so
// ties, overflow and f32 subnormals must land where the CPU's casts put
// them. The reductions are large enough to take every shape of
// kernels/reduce.cc (split work groups, a subgroup per row, long columns).
// softmax, layer_norm, rms_norm and batch_norm compose those kernels on
// the device; they are held to the CPU device's f64 kernels too.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devices/vulkan/vulkan_device.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/ops.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::vulkan_testing;

namespace {

bool f64_shaders() { return vulkan::device_info(0).shader_f64; }

// The ops f64 work goes through; each is native (count 0) with f64 shaders.
int64_t f64_fallbacks() {
  int64_t n = 0;
  for (const char* op : {"copy", "binary", "unary", "pointwise_binary", "ternary", "reduce",
                         "reduce_ext", "arg_reduce", "var_std", "bmm", "softmax",
                         "softmax_backward", "layer_norm", "layer_norm_backward", "batch_norm",
                         "batch_norm_backward", "scan", "scatter", "index_put",
                         "embedding_dense_backward", "nll_loss", "nll_loss_backward",
                         "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
                         "avg_pool2d", "avg_pool2d_backward", "conv2d", "conv2d_backward"}) {
    n += fallback_count(op);
  }
  return n;
}

// With f64 shaders nothing staged; without, the same results through the host.
void check_ran_natively_with_f64_shaders() {
  if (f64_shaders()) {
    CHECK(f64_fallbacks() == 0);
  } else {
    CHECK(f64_fallbacks() > 0);
  }
}

// got against the CPU's want element by element: NaN where want is NaN,
// infinities equal, zeros equal with want's sign where `signed_zeros`, and
// every other value within allowed(want) of it.
template <typename Allowed>
void check_elements(const Tensor& got, const Tensor& want, bool signed_zeros, Allowed allowed) {
  const std::vector<double> g = testing::read_strided(got.to(host_device()));
  const std::vector<double> w = testing::read_strided(want);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    if (std::isnan(w[i])) {
      CHECK(std::isnan(g[i]));
    } else if (std::isinf(w[i]) || (signed_zeros && w[i] == 0.0)) {
      CHECK(g[i] == w[i]);
      CHECK(std::signbit(g[i]) == std::signbit(w[i]));
    } else {
      CHECK(std::fabs(g[i] - w[i]) <= allowed(w[i]));
    }
  }
}

// Equal values, NaN where NaN, and the sign of zeros.
void check_same(const Tensor& got, const Tensor& want) {
  check_elements(got, want, /*signed_zeros=*/true, [](double) { return 0.0; });
}

// |got - want| <= rtol (1 + |want|); infinities and NaN where the CPU has them.
void check_close(const Tensor& got, const Tensor& want, double rtol) {
  check_elements(got, want, /*signed_zeros=*/false,
                 [rtol](double w) { return rtol * (1.0 + std::fabs(w)); });
}

// Within rtol of the CPU's value (a few ulp for rtol 1e-14; subnormal
// results within an ulp of them), infinities and NaN exactly where the
// CPU has them, and the sign of zeros.
void check_ulps(const Tensor& got, const Tensor& want, double rtol) {
  check_elements(got, want, /*signed_zeros=*/true,
                 [rtol](double w) { return rtol * std::fabs(w) + 5e-324; });
}

Tensor host_f64(const std::vector<double>& values) {
  return testing::make_tensor(values, {static_cast<int64_t>(values.size())}, DType::kF64);
}

}  // namespace

TEST_CASE("vulkan: f64 conversions round as the CPU device's casts", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double flt_max = std::numeric_limits<float>::max();
  const double flt_min = std::numeric_limits<float>::min();
  const double sub_min = std::numeric_limits<float>::denorm_min();
  reset_cpu_fallback_counts();
  // To the floats: ties to even at f32's precision, the overflow boundary,
  // f32 subnormals and their ties, f64 subnormals, signed zeros, NaN.
  Tensor floats = host_f64({0.1, -2.5, 1234567.891, 3.0e10, 1.0 + std::ldexp(1.0, -24),
                            1.0 + 3 * std::ldexp(1.0, -24), 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -50),
                            flt_max, flt_max * (1 + std::ldexp(1.0, -25)),
                            flt_max + std::ldexp(1.0, 103), 1e39, -1e39, 1e-40, -1e-40, sub_min,
                            sub_min / 2, sub_min * 0.51, sub_min * 1.5, flt_min - sub_min / 2,
                            flt_min, 1e-300, -1e-300, 5e-324, 0.0, -0.0, inf, -inf, nan, 65504.0,
                            65520.0, 1e-8, 3.0e38});
  Tensor on_device = floats.to(gpu());
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kBool}) {
    INFO(std::string(dtype_name(dtype)));
    check_same(on_device.to(dtype), floats.to(dtype));
  }
  // To the integers: values in each one's range (truncation toward zero).
  Tensor signed_small = host_f64({-100.7, -0.5, 0.9, 99.99, 1e-3, -0.0, 42.0});
  for (DType dtype : {DType::kI8, DType::kI16, DType::kI32, DType::kI64}) {
    INFO(std::string(dtype_name(dtype)));
    check_same(signed_small.to(gpu()).to(dtype), signed_small.to(dtype));
  }
  Tensor unsigned_small = host_f64({0.5, 200.9, 255.0, 17.2});
  check_same(unsigned_small.to(gpu()).to(DType::kU8), unsigned_small.to(DType::kU8));
  Tensor wide = host_f64({std::ldexp(1.0, 53), -1e18, 4.5e18, -2147483648.0, 2147483647.9});
  check_same(wide.to(gpu()).to(DType::kI64), wide.to(DType::kI64));
  // From the integers: 2^53 + 1 and 2^63 - 1 round (to even), the extremes.
  Tensor longs = testing::make_tensor({0, -12345, 1, -1}, {4}, DType::kI64);
  const std::vector<int64_t> extremes = {(int64_t{1} << 53) + 1, std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min(),
                                         (int64_t{1} << 62) + (int64_t{1} << 9) + 1};
  Tensor exact_longs = empty({4}, DType::kI64);
  for (int i = 0; i < 4; ++i) static_cast<int64_t*>(exact_longs.data_ptr())[i] = extremes[i];
  for (const Tensor& t : {longs, exact_longs,
                          testing::make_tensor({-2147483648.0, 2147483647.0, 7}, {3}, DType::kI32),
                          testing::make_tensor({0, 255, 7}, {3}, DType::kU8),
                          testing::make_tensor({-128, 127, 0}, {3}, DType::kI8),
                          testing::make_tensor({1, 0, 1}, {3}, DType::kBool),
                          floats.to(DType::kF32), floats.to(DType::kF16), floats.to(DType::kBF16)}) {
    INFO("from " << dtype_name(t.dtype()));
    check_same(t.to(gpu()).to(DType::kF64), t.to(DType::kF64));
  }
  // Strided both ways: a transposed f64 view into f32 and back.
  Tensor grid = testing::make_tensor(testing::iota(12, -5.25), {3, 4}, DType::kF64);
  check_same(grid.to(gpu()).t().to(DType::kF32), grid.t().to(DType::kF32));
  check_same(grid.to(DType::kF32).to(gpu()).t().to(DType::kF64), grid.t());
  if (f64_shaders()) CHECK(fallback_count("copy") == 0);
  else CHECK(fallback_count("copy") > 0);
}

TEST_CASE("vulkan: f64 elementwise ops match the CPU device", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  reset_cpu_fallback_counts();
  Tensor x = host_f64({0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-300, -7.0, 3.0, -3.0, 1e300,
                       inf, -inf, nan, 0.1});
  Tensor y = host_f64({1.0, -2.0, 0.25, 3.0, -1.5, 2.5, 0.0, 1e300, 7.0, nan, -3.0, 1e-300,
                       1.0, inf, 2.0, 0.3});
  Tensor xd = x.to(gpu()), yd = y.to(gpu());
  check_same(add(xd, yd, 0.5), add(x, y, 0.5));
  check_same(sub(xd, yd), sub(x, y));
  check_same(mul(xd, yd), mul(x, y));
  check_same(div(xd, yd), div(x, y));
  check_same(neg(xd), neg(x));
  check_same(abs(xd), abs(x));
  check_same(sqrt(xd), sqrt(x));
  check_same(reciprocal(xd), reciprocal(x));
  check_same(round(xd), round(x));
  check_same(floor(xd), floor(x));
  check_same(ceil(xd), ceil(x));
  check_same(trunc(xd), trunc(x));
  check_same(relu(xd), relu(x));
  check_same(clamp(xd, -1.0, 2.0), clamp(x, -1.0, 2.0));
  check_same(isnan(xd), isnan(x));
  check_same(isinf(xd), isinf(x));
  check_same(maximum(xd, yd), maximum(x, y));
  check_same(lt(xd, yd), lt(x, y));
  check_same(ne(xd, yd), ne(x, y));
  check_same(logical_and(xd, yd), logical_and(x, y));
  check_same(where(gt(xd, yd), xd, yd), where(gt(x, y), x, y));
  check_same(addcmul(xd, xd, yd, 0.5), addcmul(x, x, y, 0.5));
  check_same(lerp(xd, yd, 0.75), lerp(x, y, 0.75));
  // fmod is exact, and floor division and remainder follow from it.
  Tensor dividend = host_f64({7.5, -7.5, 7.5, -7.5, 1e300, -1e300, 5e-324, 1e-310, 0.0, -0.0,
                              3.0, 1e17, inf, nan, 2.0, 6.0});
  Tensor divisor = host_f64({2.0, 2.0, -2.0, -2.0, 3.7, 1e-300, 3e-324, 7e-312, 5.0, 5.0,
                             inf, -3.0, 2.0, 1.0, 0.0, -0.0});
  Tensor dd = dividend.to(gpu()), dv = divisor.to(gpu());
  check_same(fmod(dd, dv), fmod(dividend, divisor));
  check_same(remainder(dd, dv), remainder(dividend, divisor));
  check_same(floor_divide(dd, dv), floor_divide(dividend, divisor));
  check_same(div(dd, dv, "trunc"), div(dividend, divisor, "trunc"));
  // Broadcasting: a column against a row.
  Tensor col = host_f64({1, 2, 3}).reshape({3, 1}), row = host_f64({0.1, 0.2}).reshape({1, 2});
  check_same(div(col.to(gpu()), row.to(gpu())), div(col, row));
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: f64 reductions of every shape match the CPU device", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  Generator gen(7);
  // One long vector (split over work groups, then combined), many moderate
  // rows (a subgroup or work group per row), long columns (serial, split).
  Tensor vector = randn({1 << 20}, TensorOptions(DType::kF64), &gen);
  Tensor rows = randn({300, 5000}, TensorOptions(DType::kF64), &gen);
  Tensor vd = vector.to(gpu()), rd = rows.to(gpu());
  const double rtol = 1e-12;
  check_close(sum(vd), sum(vector), rtol);
  check_close(mean(vd), mean(vector), rtol);
  check_close(sum(rd, {1}), sum(rows, {1}), rtol);
  check_close(sum(rd, {0}), sum(rows, {0}), rtol);
  check_close(mean(rd, {0}), mean(rows, {0}), rtol);
  check_close(var(rd, {1}), var(rows, {1}), rtol);
  check_close(tessera::std(vd, {}, 0.0), tessera::std(vector, {}, 0.0), rtol);
  check_close(var(rd, {0}), var(rows, {0}), rtol);
  check_same(amax(rd, {1}), amax(rows, {1}));
  check_same(amin(vd), amin(vector));
  check_same(argmax(rd, 1), argmax(rows, 1));
  check_same(argmax(vd), argmax(vector));
  check_same(argmin(rd, 0), argmin(rows, 0));
  Tensor near_one = add(mul(rows, 1e-4), 1.0);
  check_close(prod(near_one.to(gpu()), 1), prod(near_one, 1), rtol);
  check_same(any(gt(rd, 4.0), {1}), any(gt(rows, 4.0), {1}));
  check_close(norm(rd, 2.0, {1}), norm(rows, 2.0, {1}), rtol);
  check_close(logsumexp(rd, {1}), logsumexp(rows, {1}), rtol);
  check_close(logsumexp(vd, {0}), logsumexp(vector, {0}), rtol);
  // Scans: a work group per long line, an invocation per short or strided one.
  Tensor long_lines = randn({3, 50000}, TensorOptions(DType::kF64), &gen);
  check_close(cumsum(long_lines.to(gpu()), 1), cumsum(long_lines, 1), 1e-11);
  check_close(cumsum(rd, 0), cumsum(rows, 0), 1e-11);
  check_close(cumprod(near_one.to(gpu()), 1), cumprod(near_one, 1), 1e-11);
  // NaN propagates through max and argmax, as on the CPU.
  Tensor with_nan = host_f64({1.0, std::numeric_limits<double>::quiet_NaN(), 3.0});
  check_same(amax(with_nan.to(gpu())), amax(with_nan));
  check_same(argmax(with_nan.to(gpu())), argmax(with_nan));
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: f64 matrix products match the CPU device", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  Generator gen(11);
  // Sizes that leave partial 64 x 64 tiles, a transposed operand, a batch
  // and a bias.
  Tensor a = randn({70, 90}, TensorOptions(DType::kF64), &gen);
  Tensor b = randn({65, 90}, TensorOptions(DType::kF64), &gen);
  Tensor bias = randn({65}, TensorOptions(DType::kF64), &gen);
  Tensor batch_a = randn({3, 17, 33}, TensorOptions(DType::kF64), &gen);
  Tensor batch_b = randn({3, 33, 9}, TensorOptions(DType::kF64), &gen);
  const double rtol = 1e-12;
  check_close(mm(a.to(gpu()), b.to(gpu()).t()), mm(a, b.t()), rtol);
  check_close(bmm(batch_a.to(gpu()), batch_b.to(gpu())), bmm(batch_a, batch_b), rtol);
  check_close(addmm(bias.to(gpu()), a.to(gpu()), b.to(gpu()).t()), addmm(bias, a, b.t()), rtol);
  if (f64_shaders()) CHECK(fallback_count("bmm") == 0);
  else CHECK(fallback_count("bmm") > 0);
}

TEST_CASE("vulkan: f64 math functions are within a few ulp of the CPU's", 
          "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  reset_cpu_fallback_counts();
  // The branch points of shaders/doubles_math.glsl: ln2/2 (expm1's series),
  // atan's 7/16, 11/16, 19/16, 39/16, 1, 2, 22, 2^28, 2^66, exp's overflow
  // and subnormal range, subnormal and power-of-2 logs, signed zeros,
  // infinities, NaN.
  std::vector<double> values = {0.0, -0.0, 1e-310, -1e-310, 1e-20, -1e-20, 1e-9, 0.1, -0.1,
                                0.3465, 0.3466, -0.3466, 0.5, -0.5, 0.75, 0.999, 1.0, -1.0,
                                1.5, 2.0, -2.0, 2.5, 8.0, 10.0, 21.9, 22.1, -22.1, 40.5, -41.0,
                                100.0, 268435457.0, 1e300, 709.7, 709.79, 710.0, -708.5,
                                -740.0, -745.0, -746.0, 0.4374, 0.4376, 0.6874, 0.6876,
                                1.1874, 1.1876, 2.4374, 2.4376, 7.4e19, inf, -inf, nan};
  for (int i = -30; i <= 30; ++i) values.push_back(i * 0.37 + 0.01);
  Tensor x = host_f64(values);
  Tensor xd = x.to(gpu());
  Tensor y = flip(x, {0});
  const double rtol = 1e-14;
  check_ulps(exp(xd), exp(x), rtol);
  check_ulps(expm1(xd), expm1(x), rtol);
  check_ulps(log(xd), log(x), rtol);
  check_ulps(log1p(xd), log1p(x), rtol);
  check_ulps(log2(xd), log2(x), rtol);
  check_ulps(log10(xd), log10(x), rtol);
  check_ulps(sigmoid(xd), sigmoid(x), rtol);
  check_ulps(silu(xd), silu(x), rtol);
  check_ulps(tanh(xd), tanh(x), rtol);
  check_ulps(sinh(xd), sinh(x), rtol);
  check_ulps(cosh(xd), cosh(x), rtol);
  check_ulps(asinh(xd), asinh(x), rtol);
  check_ulps(acosh(xd), acosh(x), rtol);
  check_ulps(atanh(xd), atanh(x), rtol);
  check_ulps(logaddexp(xd, y.to(gpu())), logaddexp(x, y), rtol);
  check_ulps(logaddexp2(xd, y.to(gpu())), logaddexp2(x, y), rtol);
  check_ulps(erf(xd), erf(x), rtol);
  // gelu's 1 + erf cancels for negative x on the CPU as here: absolute.
  check_close(gelu(xd), gelu(x), 1e-13);
  check_close(gelu(xd, "tanh"), gelu(x, "tanh"), 1e-13);
  // Gradients of moderate size: cdf + x pdf cancels too, so the error
  // scales with the gradient, not with the result.
  Generator gen(3);
  Tensor grad = randn(x.sizes(), TensorOptions(DType::kF64), &gen);
  check_close(gelu_backward(grad.to(gpu()), xd), gelu_backward(grad, x), 1e-13);
  check_close(gelu_backward(grad.to(gpu()), xd, "tanh"), gelu_backward(grad, x, "tanh"), 1e-13);
  check_ulps(atan(xd), atan(x), rtol);
  check_ulps(asin(xd), asin(x), rtol);
  check_ulps(acos(xd), acos(x), rtol);
  check_ulps(atan2(xd, y.to(gpu())), atan2(x, y), rtol);
  // atan2's signed zeros and infinities pick the quadrant, as C's.
  Tensor ay = host_f64({0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, inf, 2.0});
  Tensor ax = host_f64({-0.0, -0.0, 0.0, 0.0, inf, -inf, inf, -inf, 3.0, 0.0});
  check_same(atan2(ay.to(gpu()), ax.to(gpu())), atan2(ay, ax));
  // pow: C's special values, integer exponents, and y log|x| near the
  // overflow and underflow limits (the product carried in two parts).
  Tensor base = host_f64({0.0, -0.0, 2.0, -2.0, 0.5, 1.0, -1.0, 10.0, 1.5, 1e-3, 3.7, -3.0, inf,
                          -inf, nan, 1.0000001, 0.9999, 1e300, 2.0, 7.0, 0.0, -0.0});
  Tensor exponent = host_f64({3.0, -3.0, 0.5, 3.0, -1.5, nan, inf, 300.0, 1700.0, 100.5, -200.3,
                              2.0, -1.0, 3.0, 0.0, 7e9, 5e6, 0.9, -1074.0, 364.8, -2.0, -3.0});
  check_ulps(pow(base.to(gpu()), exponent.to(gpu())), pow(base, exponent), rtol);
  // sin, cos and tan at every magnitude: Cody-Waite below 2^20 pi/2,
  // Payne-Hanek above, up to the largest double, and the double nearest a
  // multiple of pi/2 (6381956970095103 2^797, 4.7e-19 from one).
  std::vector<double> angles = {0.0, -0.0, 1e-310, 0.785, 0.786, 1.5707963267948966,
                                3.141592653589793, -4.71238898038469, 100.0, 1647099.0,
                                1647100.0, 1e10, 9007199254740994.0, 1e22, 1e300,
                                std::numeric_limits<double>::max(),
                                std::ldexp(6381956970095103.0, 797), inf, -inf, nan};
  for (int e = -3; e <= 300; e += 7) angles.push_back(std::pow(10.0, e) * (e % 2 ? -1.3 : 1.7));
  for (int k = 1; k < 60; ++k) angles.push_back(k * 1.5707963267948966);
  Tensor a = host_f64(angles), ad = a.to(gpu());
  check_ulps(sin(ad), sin(a), rtol);
  check_ulps(cos(ad), cos(a), rtol);
  check_ulps(tan(ad), tan(a), rtol);
  // log2 of powers of 2 is exact, as C's.
  Tensor powers = host_f64({0.125, 1.0, 2.0, 1024.0, std::ldexp(1.0, -1060)});
  check_same(log2(powers.to(gpu())), log2(powers));
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: f64 softmax and the norm layers match the CPU device", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  Generator gen(5);
  const double rtol = 1e-12;
  const TensorOptions f64(DType::kF64);
  Tensor x = mul(randn({6, 7, 33}, f64, &gen), 4.0);
  Tensor g = randn({6, 7, 33}, f64, &gen);
  Tensor xd = x.to(gpu()), gd = g.to(gpu());
  // softmax and log_softmax along the last and a middle dim, and their backward.
  for (int64_t dim : {2, 1}) {
    INFO("dim " << dim);
    const Tensor y = softmax(x, dim), ly = log_softmax(x, dim);
    check_close(softmax(xd, dim), y, rtol);
    check_close(log_softmax(xd, dim), ly, rtol);
    check_close(_softmax_backward_data(gd, y.to(gpu()), dim), _softmax_backward_data(g, y, dim),
                rtol);
    check_close(_log_softmax_backward_data(gd, ly.to(gpu()), dim),
                _log_softmax_backward_data(g, ly, dim), rtol);
  }
  // layer_norm and rms_norm over the last dim, forward and backward.
  Tensor w = randn({33}, f64, &gen), b = randn({33}, f64, &gen);
  auto [y, mean_, rstd] = native_layer_norm(x, {33}, w, b, 1e-5);
  auto [yd, mean_d, rstd_d] = native_layer_norm(xd, {33}, w.to(gpu()), b.to(gpu()), 1e-5);
  check_close(yd, y, rtol);
  check_close(mean_d, mean_, rtol);
  check_close(rstd_d, rstd, rtol);
  auto [gi, gw, gb] = native_layer_norm_backward(g, x, {33}, mean_, rstd, w, b);
  auto [gid, gwd, gbd] =
      native_layer_norm_backward(gd, xd, {33}, mean_d, rstd_d, w.to(gpu()), b.to(gpu()));
  check_close(gid, gi, rtol);
  check_close(gwd, gw, rtol);
  check_close(gbd, gb, rtol);
  auto [ry, rr] = rms_norm_forward(x, {33}, w);
  auto [ryd, rrd] = rms_norm_forward(xd, {33}, w.to(gpu()));
  check_close(ryd, ry, rtol);
  auto [rgi, rgw] = rms_norm_backward(g, x, {33}, rr, w);
  auto [rgid, rgwd] = rms_norm_backward(gd, xd, {33}, rrd, w.to(gpu()));
  check_close(rgid, rgi, rtol);
  check_close(rgwd, rgw, rtol);
  // batch_norm over the 7 channels, training (running stats in f32, as
  // mixed-precision models keep them) and eval, forward and backward.
  Tensor cw = randn({7}, f64, &gen), cb = randn({7}, f64, &gen);
  for (bool training : {true, false}) {
    INFO("training " << training);
    Tensor rm = randn({7}, TensorOptions(DType::kF32), &gen);
    Tensor rv = add(rand({7}, TensorOptions(DType::kF32), &gen), 0.5);
    Tensor rm_d = rm.to(gpu()), rv_d = rv.to(gpu());
    auto [by, bm, bi] = batch_norm(x, cw, cb, rm, rv, training, 0.1, 1e-5);
    auto [byd, bmd, bid] =
        batch_norm(xd, cw.to(gpu()), cb.to(gpu()), rm_d, rv_d, training, 0.1, 1e-5);
    check_close(byd, by, rtol);
    check_same(rm_d, rm);
    check_same(rv_d, rv);
    auto [bgi, bgw, bgb] = batch_norm_backward(g, x, cw, rm, rv, bm, bi, training, 1e-5);
    auto [bgid, bgwd, bgbd] =
        batch_norm_backward(gd, xd, cw.to(gpu()), rm_d, rv_d, bmd, bid, training, 1e-5);
    check_close(bgid, bgi, rtol);
    check_close(bgwd, bgw, rtol);
    check_close(bgbd, bgb, rtol);
  }
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: f64 scatter folds, index_put accumulate, embedding backward and nll_loss match "
          "the CPU device",
          "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  Generator gen(9);
  const TensorOptions f64(DType::kF64), i64(DType::kI64);
  // Indices with repeats, so positions fold several values in index order:
  // sums and products then round as the CPU's, and NaN wins in amax/amin.
  Tensor self = randn({5, 8}, f64, &gen);
  Tensor src = mul(randn({12, 8}, f64, &gen), 1e-9);
  src.slice(0, 3, 4).fill_(std::nan(""));
  Tensor index = randint(0, 5, {12, 8}, i64, &gen);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      INFO(reduce << ", include_self " << include_self);
      check_same(scatter_reduce(self.to(gpu()), 0, index.to(gpu()), src.to(gpu()), reduce,
                                include_self),
                 scatter_reduce(self, 0, index, src, reduce, include_self));
    }
  }
  check_same(scatter_add(self.to(gpu()), 0, index.to(gpu()), src.to(gpu())),
             scatter_add(self, 0, index, src));
  // index_put with accumulate, and index_add, over repeated rows.
  Tensor rows = randint(0, 5, {12}, i64, &gen);
  check_same(index_put(self.to(gpu()), {rows.to(gpu())}, src.to(gpu()), /*accumulate=*/true),
             index_put(self, {rows}, src, /*accumulate=*/true));
  check_same(index_add(self.to(gpu()), 0, rows.to(gpu()), src.to(gpu())),
             index_add(self, 0, rows, src));
  // embedding's gradient sums each row's gradients in index order.
  Tensor grad = randn({4, 9, 16}, f64, &gen);
  Tensor tokens = randint(0, 6, {4, 9}, i64, &gen);
  for (int64_t padding_idx : {-1, 2}) {
    INFO("padding_idx " << padding_idx);
    check_same(embedding_dense_backward(grad.to(gpu()), tokens.to(gpu()), 6, padding_idx),
               embedding_dense_backward(grad, tokens, 6, padding_idx));
  }
  // nll_loss with class weights and an ignored target, every reduction;
  // mean and sum add in a tree, so they match to rounding.
  Tensor logp = log_softmax(randn({7, 5, 3}, f64, &gen), 1);
  Tensor target = randint(0, 5, {7, 3}, i64, &gen);
  target.select(0, 2).fill_(-100);
  Tensor weight = rand({5}, f64, &gen);
  for (const char* reduction : {"none", "mean", "sum"}) {
    INFO(reduction);
    auto [loss, total] = nll_loss_forward(logp, target, weight, reduction, -100);
    auto [loss_d, total_d] =
        nll_loss_forward(logp.to(gpu()), target.to(gpu()), weight.to(gpu()), reduction, -100);
    check_close(loss_d, loss, 1e-14);
    check_close(total_d, total, 1e-14);
    Tensor g = std::string_view(reduction) == "none" ? randn({7, 3}, f64, &gen)
                                                       : randn(Shape{}, f64, &gen);
    check_close(nll_loss_backward(g.to(gpu()), logp.to(gpu()), target.to(gpu()), weight.to(gpu()),
                                  reduction, -100, total_d),
                nll_loss_backward(g, logp, target, weight, reduction, -100, total), 1e-14);
  }
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: f64 convolution and pooling match the CPU device", "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  Generator gen(10);
  const TensorOptions f64(DType::kF64);
  // Values 1e-12 apart, which f32 would merge; a NaN, which wins its windows.
  Tensor x = add(mul(randn({2, 3, 9, 11}, f64, &gen), 1e-12), 1.0);
  x.select(0, 1).select(0, 2).select(0, 4).select(0, 5).fill_(std::nan(""));
  const Tensor xd = x.to(gpu());
  // Convolution, grouped, strided, padded and dilated, forward and every
  // gradient: the GEMMs sum in double in another order than the CPU's.
  {
    Tensor input = randn({2, 4, 9, 11}, f64, &gen), weight = randn({6, 2, 3, 2}, f64, &gen);
    Tensor bias = randn({6}, f64, &gen);
    const Shape stride{2, 1}, padding{1, 2}, dilation{1, 2};
    const Tensor y = conv2d(input, weight, bias, stride, padding, dilation, 2);
    check_close(conv2d(input.to(gpu()), weight.to(gpu()), bias.to(gpu()), stride, padding,
                       dilation, 2),
                y, 1e-13);
    const Tensor g = randn(y.sizes(), f64, &gen);
    auto [gi, gw, gb] = convolution_backward(g, input, weight, stride, padding, dilation, 2);
    auto [gid, gwd, gbd] = convolution_backward(g.to(gpu()), input.to(gpu()), weight.to(gpu()),
                                                stride, padding, dilation, 2);
    check_close(gid, gi, 1e-13);
    check_close(gwd, gw, 1e-13);
    check_close(gbd, gb, 1e-13);
  }
  // Max pooling with padding, stride and dilation: the maxima, their
  // indices, and the gradient summed where windows share a maximum.
  auto [y, idx] = max_pool2d_with_indices(x, {3, 2}, {2, 1}, {1, 1}, {1, 2});
  auto [yd, idxd] = max_pool2d_with_indices(xd, {3, 2}, {2, 1}, {1, 1}, {1, 2});
  check_same(yd, y);
  CHECK(equal(idxd.to(host_device()), idx));
  Tensor g = randn(y.sizes(), f64, &gen);
  check_same(max_pool2d_with_indices_backward(g.to(gpu()), xd, idxd),
             max_pool2d_with_indices_backward(g, x, idx));
  // Average pooling, each divisor rule, forward and backward; sums run in
  // the CPU's order, so they match to the bit.
  for (bool count_include_pad : {true, false}) {
    for (std::optional<int64_t> divisor : {std::optional<int64_t>(), std::optional<int64_t>(5)}) {
      INFO("count_include_pad " << count_include_pad << ", divisor " << divisor.value_or(0));
      const Tensor a = avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, count_include_pad, divisor);
      check_same(avg_pool2d(xd, {3, 3}, {2, 2}, {1, 1}, false, count_include_pad, divisor), a);
      const Tensor ga = randn(a.sizes(), f64, &gen);
      check_same(avg_pool2d_backward(ga.to(gpu()), xd, {3, 3}, {2, 2}, {1, 1}, false,
                                     count_include_pad, divisor),
                 avg_pool2d_backward(ga, x, {3, 3}, {2, 2}, {1, 1}, false, count_include_pad,
                                     divisor));
    }
  }
  check_ran_natively_with_f64_shaders();
}

TEST_CASE("vulkan: arange and linspace compute in double as the CPU device, bit for bit",
          "[vulkan][kernels][f64]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  // Without f64 shaders f32, f16 and bf16 come from double-float
  // arithmetic, within an ulp; the rest stage, exactly.
  for (DType t : testing::all_dtypes()) {
    if (t == DType::kBool) continue;
    if (!f64_shaders() && (t == DType::kF32 || t == DType::kF16 || t == DType::kBF16)) continue;
    INFO(dtype_name(t));
    const TensorOptions on_cpu(t), on_gpu(t, gpu());
    // Steps that are not exact in binary, ends an integer truncation is
    // sensitive to, and a long linspace counting from both ends.
    check_same(linspace(-3.0, 64.99, 7, on_gpu), linspace(-3.0, 64.99, 7, on_cpu));
    check_same(linspace(0.0, 6.5, 101, on_gpu), linspace(0.0, 6.5, 101, on_cpu));
    check_same(linspace(1e5, -2.5e4, 100003, on_gpu), linspace(1e5, -2.5e4, 100003, on_cpu));
    if (is_floating(t)) {
      check_same(arange(-1.0, 12.3, 0.1, on_gpu), arange(-1.0, 12.3, 0.1, on_cpu));
      check_same(arange(3e7, 3e7 + 1.0, 1.0 / 1024, on_gpu),
                 arange(3e7, 3e7 + 1.0, 1.0 / 1024, on_cpu));
    }
  }
  if (f64_shaders()) CHECK(cpu_fallback_counts().empty());
}
