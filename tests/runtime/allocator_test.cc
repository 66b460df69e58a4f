// Unit tests of the caching allocator on the fake device (tests/support),
// whose capacity, raw allocation counters and stream completion the tests
// control: sizes, reuse, splitting and merging, pools, statistics, OOM,
// memory fraction, empty_cache, the caching switch, bad pointers, Storage.
// Each test builds its own CachingAllocator, so tests do not share a cache.
// Streams and threads: allocator_stream_test.cc.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/alloc/pointer_map.h"
#include "runtime/core/error.h"
#include "runtime/core/storage.h"
#include "runtime/stream/stream.h"
#include "tests/runtime/allocator_test_util.h"

namespace tessera::alloc_test {
namespace {

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
  REQUIRE((static_cast<char*>(c) - static_cast<char*>(a)) % 512 == 0);
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

  // Pieces above RecentBins::kMaxSize merge as soon as they are freed.
  constexpr size_t kPiece = 20 * KiB;
  void* a = alloc.allocate(kPiece - 100, s);
  void* b = alloc.allocate(kPiece - 100, s);
  REQUIRE(fake.raw_allocs() == 1);  // both in one 2 MiB segment
  REQUIRE(static_cast<char*>(b) == static_cast<char*>(a) + kPiece);
  REQUIRE(alloc.stats().inactive_split_bytes.current ==
          static_cast<int64_t>(2 * MiB - 2 * kPiece));

  alloc.deallocate(a);
  // a's block is free but cannot merge yet: b sits between it and the rest.
  REQUIRE(alloc.stats().inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - kPiece));
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

TEST_CASE("allocator: a small block freed a moment ago serves the next request of its size") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(1000, s);
  alloc.deallocate(a);
  // Free in every statistic, though kept whole rather than merged.
  AllocatorStats st = alloc.stats();
  REQUIRE(st.allocated_bytes.current == 1024);
  REQUIRE(st.active_bytes.current == 1024);
  REQUIRE(st.inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - 1024));
  // Freed memory is not a live block, whatever keeps it.
  REQUIRE_FALSE(alloc.allocated_block_containing(reinterpret_cast<uintptr_t>(a), 1));
  REQUIRE(alloc.allocate(1000, s) == a);
  REQUIRE(alloc.stats().active_bytes.current == 2048);
  REQUIRE(alloc.stats().inactive_split_bytes.current == static_cast<int64_t>(2 * MiB - 2048));
  REQUIRE(alloc.allocated_block_containing(reinterpret_cast<uintptr_t>(a), 1000)->address ==
          reinterpret_cast<uintptr_t>(a));

  // Up to RecentBins::kDepth (4) a size are kept, and served newest
  // first; the blocks freed when those are full merge at once.
  std::vector<void*> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(alloc.allocate(4096, s));
  for (void* p : blocks) alloc.deallocate(p);
  for (int i = 3; i >= 0; --i) REQUIRE(alloc.allocate(4096, s) == blocks[i]);
  // blocks[4] and [5] merged with the rest of the segment; best fit cuts
  // the next 4 KiB from the start of that free range.
  REQUIRE(alloc.allocate(4096, s) == blocks[4]);
  for (int i = 0; i < 5; ++i) alloc.deallocate(blocks[i]);

  // A snapshot merges what is kept: no two free neighbours, and with a and
  // b freed the segment is one free block.
  alloc.deallocate(a);
  alloc.deallocate(b);
  REQUIRE(alloc.stats().active_bytes.current == 0);
  const std::vector<SegmentSnapshot> segments = alloc.snapshot();
  REQUIRE(segments.size() == 1);
  REQUIRE(segments[0].blocks.size() == 1);
  REQUIRE(segments[0].blocks[0].state == BlockState::kFree);
  REQUIRE(alloc.stats().inactive_split_bytes.current == 0);
  REQUIRE(alloc.allocate(MiB, s) == a);  // the largest small request, from its start
  REQUIRE(fake.raw_allocs() == 1);
  alloc.deallocate(a);

  // empty_cache returns a segment whose last pieces are kept whole.
  void* c = alloc.allocate(1000, s);
  alloc.deallocate(c);
  alloc.empty_cache();
  REQUIRE(fake.raw_frees() == 1);
  REQUIRE(alloc.stats().reserved_bytes.current == 0);
  REQUIRE(alloc.stats().inactive_split_bytes.current == 0);
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: out of memory merges the small blocks kept whole and retries") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(g_used_at_start + 20 * MiB);
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();

  void* p = alloc.allocate(1000, s);
  alloc.deallocate(p);  // kept whole: its 2 MiB segment is not wholly free yet
  // 2 MiB cached + a 20 MiB segment > 20 MiB.
  void* big = alloc.allocate(19 * MiB, s);
  REQUIRE(alloc.stats().num_alloc_retries == 1);
  REQUIRE(fake.raw_frees() == 1);
  alloc.deallocate(big);
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

TEST_CASE("allocator: out of memory frees the cache and retries") {
  FakeDevice& fake = fresh_fake();
  fake.set_capacity(g_used_at_start + 16 * MiB);
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
  fake.set_capacity(g_used_at_start + 16 * MiB);
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
  REQUIRE(used_by_test(fake) == 0);
}

TEST_CASE("allocator: the destructor returns cached segments") {
  FakeDevice& fake = fresh_fake();
  {
    CachingAllocator alloc(fake_device_id(), &fake);
    void* p = alloc.allocate(3 * MiB, default_stream());
    alloc.deallocate(p);
  }
  REQUIRE(fake.raw_frees() == 1);
  REQUIRE(used_by_test(fake) == 0);
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

  fake.set_capacity(fake.used_bytes() + 100);  // no room for more
  REQUIRE_THROWS_AS(alloc.allocate(4096, s), OutOfMemoryError);
  REQUIRE(alloc.stats().num_ooms == 1);
  alloc.deallocate(kept);
  REQUIRE(used_by_test(fake) == 0);
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

TEST_CASE("allocator: the live-block table agrees with std::unordered_map") {
  // Random inserts and erases of 512-aligned addresses, the allocator's
  // pattern; backward-shift deletion must never lose a key.
  alloc_detail::PointerMap<int*> map;
  std::unordered_map<const void*, int*> ref;
  std::vector<int> values(64);
  std::mt19937_64 rng(7);
  std::vector<const void*> keys;
  int mismatches = 0;  // counted, not REQUIREd one by one: millions of checks
  for (int i = 0; i < 200000; ++i) {
    if (keys.empty() || rng() % 3 != 0) {
      const void* k = reinterpret_cast<const void*>((1 + rng() % 100000) * 512);
      if (ref.count(k) != 0) continue;
      int* v = &values[rng() % values.size()];
      map.insert(k, v);
      ref.emplace(k, v);
      keys.push_back(k);
    } else {
      const size_t j = rng() % keys.size();
      const void* k = keys[j];
      keys[j] = keys.back();
      keys.pop_back();
      mismatches += map.erase(k) != ref.at(k);
      ref.erase(k);
      mismatches += map.find(k) != nullptr;
    }
    if (i % 1000 == 0) {
      mismatches += map.size() != ref.size();
      for (const auto& [k, v] : ref) mismatches += map.find(k) != v;
    }
  }
  REQUIRE(mismatches == 0);
  REQUIRE(map.size() == ref.size());
  REQUIRE(map.erase(nullptr) == nullptr);
  REQUIRE(map.find(reinterpret_cast<const void*>(512 * 100001)) == nullptr);
}

}  // namespace
}  // namespace tessera::alloc_test
