// f16 and bf16 convolutions and pools on the Vulkan device, and max pooling
// of 8- and 16-bit integers, run on the device (devices/vulkan/kernels/
// widened_f32.h): with the CPU fallback turned off they must still run,
// and give the f32 computation rounded once to the dtype, which is what the
// CPU device computes. Skipped without a Vulkan device.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "runtime/ops/dispatch.h"
#include "runtime/tessera.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/ops/reference.h"
#include "tests/support/skip.h"

using namespace tessera;
using namespace tessera::vulkan_testing;

namespace {

// Host tensor of `shape` with values in [lo, hi), rounded to dtype.
Tensor host_input(const Shape& shape, DType dtype, uint64_t seed, double lo = -1.0,
                  double hi = 1.0) {
  std::vector<double> values = tessera::testing::lcg_values(
      tessera::testing::naive_numel(shape), seed, lo, hi);
  return tessera::testing::make_tensor(values, shape, DType::kF32).to(dtype);
}

std::vector<double> values_of(const Tensor& t) {
  return tessera::testing::read_strided(t.to(host_device()));
}

// One unit in the last place of the half dtype (the two roundings of the
// same f32 value may differ by one), plus what summing `terms` products in
// f32 in another order can move before that rounding.
void check_half_close(const Tensor& got, const Tensor& want, int64_t terms) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.sizes() == want.sizes());
  const double eps = got.dtype() == DType::kBF16 ? 0x1.0p-7 : 0x1.0p-10;
  const std::string report = tessera::testing::close_report(
      values_of(got), values_of(want), eps, eps * static_cast<double>(terms));
  INFO(report);
  CHECK(report.empty());
}

// Runs `body` with the CPU fallback off, so a host-staged kernel throws.
template <typename Body>
void without_fallback(Body&& body) {
  set_cpu_fallback_enabled(false);
  try {
    body();
  } catch (...) {
    set_cpu_fallback_enabled(true);
    throw;
  }
  set_cpu_fallback_enabled(true);
}

}  // namespace

TEST_CASE("vulkan: f16 and bf16 conv2d and its backward run on the device", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(dtype));
    // Grouped, strided, padded and dilated, with a bias.
    const Tensor x = host_input({2, 4, 9, 11}, dtype, 1);
    const Tensor w = host_input({6, 2, 3, 3}, dtype, 2);
    const Tensor b = host_input({6}, dtype, 3);
    const Shape stride = {2, 1}, padding = {1, 2}, dilation = {1, 2};
    const int64_t groups = 2, terms = 2 * 3 * 3 + 1;
    // The f32 computation on the CPU device, rounded once.
    const Tensor x32 = x.to(DType::kF32), w32 = w.to(DType::kF32), b32 = b.to(DType::kF32);
    const Tensor want = conv2d(x32, w32, b32, stride, padding, dilation, groups).to(dtype);
    const Tensor g = host_input(want.sizes(), dtype, 4);
    auto [wgi, wgw, wgb] =
        convolution_backward(g.to(DType::kF32), x32, w32, stride, padding, dilation, groups);

    Tensor got;
    std::tuple<Tensor, Tensor, Tensor> grads;
    reset_cpu_fallback_counts();
    without_fallback([&] {
      got = conv2d(x.to(gpu()), w.to(gpu()), b.to(gpu()), stride, padding, dilation, groups);
      grads = convolution_backward(g.to(gpu()), x.to(gpu()), w.to(gpu()), stride, padding,
                                   dilation, groups);
    });
    CHECK(cpu_fallback_counts().empty());
    check_half_close(got, want, terms);
    check_half_close(std::get<0>(grads), wgi.to(dtype), 3 * 3 * 3);
    // grad_weight and grad_bias sum over every output position.
    const int64_t positions = want.size(0) * want.size(2) * want.size(3);
    check_half_close(std::get<1>(grads), wgw.to(dtype), positions);
    check_half_close(std::get<2>(grads), wgb.to(dtype), positions);
  }
}

TEST_CASE("vulkan: f16 and bf16 pools and their backward run on the device", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(dtype));
    const Tensor x = host_input({2, 3, 10, 9}, dtype, 5);
    const Shape kernel = {3, 2}, stride = {2, 2}, padding = {1, 1}, dilation = {1, 1};
    // Max pooling picks elements, so it is exact in any float dtype.
    auto [want_max, want_idx] = max_pool2d_with_indices(x, kernel, stride, padding, dilation);
    const Tensor g = host_input(want_max.sizes(), dtype, 6);
    const Tensor x32 = x.to(DType::kF32), g32 = g.to(DType::kF32);
    const Tensor want_max_grad =
        max_pool2d_with_indices_backward(g32, x32, want_idx).to(dtype);
    const Tensor want_avg = avg_pool2d(x32, kernel, stride, padding).to(dtype);
    const Tensor want_avg_grad = avg_pool2d_backward(g32, x32, kernel, stride, padding).to(dtype);

    Tensor got_max, got_idx, got_max_grad, got_avg, got_avg_grad;
    reset_cpu_fallback_counts();
    without_fallback([&] {
      const Tensor gx = x.to(gpu()), gg = g.to(gpu());
      std::tie(got_max, got_idx) = max_pool2d_with_indices(gx, kernel, stride, padding, dilation);
      got_max_grad = max_pool2d_with_indices_backward(gg, gx, got_idx);
      got_avg = avg_pool2d(gx, kernel, stride, padding);
      got_avg_grad = avg_pool2d_backward(gg, gx, kernel, stride, padding);
    });
    CHECK(cpu_fallback_counts().empty());
    CHECK(values_of(got_max) == values_of(want_max));
    CHECK(values_of(got_idx) == values_of(want_idx));
    check_half_close(got_max_grad, want_max_grad, 1);
    check_half_close(got_avg, want_avg, 1);
    check_half_close(got_avg_grad, want_avg_grad, 1);
  }
}

TEST_CASE("vulkan: max pooling of 8- and 16-bit integers runs on the device",
          "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  for (DType dtype : {DType::kU8, DType::kI8, DType::kI16}) {
    INFO(dtype_name(dtype));
    // The type's extremes and many ties (so the first index must win).
    const double lo = dtype == DType::kU8 ? 0 : dtype == DType::kI8 ? -128 : -32768;
    const double hi = dtype == DType::kU8 ? 255 : dtype == DType::kI8 ? 127 : 32767;
    std::vector<double> values = tessera::testing::lcg_ints(2 * 3 * 8 * 8, 7, 0, 3);
    for (double& v : values) v = v == 0 ? lo : v == 3 ? hi : v;
    const Tensor x = tessera::testing::make_tensor(values, {2, 3, 8, 8}, dtype);
    auto [want, want_idx] = max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1});
    Tensor got, got_idx;
    reset_cpu_fallback_counts();
    without_fallback([&] {
      std::tie(got, got_idx) = max_pool2d_with_indices(x.to(gpu()), {3, 3}, {2, 2}, {1, 1});
    });
    CHECK(cpu_fallback_counts().empty());
    CHECK(got.dtype() == dtype);
    CHECK(values_of(got) == values_of(want));
    CHECK(values_of(got_idx) == values_of(want_idx));
  }
}
