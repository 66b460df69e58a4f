// The CPU fallback's counters: they exist, reset, and stay at zero while
// every op runs natively on the CPU device; turning the fallback off does
// not affect ops with a native kernel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

int64_t total_fallbacks() {
  int64_t n = 0;
  for (const auto& [op, count] : cpu_fallback_counts()) n += count;
  return n;
}

// Runs one of every op front end on host tensors; returns a checksum so
// nothing is optimised away.
double run_every_op() {
  Tensor a = make_tensor(iota(6), {2, 3});
  Tensor b = ones({2, 3}, DType::kF64);
  Tensor c = add(a, b, 2);
  c = sub(c, a);
  c = mul(c, b);
  c = div(c, b);
  c = add(c, Scalar(1));
  c = sub(c, Scalar(1));
  c = mul(c, Scalar(2.0));
  c = div(c, Scalar(2));
  Tensor d = c.clone();
  d.add_(a);
  d.sub_(a);
  d.mul_(b);
  d.div_(b);
  d.fill_(3);
  d.zero_();
  Tensor e = empty({3, 2});
  e.copy_(a.t());
  Tensor f = a.t().contiguous().to(DType::kI32).to(DType::kF16);
  Tensor s = sum(a, {1});
  Tensor m = mean(a);
  Tensor p = mm(a, e);
  Tensor q = bmm(a.unsqueeze(0), e.unsqueeze(0));
  Tensor r = matmul(a, make_tensor({1, 2, 3}, {3}));
  Tensor z = zeros({2});
  Tensor o = ones_like(z);
  Tensor fl = full({2}, 1.5);
  Tensor ar = arange(0, 10, 2);
  Generator g(1);
  Tensor rn = rand({4}, {}, &g);
  Tensor rd = randn({4}, {}, &g);
  uniform_(rn, 0, 1, &g);
  normal_(rd, 0, 1, &g);
  std::vector<double> v = f.to_vector<double>();
  double sum_all = 0;
  for (const Tensor& t : {c, d, e, s, m, p, q, r, o, fl, ar, rn, rd}) {
    for (double x : t.to_vector<double>()) sum_all += x;
  }
  for (double x : v) sum_all += x;
  return sum_all;
}

}  // namespace

TEST_CASE("fallback: counters exist and reset", "[fallback]") {
  reset_cpu_fallback_counts();
  CHECK(total_fallbacks() == 0);
  std::map<std::string, int64_t> counts = cpu_fallback_counts();
  for (const auto& [op, n] : counts) CHECK(n == 0);
  reset_cpu_fallback_counts();
  CHECK(total_fallbacks() == 0);
}

TEST_CASE("fallback: native CPU ops never use the fallback", "[fallback]") {
  reset_cpu_fallback_counts();
  double checksum = run_every_op();
  CHECK(std::isfinite(checksum));
  std::map<std::string, int64_t> counts = cpu_fallback_counts();
  for (const auto& [op, n] : counts) {
    INFO("op " << op);
    CHECK(n == 0);
  }
  CHECK(total_fallbacks() == 0);
}

TEST_CASE("fallback: disabling it leaves native CPU ops working", "[fallback]") {
  bool was = cpu_fallback_enabled();
  set_cpu_fallback_enabled(false);
  CHECK_FALSE(cpu_fallback_enabled());
  double checksum = 0;
  CHECK_NOTHROW(checksum = run_every_op());
  CHECK(checksum == run_every_op());
  set_cpu_fallback_enabled(true);
  CHECK(cpu_fallback_enabled());
  set_cpu_fallback_enabled(was);
  CHECK(total_fallbacks() == 0);
}

TEST_CASE("fallback: the CPU device registers kernels", "[fallback]") {
  std::vector<std::string> ops =
      KernelRegistry::instance().ops_for(DeviceType::from_name("cpu"));
  CHECK_FALSE(ops.empty());
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  // Optional kernels (fast paths over a composite) are listed, but not
  // among the ops every device must provide.
  const std::vector<std::string> required =
      KernelRegistry::instance().required_ops_for(DeviceType::from_name("cpu"));
  CHECK(std::count(ops.begin(), ops.end(), "attention_forward") == 1);
  CHECK(std::count(required.begin(), required.end(), "attention_forward") == 0);
  CHECK(std::count(required.begin(), required.end(), "adam_step") == 0);
  CHECK(std::count(required.begin(), required.end(), "binary") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "special_function") == 1);
  CHECK(std::count(required.begin(), required.end(), "special_function") == 0);
  CHECK(std::count(ops.begin(), ops.end(), "foreach_norm") == 1);
  CHECK(std::count(required.begin(), required.end(), "foreach_norm") == 0);
  // The 8 optional kernels: attention forward and backward, the three
  // optimizer steps, foreach_pointwise, foreach_norm, special_function.
  CHECK(required.size() + 8 == ops.size());
}
