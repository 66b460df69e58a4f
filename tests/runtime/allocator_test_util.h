// Helpers shared by the caching allocator tests: a fresh fake device per
// test, and the check that the allocator's statistics match what the
// device has handed out.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/stream/stream.h"
#include "tests/support/fake_device.h"

namespace tessera::alloc_test {

using testing::fake_device;
using testing::fake_device_id;
using testing::FakeDevice;

inline constexpr size_t KiB = size_t{1} << 10;
inline constexpr size_t MiB = size_t{1} << 20;

// The caching itself is under test: it stays on even where the sanitizer
// configs (.bazelrc) make it a pass-through for every other test, before
// any allocator reads the variable.
inline const bool g_caching_on = [] {
  setenv("TESSERA_DISABLE_CACHING_ALLOCATOR", "0", 1);
  return true;
}();

// What the device held when the test began: a test that fails midway
// leaves its blocks behind, and later tests must not fail because of it.
inline size_t g_used_at_start = 0;
inline int64_t g_live_at_start = 0;

// Puts the shared fake device back in its initial state.
inline FakeDevice& fresh_fake() {
  FakeDevice& fake = fake_device();
  fake.synchronize_device(0);
  fake.set_capacity(FakeDevice::kDefaultCapacity);
  fake.reset_counters();
  g_used_at_start = fake.used_bytes();
  g_live_at_start = fake.live_allocations();
  return fake;
}

// Bytes and allocations this test's allocator holds on the device.
inline size_t used_by_test(const FakeDevice& fake) { return fake.used_bytes() - g_used_at_start; }
inline int64_t live_by_test(const FakeDevice& fake) { return fake.live_allocations() - g_live_at_start; }

inline Stream default_stream() { return Stream::default_stream(fake_device_id()); }

// What the allocator reports reserving must be exactly what the device has
// handed out (this allocator is the device's only client in each test).
inline void require_consistent_with_device(const CachingAllocator& alloc, const FakeDevice& fake) {
  AllocatorStats s = alloc.stats();
  REQUIRE(s.reserved_bytes.current == static_cast<int64_t>(used_by_test(fake)));
  REQUIRE(s.segment_count.current == live_by_test(fake));
  REQUIRE(s.active_bytes.current >= s.allocated_bytes.current);
  REQUIRE(s.allocated_bytes.current + s.inactive_split_bytes.current <= s.reserved_bytes.current);
  REQUIRE(s.requested_bytes.current <= s.allocated_bytes.current);
}

// Sets an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace tessera::alloc_test
