// A few rounds of the stress (stress.h) on every device of this machine:
// threads, streams, cross-stream hand-overs, results against the host,
// the allocators' invariants after every round. ./dev soak runs the same
// for minutes.
#include <cstdio>

#include <catch2/catch.hpp>

#include "runtime/device/device_registry.h"
#include "runtime/tessera.h"
#include "tests/stress/stress.h"

namespace tessera::stress {
namespace {

TEST_CASE("random op sequences from threads on streams of every device agree with the host",
          "[stress]") {
  Options o;
  o.rounds = 4;
  const Result r = run(o);
  for (const std::string& f : r.failures) FAIL_CHECK(f);
  CHECK(r.failures.empty());
  CHECK(r.rounds.size() == 4);
  CHECK(!r.devices.empty());
  for (const Device& d : r.devices) {
    INFO(d.to_string());
    CHECK(check_allocator(d).empty());
  }
  if (!r.rounds.empty()) CHECK(r.rounds.back().ops > 0);
  std::printf("stress: %zu rounds, %lld ops on", r.rounds.size(),
              static_cast<long long>(r.rounds.empty() ? 0 : r.rounds.back().ops));
  for (const Device& d : r.devices) std::printf(" %s", d.to_string().c_str());
  std::printf("\n");
}

TEST_CASE("the allocator check finds a broken invariant's absence on a fresh device", "[stress]") {
  // The check itself on the host allocator between two allocations.
  Tensor a = empty({1000}, TensorOptions(DType::kF32, host_device()));
  CHECK(check_allocator(host_device()).empty());
  a = Tensor();
  CHECK(check_allocator(host_device()).empty());
}

}  // namespace
}  // namespace tessera::stress
