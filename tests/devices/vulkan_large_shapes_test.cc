// The Vulkan kernels at the sizes the benchmarks use, against the CPU
// device. The conformance suite's shapes are small; these are the shapes
// where one shader invocation loops longest (a 16M-element sum, a
// 2048-deep GEMM, 4096-wide rows), which is where a driver limit or a
// 32-bit index overflow would give wrong values. lavapipe, for one, stops
// an invocation's loops after 65535 iterations without any error.
// Skipped without a Vulkan device.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/ops/reference.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/support/skip.h"

using namespace tessera;
using namespace tessera::vulkan_testing;

namespace {

// The largest |got - want| / (atol + rtol |want|) over all elements; <= 1
// means close.
double worst_error(const Tensor& got, const Tensor& want, double rtol, double atol) {
  REQUIRE(got.sizes() == want.sizes());
  std::vector<double> g = tessera::testing::read_strided(got.to(host_device()));
  std::vector<double> w = tessera::testing::read_strided(want);
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] == w[i] || (std::isnan(w[i]) && std::isnan(g[i]))) continue;
    const double e = std::abs(g[i] - w[i]) / (atol + rtol * std::abs(w[i]));
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

Tensor host_input(const Shape& sizes, uint64_t seed) {
  Generator gen(seed);
  return randn(sizes, TensorOptions(DType::kF32), &gen);
}

}  // namespace

TEST_CASE("vulkan large: reductions over 16M elements and 4096-wide rows", "[vulkan][large]") {
  REQUIRE_VULKAN();
  const Tensor x = host_input({4096, 4096}, 1);
  const Tensor xd = x.to(gpu());
  CHECK(worst_error(sum(xd), sum(x), 1e-4, 1e-1) <= 1);
  CHECK(worst_error(sum(xd, Shape{1}), sum(x, Shape{1}), 1e-4, 1e-3) <= 1);
  CHECK(worst_error(sum(xd, Shape{0}), sum(x, Shape{0}), 1e-4, 1e-3) <= 1);
  CHECK(worst_error(amax(xd), amax(x), 0, 0) <= 1);
  CHECK(worst_error(argmax(xd), argmax(x), 0, 0) <= 1);
  CHECK(worst_error(var(xd, Shape{1}), var(x, Shape{1}), 1e-4, 1e-5) <= 1);
  const Tensor flat = x.reshape({int64_t{1} << 24});
  CHECK(worst_error(cumsum(flat.to(gpu()), 0), cumsum(flat, 0), 1e-3, 1e-1) <= 1);
}

TEST_CASE("vulkan large: softmax and layer_norm over 4096-wide and 1M-wide rows",
          "[vulkan][large]") {
  REQUIRE_VULKAN();
  for (const Shape& shape : {Shape{4096, 4096}, Shape{4, int64_t{1} << 20}}) {
    INFO("shape [" << shape[0] << ", " << shape[1] << "]");
    const Tensor x = host_input(shape, 2);
    const Tensor xd = x.to(gpu());
    CHECK(worst_error(softmax(xd, 1), softmax(x, 1), 1e-4, 1e-9) <= 1);
    CHECK(worst_error(softmax(xd, 0), softmax(x, 0), 1e-4, 1e-9) <= 1);
    const Tensor w = host_input({shape[1]}, 3), b = host_input({shape[1]}, 4);
    CHECK(worst_error(layer_norm(xd, Shape{shape[1]}, w.to(gpu()), b.to(gpu())),
                      layer_norm(x, Shape{shape[1]}, w, b), 1e-4, 1e-4) <= 1);
  }
}

TEST_CASE("vulkan large: matmul with K up to 2048 and a deep bmm", "[vulkan][large]") {
  REQUIRE_VULKAN();
  for (int64_t n : {512, 2048}) {
    INFO("n = " << n);
    const Tensor a = host_input({n, n}, 5), b = host_input({n, n}, 6);
    // f32 sums of n products of N(0,1) values: error grows like sqrt(n) ulps.
    CHECK(worst_error(matmul(a.to(gpu()), b.to(gpu())), matmul(a, b), 1e-4, 1e-3) <= 1);
  }
  const Tensor a = host_input({2, 8, 100000}, 7), b = host_input({2, 100000, 8}, 8);
  CHECK(worst_error(bmm(a.to(gpu()), b.to(gpu())), bmm(a, b), 1e-4, 1e-2) <= 1);
}

TEST_CASE("vulkan large: the ResNet convolution of the benchmark", "[vulkan][large]") {
  REQUIRE_VULKAN();
  const Tensor x = host_input({8, 64, 56, 56}, 9);
  const Tensor w = host_input({64, 64, 3, 3}, 10), b = host_input({64}, 11);
  const Tensor want = conv2d(x, w, b, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1);
  const Tensor got =
      conv2d(x.to(gpu()), w.to(gpu()), b.to(gpu()), Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1);
  CHECK(worst_error(got, want, 1e-4, 1e-3) <= 1);
}

TEST_CASE("vulkan large: elementwise over 2^25 elements", "[vulkan][large]") {
  REQUIRE_VULKAN();
  // More elements than one dispatch has invocations (65535 x 256), so each
  // invocation strides over several.
  const int64_t n = int64_t{1} << 25;
  const Tensor a = host_input({n}, 12), b = host_input({n}, 13);
  CHECK(worst_error(add(a.to(gpu()), b.to(gpu())), add(a, b), 0, 0) <= 1);
}
