// Caching allocator tests about streams: per-stream pools, record_stream
// and pending blocks, and a multithreaded stress test.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/error.h"
#include "runtime/stream/stream.h"
#include "tests/runtime/allocator_test_util.h"

namespace tessera::alloc_test {
namespace {

TEST_CASE("allocator: a block used by another stream waits for that stream") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream a = Stream::create(fake_device_id());
  const Stream b = Stream::create(fake_device_id());

  // Above RecentBins::kMaxSize, so that freed blocks go to the pool at once
  // and best fit (lowest address first) decides which block is reused.
  constexpr size_t kSize = 64 * KiB;
  void* p = alloc.allocate(kSize, a);
  alloc.record_stream(p, b);
  fake.submit_work(b.native());  // b has work in flight that reads p
  alloc.deallocate(p);
  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 0);
  REQUIRE(st.active_bytes.current == static_cast<int64_t>(kSize));  // pending on b's event

  void* q = alloc.allocate(kSize, a);
  REQUIRE(q != p);  // b may still read p
  alloc.deallocate(q);
  void* r = alloc.allocate(kSize, a);
  REQUIRE(r != p);
  alloc.deallocate(r);

  fake.complete_stream(b.native());
  void* t = alloc.allocate(kSize, a);  // polls events first: p is free again
  REQUIRE(t == p);
  REQUIRE(alloc.stats().active_bytes.current == static_cast<int64_t>(kSize));
  alloc.deallocate(t);
  REQUIRE(alloc.stats().active_bytes.current == 0);
  REQUIRE(fake.raw_allocs() == 1);

  // Recording the allocation stream itself, or null, changes nothing.
  void* u = alloc.allocate(kSize, a);
  alloc.record_stream(u, a);
  alloc.record_stream(nullptr, b);
  fake.submit_work(a.native());
  alloc.deallocate(u);
  REQUIRE(alloc.allocate(kSize, a) == u);
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
  REQUIRE(used_by_test(fake) == 0);
  REQUIRE(fake.raw_allocs() == fake.raw_frees());
}

}  // namespace
}  // namespace tessera::alloc_test
