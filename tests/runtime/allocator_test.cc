// Unit tests of the caching allocator, on the fake device (tests/support),
// whose capacity, raw allocation counters and stream completion the tests
// control. Each test builds its own CachingAllocator, so tests do not see
// each other's cache.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/error.h"
#include "runtime/core/storage.h"
#include "runtime/stream/stream.h"
#include "tests/support/fake_device.h"

namespace tessera {
namespace {

using testing::fake_device;
using testing::fake_device_id;
using testing::FakeDevice;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

// Puts the shared fake device back in its initial state.
FakeDevice& fresh_fake() {
  FakeDevice& fake = fake_device();
  fake.synchronize_device(0);
  fake.set_capacity(FakeDevice::kDefaultCapacity);
  fake.reset_counters();
  return fake;
}

Stream default_stream() { return Stream::default_stream(fake_device_id()); }

// What the allocator reports reserving must be exactly what the device has
// handed out (this allocator is the device's only client in each test).
void require_consistent_with_device(const CachingAllocator& alloc, const FakeDevice& fake) {
  AllocatorStats s = alloc.stats();
  REQUIRE(s.reserved_bytes.current == static_cast<int64_t>(fake.used_bytes()));
  REQUIRE(s.segment_count.current == fake.live_allocations());
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

TEST_CASE("allocator: sizes round up to 512 bytes and zero bytes give nullptr") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  REQUIRE(alloc.allocate(0, s) == nullptr);
  REQUIRE(alloc.stats().allocation_count.current == 0);
  REQUIRE(fake.raw_allocs() == 0);

  void* a = alloc.allocate(1, s);
  REQUIRE(a != nullptr);
  REQUIRE(alloc.stats().allocated_bytes.current == 512);
  REQUIRE(alloc.stats().requested_bytes.current == 1);
  void* b = alloc.allocate(513, s);
  REQUIRE(alloc.stats().allocated_bytes.current == 512 + 1024);
  void* c = alloc.allocate(1024, s);
  REQUIRE(alloc.stats().allocated_bytes.current == 512 + 1024 + 1024);
  // Consecutive small blocks are carved from one segment, 512-aligned.
  REQUIRE(static_cast<char*>(b) == static_cast<char*>(a) + 512);
  REQUIRE(static_cast<char*>(c) == static_cast<char*>(b) + 1024);
  REQUIRE(reinterpret_cast<uintptr_t>(c) % 512 == 0);
  REQUIRE(fake.raw_allocs() == 1);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(2 * MiB));

  // Segment sizes: 20 MiB shared below 10 MiB, else rounded to 2 MiB.
  void* d = alloc.allocate(MiB + 1, s);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(22 * MiB));
  void* e1 = alloc.allocate(10 * MiB + 1, s);  // fits the rest of the 20 MiB
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(22 * MiB));
  void* e2 = alloc.allocate(10 * MiB + 1, s);  // a segment of its own
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(34 * MiB));
  REQUIRE(fake.raw_allocs() == 3);
  REQUIRE(alloc.stats().allocated_bytes.current ==
          static_cast<int64_t>(2560 + MiB + 512 + 2 * (10 * MiB + 512)));
  for (void* p : {a, b, c, d, e1, e2}) alloc.deallocate(p);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: a freed block is reused without a device allocation") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* p = alloc.allocate(4096, s);
  alloc.deallocate(p);
  REQUIRE(fake.raw_allocs() == 1);
  REQUIRE(fake.raw_frees() == 0);  // cached, not returned
  void* q = alloc.allocate(4000, s);  // rounds to the same 4096
  REQUIRE(q == p);
  REQUIRE(fake.raw_allocs() == 1);
  alloc.deallocate(q);

  void* big = alloc.allocate(12 * MiB, s);
  alloc.deallocate(big);
  REQUIRE(alloc.allocate(12 * MiB, s) == big);
  REQUIRE(fake.raw_allocs() == 2);
  alloc.deallocate(big);
}

TEST_CASE("allocator: blocks split within a segment and merge back when freed") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(1000, s);
  REQUIRE(fake.raw_allocs() == 1);  // both in one 2 MiB segment
  REQUIRE(static_cast<char*>(b) == static_cast<char*>(a) + 1024);
  REQUIRE(alloc.stats().inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - 2048));

  alloc.deallocate(a);
  // a's block is free but cannot merge yet: b sits between it and the rest.
  REQUIRE(alloc.stats().inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - 1024));
  alloc.deallocate(b);
  // All three pieces merged: the segment is whole again.
  REQUIRE(alloc.stats().inactive_split_bytes.current == 0);

  // The whole segment serves the largest small request from its start.
  void* big = alloc.allocate(MiB, s);
  REQUIRE(big == a);
  void* rest = alloc.allocate(MiB, s);
  REQUIRE(static_cast<char*>(rest) == static_cast<char*>(a) + MiB);
  REQUIRE(fake.raw_allocs() == 1);
  REQUIRE(alloc.stats().inactive_split_bytes.current == 0);  // nothing free left
  alloc.deallocate(big);
  alloc.deallocate(rest);

  // Large pool: the remainder is split off only when above 1 MiB.
  void* l1 = alloc.allocate(19 * MiB, s);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(22 * MiB));
  REQUIRE(alloc.stats().allocated_bytes.current == static_cast<int64_t>(20 * MiB));
  alloc.deallocate(l1);
  void* l2 = alloc.allocate(2 * MiB, s);
  REQUIRE(l2 == l1);
  REQUIRE(alloc.stats().allocated_bytes.current == static_cast<int64_t>(2 * MiB));
  REQUIRE(alloc.stats().inactive_split_bytes.current == static_cast<int64_t>(18 * MiB));
  alloc.deallocate(l2);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: small and large requests come from separate pools") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* small = alloc.allocate(MiB, s);
  void* large = alloc.allocate(MiB + 512, s);
  REQUIRE(fake.raw_allocs() == 2);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(22 * MiB));
  alloc.deallocate(large);

  // The large segment's free 20 MiB is never used for small requests.
  void* s2 = alloc.allocate(MiB, s);  // the second half of the small segment
  REQUIRE(static_cast<char*>(s2) == static_cast<char*>(small) + MiB);
  void* s3 = alloc.allocate(4096, s);  // small segment full: a new one
  REQUIRE(fake.raw_allocs() == 3);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(24 * MiB));

  // Large requests use the cached large segment, splitting it.
  void* l1 = alloc.allocate(4 * MiB, s);
  REQUIRE(l1 == large);
  void* l2 = alloc.allocate(12 * MiB, s);  // fits the remaining 16 MiB
  REQUIRE(static_cast<char*>(l2) == static_cast<char*>(large) + 4 * MiB);
  void* l3 = alloc.allocate(12 * MiB, s);  // its own 12 MiB segment
  REQUIRE(fake.raw_allocs() == 4);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(36 * MiB));
  for (void* p : {small, s2, s3, l1, l2, l3}) alloc.deallocate(p);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: statistics follow every step") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 0);
  REQUIRE(st.reserved_bytes.current == 0);
  REQUIRE(st.num_device_allocs == 0);

  void* a = alloc.allocate(100, s);
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 512);
  REQUIRE(st.active_bytes.current == 512);
  REQUIRE(st.requested_bytes.current == 100);
  REQUIRE(st.reserved_bytes.current == static_cast<int64_t>(2 * MiB));
  REQUIRE(st.allocation_count.current == 1);
  REQUIRE(st.segment_count.current == 1);
  REQUIRE(st.num_device_allocs == 1);
  require_consistent_with_device(alloc, fake);

  void* b = alloc.allocate(3 * MiB, s);
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == static_cast<int64_t>(512 + 3 * MiB));
  REQUIRE(st.reserved_bytes.current == static_cast<int64_t>(22 * MiB));
  REQUIRE(st.allocation_count.current == 2);
  REQUIRE(st.segment_count.current == 2);
  REQUIRE(st.inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - 512 + 17 * MiB));

  alloc.deallocate(b);
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 512);
  REQUIRE(st.allocated_bytes.peak == static_cast<int64_t>(512 + 3 * MiB));
  REQUIRE(st.allocated_bytes.allocated == static_cast<int64_t>(512 + 3 * MiB));
  REQUIRE(st.allocated_bytes.freed == static_cast<int64_t>(3 * MiB));
  REQUIRE(st.active_bytes.current == 512);
  REQUIRE(st.reserved_bytes.current == static_cast<int64_t>(22 * MiB));  // cached
  REQUIRE(st.allocation_count.current == 1);
  REQUIRE(st.allocation_count.peak == 2);
  REQUIRE(st.requested_bytes.current == 100);

  alloc.reset_peak_stats();
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.peak == 512);
  REQUIRE(st.allocation_count.peak == 1);
  REQUIRE(st.reserved_bytes.peak == static_cast<int64_t>(22 * MiB));

  alloc.deallocate(a);
  alloc.empty_cache();
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 0);
  REQUIRE(st.active_bytes.current == 0);
  REQUIRE(st.requested_bytes.current == 0);
  REQUIRE(st.reserved_bytes.current == 0);
  REQUIRE(st.segment_count.current == 0);
  REQUIRE(st.inactive_split_bytes.current == 0);
  REQUIRE(st.num_device_allocs == 2);
  REQUIRE(st.num_device_frees == 2);
  REQUIRE(st.allocated_bytes.peak == 512);
  require_consistent_with_device(alloc, fake);

  alloc.reset_accumulated_stats();
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.allocated == 0);
  REQUIRE(st.num_device_allocs == 0);
  REQUIRE(st.num_device_frees == 0);
}

TEST_CASE("allocator: a block used by another stream waits for that stream") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream a = Stream::create(fake_device_id());
  const Stream b = Stream::create(fake_device_id());

  void* p = alloc.allocate(4096, a);
  alloc.record_stream(p, b);
  fake.submit_work(b.native());  // b has work in flight that reads p
  alloc.deallocate(p);
  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 0);
  REQUIRE(st.active_bytes.current == 4096);  // pending on b's event

  void* q = alloc.allocate(4096, a);
  REQUIRE(q != p);  // b may still read p
  alloc.deallocate(q);
  void* r = alloc.allocate(4096, a);
  REQUIRE(r != p);
  alloc.deallocate(r);

  fake.complete_stream(b.native());
  void* t = alloc.allocate(4096, a);  // polls events first: p is free again
  REQUIRE(t == p);
  REQUIRE(alloc.stats().active_bytes.current == 4096);
  alloc.deallocate(t);
  REQUIRE(alloc.stats().active_bytes.current == 0);
  REQUIRE(fake.raw_allocs() == 1);

  // Recording the allocation stream itself, or null, changes nothing.
  void* u = alloc.allocate(4096, a);
  alloc.record_stream(u, a);
  alloc.record_stream(nullptr, b);
  fake.submit_work(a.native());
  alloc.deallocate(u);
  REQUIRE(alloc.allocate(4096, a) == u);
  alloc.deallocate(u);
  fake.complete_stream(a.native());
}

TEST_CASE("allocator: empty_cache waits for pending blocks and returns them") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream a = Stream::create(fake_device_id());
  const Stream b = Stream::create(fake_device_id());

  void* p = alloc.allocate(MiB, a);
  alloc.record_stream(p, b);
  fake.submit_work(b.native());
  alloc.deallocate(p);
  REQUIRE(alloc.stats().active_bytes.current == static_cast<int64_t>(MiB));
  alloc.empty_cache();
  REQUIRE(fake.query_stream(0, b.native()));  // it waited for b
  AllocatorStats st = alloc.stats();
  REQUIRE(st.active_bytes.current == 0);
  REQUIRE(st.reserved_bytes.current == 0);
  REQUIRE(fake.raw_frees() == 1);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: a block freed on one stream is not reused on another") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream a = Stream::create(fake_device_id());
  const Stream b = Stream::create(fake_device_id());

  void* p = alloc.allocate(4096, a);
  alloc.deallocate(p);
  void* q = alloc.allocate(4096, b);
  REQUIRE(q != p);
  REQUIRE(fake.raw_allocs() == 2);  // b got its own segment
  alloc.deallocate(q);
  REQUIRE(alloc.allocate(4096, a) == p);
  REQUIRE(alloc.allocate(4096, b) == q);
  alloc.deallocate(p);
  alloc.deallocate(q);

  // A stream of another device is refused.
  REQUIRE_THROWS_AS(alloc.allocate(16, Stream(Device{DeviceType{200}, 0}, 0)), ValueError);
}

TEST_CASE("allocator: out of memory frees the cache and retries") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(16 * MiB);
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(alloc.allocate(MiB, s));  // 4 segments
  for (void* p : blocks) alloc.deallocate(p);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(8 * MiB));

  // 8 MiB cached + a 10 MiB segment > 16 MiB: the cache must go first.
  void* big = alloc.allocate(10 * MiB, s);
  REQUIRE(big != nullptr);
  AllocatorStats st = alloc.stats();
  REQUIRE(st.num_alloc_retries == 1);
  REQUIRE(st.num_ooms == 0);
  REQUIRE(st.reserved_bytes.current == static_cast<int64_t>(10 * MiB));
  REQUIRE(fake.raw_frees() == 4);
  require_consistent_with_device(alloc, fake);
  alloc.deallocate(big);
}

TEST_CASE("allocator: a request the device cannot hold throws OutOfMemoryError") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(16 * MiB);
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* keep = alloc.allocate(4096, s);
  REQUIRE_THROWS_AS(alloc.allocate(size_t{1} << 30, s), OutOfMemoryError);
  REQUIRE_THROWS_WITH(alloc.allocate(size_t{1} << 30, s), Catch::Contains("1073741824") &&
                                                              Catch::Contains("reserved") &&
                                                              Catch::Contains("fake_alloc:0") &&
                                                              Catch::Contains("1.00 GiB"));
  AllocatorStats st = alloc.stats();
  REQUIRE(st.num_ooms == 2);
  REQUIRE(st.num_alloc_retries == 2);
  REQUIRE(st.allocated_bytes.current == 512 * 8);
  // Still usable afterwards, and the live block survived the cache flush.
  void* more = alloc.allocate(4096, s);
  REQUIRE(more != nullptr);
  alloc.deallocate(more);
  alloc.deallocate(keep);
  require_consistent_with_device(alloc, fake);

  // Sizes that overflow when rounded are rejected, not wrapped.
  REQUIRE_THROWS_AS(alloc.allocate(SIZE_MAX - 10, s), ValueError);
}

TEST_CASE("allocator: the memory fraction caps reserved bytes") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(64 * MiB);
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  REQUIRE(alloc.memory_fraction() == 1.0);
  REQUIRE_THROWS_AS(alloc.set_memory_fraction(0.0), ValueError);
  REQUIRE_THROWS_AS(alloc.set_memory_fraction(1.5), ValueError);
  alloc.set_memory_fraction(0.25);  // 16 MiB
  REQUIRE(alloc.memory_fraction() == 0.25);

  void* small = alloc.allocate(MiB, s);  // a 2 MiB segment fits under the cap
  REQUIRE(small != nullptr);
  // A 4 MiB request needs a 20 MiB segment: over the cap, though the device
  // has room.
  REQUIRE_THROWS_WITH(alloc.allocate(4 * MiB, s), Catch::Contains("memory fraction 0.25"));
  REQUIRE_THROWS_AS(alloc.allocate(16 * MiB, s), OutOfMemoryError);  // 2 + 16 > 16
  void* fits = alloc.allocate(14 * MiB, s);  // 2 + 14 <= 16: exactly at the cap
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(16 * MiB));
  REQUIRE(alloc.stats().num_ooms == 2);

  alloc.set_memory_fraction(1.0);
  void* now_ok = alloc.allocate(4 * MiB, s);
  REQUIRE(now_ok != nullptr);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(36 * MiB));
  for (void* p : {small, fits, now_ok}) alloc.deallocate(p);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: empty_cache returns wholly free segments to the device") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(2 * MiB, s);
  void* c = alloc.allocate(30 * MiB, s);
  void* live = alloc.allocate(5000, s);  // shares a's segment: keeps it
  for (void* p : {a, b, c}) alloc.deallocate(p);
  REQUIRE(fake.raw_allocs() == 3);
  alloc.empty_cache();
  REQUIRE(fake.raw_frees() == 2);
  REQUIRE(alloc.stats().reserved_bytes.current == static_cast<int64_t>(2 * MiB));
  require_consistent_with_device(alloc, fake);

  alloc.deallocate(live);
  alloc.empty_cache();
  REQUIRE(fake.raw_frees() == 3);
  REQUIRE(alloc.stats().reserved_bytes.current == 0);
  REQUIRE(alloc.stats().segment_count.current == 0);
  REQUIRE(fake.used_bytes() == 0);
}

TEST_CASE("allocator: the destructor returns cached segments") {
  FakeDevice& fake = fresh_fake();
  {
    CachingAllocator alloc(fake_device_id(), &fake);
    void* p = alloc.allocate(3 * MiB, default_stream());
    alloc.deallocate(p);
  }
  REQUIRE(fake.raw_frees() == 1);
  REQUIRE(fake.used_bytes() == 0);
}

TEST_CASE("allocator: TESSERA_DISABLE_CACHING_ALLOCATOR goes to the device each time") {
  FakeDevice& fake = fresh_fake();
  ScopedEnv env("TESSERA_DISABLE_CACHING_ALLOCATOR", "1");
  CachingAllocator alloc(fake_device_id(), &fake);
  REQUIRE(alloc.caching_disabled());
  const Stream s = default_stream();

  void* p = alloc.allocate(1000, s);
  REQUIRE(fake.raw_allocs() == 1);
  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 1000);  // no rounding: exact for sanitizers
  REQUIRE(st.reserved_bytes.current == 1000);
  REQUIRE(st.allocation_count.current == 1);
  alloc.deallocate(p);
  REQUIRE(fake.raw_frees() == 1);
  void* kept = alloc.allocate(1000, s);
  REQUIRE(fake.raw_allocs() == 2);

  // record_stream: the free waits for the other stream, then frees at once.
  const Stream other = Stream::create(fake_device_id());
  void* q = alloc.allocate(4096, s);
  alloc.record_stream(q, other);
  fake.submit_work(other.native());
  REQUIRE_FALSE(fake.query_stream(0, other.native()));
  alloc.deallocate(q);
  REQUIRE(fake.query_stream(0, other.native()));
  REQUIRE(fake.raw_frees() == 2);
  require_consistent_with_device(alloc, fake);
  st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 1000);  // the one left live above
  REQUIRE(st.num_device_allocs == 3);
  REQUIRE(st.num_device_frees == 2);

  fake.set_capacity(fake.used_bytes() + 100);
  REQUIRE_THROWS_AS(alloc.allocate(4096, s), OutOfMemoryError);
  REQUIRE(alloc.stats().num_ooms == 1);
  alloc.deallocate(kept);
  REQUIRE(fake.used_bytes() == 0);
}

TEST_CASE("allocator: caching is on unless the variable is set") {
  FakeDevice& fake = fresh_fake();
  ScopedEnv env("TESSERA_DISABLE_CACHING_ALLOCATOR", "0");
  CachingAllocator alloc(fake_device_id(), &fake);
  REQUIRE_FALSE(alloc.caching_disabled());
}

TEST_CASE("allocator: freeing a pointer it did not allocate is a ValueError") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  int local = 0;
  REQUIRE_THROWS_AS(alloc.deallocate(&local), ValueError);
  REQUIRE_THROWS_WITH(alloc.deallocate(&local), Catch::Contains("CachingAllocator::deallocate") &&
                                                    Catch::Contains("fake_alloc:0"));
  REQUIRE_NOTHROW(alloc.deallocate(nullptr));

  void* p = alloc.allocate(100, s);
  // An interior pointer is not an allocation either.
  REQUIRE_THROWS_AS(alloc.deallocate(static_cast<char*>(p) + 8), ValueError);
  REQUIRE_THROWS_AS(alloc.record_stream(&local, s), ValueError);
  alloc.deallocate(p);
  REQUIRE_THROWS_AS(alloc.deallocate(p), ValueError);  // double free
  REQUIRE(alloc.stats().allocation_count.current == 0);
}

TEST_CASE("allocator: Storage frees through its allocator") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  {
    void* p = alloc.allocate(100, default_stream());
    Storage storage(fake_device_id(), p, 100, &alloc);
    REQUIRE(storage.data() == p);
    REQUIRE(alloc.stats().allocation_count.current == 1);
  }
  REQUIRE(alloc.stats().allocation_count.current == 0);

  // allocate_storage goes through the device's process-wide allocator.
  CachingAllocator& global = CachingAllocator::get(fake_device_id());
  REQUIRE(&global == &CachingAllocator::get(fake_device_id()));
  const int64_t before = global.stats().allocation_count.current;
  {
    StoragePtr st = allocate_storage(fake_device_id(), 1000);
    REQUIRE(st->nbytes() == 1000);
    REQUIRE(st->allocator() == &global);
    REQUIRE(global.stats().allocation_count.current == before + 1);
  }
  REQUIRE(global.stats().allocation_count.current == before);
  global.empty_cache();  // leave the device to the per-test allocators
  REQUIRE(allocate_storage(fake_device_id(), 0)->data() == nullptr);
}

TEST_CASE("allocator: concurrent random allocations keep blocks disjoint and stats exact") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(size_t{64} << 30);  // host pages are touched only where written
  CachingAllocator alloc(fake_device_id(), &fake);
  constexpr int kThreads = 4;
  constexpr int kIters = 20000;
  constexpr size_t kMaxLive = 32;
  std::vector<Stream> streams;
  for (int t = 0; t < kThreads; ++t) streams.push_back(Stream::create(fake_device_id()));

  std::atomic<int> corrupted{0};
  std::atomic<int> failures{0};
  auto worker = [&](int t) {
    std::mt19937_64 rng(1234 + t);
    struct Live {
      void* ptr;
      size_t size;
      uint64_t tag;
    };
    std::vector<Live> live;
    auto random_size = [&]() -> size_t {
      const int kind = static_cast<int>(rng() % 100);
      if (kind < 70) return 16 + rng() % (64 * KiB);
      if (kind < 95) return 64 * KiB + rng() % (4 * MiB);
      return 4 * MiB + rng() % (20 * MiB);
    };
    auto release = [&](size_t i) {
      Live l = live[i];
      uint64_t head, tail;
      std::memcpy(&head, l.ptr, 8);
      std::memcpy(&tail, static_cast<char*>(l.ptr) + l.size - 8, 8);
      if (head != l.tag || tail != l.tag) ++corrupted;
      alloc.deallocate(l.ptr);
      live[i] = live.back();
      live.pop_back();
    };
    try {
      for (int it = 0; it < kIters; ++it) {
        if (!live.empty() && (live.size() >= kMaxLive || rng() % 2 == 0)) {
          release(rng() % live.size());
          continue;
        }
        const size_t size = random_size();
        const Stream& s = streams[t];
        void* p = alloc.allocate(size, s);
        const uint64_t tag = (uint64_t(t) << 32) | uint64_t(it);
        // Tags at both ends: an overlapping block would overwrite one.
        std::memcpy(p, &tag, 8);
        std::memcpy(static_cast<char*>(p) + size - 8, &tag, 8);
        live.push_back(Live{p, size, tag});
        if (rng() % 16 == 0) {  // another thread's stream uses it too
          const Stream& other = streams[(t + 1) % kThreads];
          alloc.record_stream(p, other);
          fake.submit_work(other.native());
        }
        if (rng() % 64 == 0) fake.complete_stream(streams[rng() % kThreads].native());
      }
      while (!live.empty()) release(live.size() - 1);
    } catch (const std::exception& e) {
      ++failures;
      WARN(e.what());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();

  REQUIRE(failures == 0);
  REQUIRE(corrupted == 0);
  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 0);
  REQUIRE(st.requested_bytes.current == 0);
  REQUIRE(st.allocation_count.current == 0);
  REQUIRE(st.num_ooms == 0);
  REQUIRE(st.allocation_count.allocated == st.allocation_count.freed);
  require_consistent_with_device(alloc, fake);

  alloc.empty_cache();  // waits for every pending block, then returns all
  st = alloc.stats();
  REQUIRE(st.active_bytes.current == 0);
  REQUIRE(st.inactive_split_bytes.current == 0);
  REQUIRE(st.reserved_bytes.current == 0);
  REQUIRE(st.segment_count.current == 0);
  REQUIRE(fake.used_bytes() == 0);
  REQUIRE(fake.raw_allocs() == fake.raw_frees());
}

}  // namespace
}  // namespace tessera
