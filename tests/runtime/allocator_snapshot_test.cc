// Caching allocator tests of what it reports about its memory: snapshot()
// (segments and their blocks) and allocated_block_containing(), and that
// both stay true to the statistics through splits, merges, pending blocks,
// empty_cache and the caching switch.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/stream/stream.h"
#include "tests/runtime/allocator_test_util.h"

namespace tessera::alloc_test {
namespace {

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Every segment is tiled by its blocks in address order, no two free
// blocks are neighbours, and the totals match the statistics.
void require_snapshot_consistent(const CachingAllocator& alloc) {
  const std::vector<SegmentSnapshot> segments = alloc.snapshot();
  const AllocatorStats stats = alloc.stats();
  int64_t reserved = 0, allocated = 0, requested = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const SegmentSnapshot& s = segments[i];
    if (i > 0) REQUIRE(segments[i - 1].address < s.address);
    REQUIRE(!s.blocks.empty());
    uintptr_t next = s.address;
    for (size_t j = 0; j < s.blocks.size(); ++j) {
      const BlockSnapshot& b = s.blocks[j];
      REQUIRE(b.address == next);
      next += b.size;
      if (j > 0 && b.state == BlockState::kFree) {
        REQUIRE(s.blocks[j - 1].state != BlockState::kFree);
      }
      if (b.state == BlockState::kAllocated) allocated += static_cast<int64_t>(b.size);
      requested += static_cast<int64_t>(b.requested);
    }
    REQUIRE(next == s.address + s.size);
    reserved += static_cast<int64_t>(s.size);
  }
  REQUIRE(reserved == stats.reserved_bytes.current);
  REQUIRE(allocated == stats.allocated_bytes.current);
  REQUIRE(requested == stats.requested_bytes.current);
  REQUIRE(static_cast<int64_t>(segments.size()) == stats.segment_count.current);
}

TEST_CASE("allocator snapshot: a split segment lists its blocks in address order") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();
  REQUIRE(alloc.snapshot().empty());

  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(3000, s);
  void* c = alloc.allocate(512, s);
  const std::vector<SegmentSnapshot> segments = alloc.snapshot();
  REQUIRE(segments.size() == 1);
  const SegmentSnapshot& seg = segments[0];
  REQUIRE(seg.address == addr(a));
  REQUIRE(seg.size == 2 * MiB);
  REQUIRE(seg.pool == SegmentPool::kSmall);
  REQUIRE(seg.stream_id == 0);
  REQUIRE(seg.blocks.size() == 4);
  REQUIRE(seg.blocks[0].address == addr(a));
  REQUIRE(seg.blocks[0].size == 1024);
  REQUIRE(seg.blocks[0].requested == 1000);
  REQUIRE(seg.blocks[0].state == BlockState::kAllocated);
  REQUIRE(seg.blocks[1].address == addr(b));
  REQUIRE(seg.blocks[1].size == 3072);
  REQUIRE(seg.blocks[2].address == addr(c));
  REQUIRE(seg.blocks[3].state == BlockState::kFree);
  REQUIRE(seg.blocks[3].requested == 0);
  REQUIRE(seg.blocks[3].size == 2 * MiB - 1024 - 3072 - 512);
  require_snapshot_consistent(alloc);

  // b, then its left neighbour a: one free block at the segment's start.
  alloc.deallocate(b);
  alloc.deallocate(a);
  std::vector<SegmentSnapshot> now = alloc.snapshot();
  REQUIRE(now[0].blocks.size() == 3);
  REQUIRE(now[0].blocks[0].address == addr(a));
  REQUIRE(now[0].blocks[0].size == 1024 + 3072);
  REQUIRE(now[0].blocks[0].state == BlockState::kFree);
  require_snapshot_consistent(alloc);

  alloc.deallocate(c);  // joins both free neighbours: the segment is whole
  now = alloc.snapshot();
  REQUIRE(now.size() == 1);
  REQUIRE(now[0].blocks.size() == 1);
  REQUIRE(now[0].blocks[0].size == 2 * MiB);
  REQUIRE(now[0].blocks[0].state == BlockState::kFree);
  alloc.empty_cache();
  REQUIRE(alloc.snapshot().empty());
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator snapshot: large and direct segments") {
  FakeDevice& fake = fresh_fake();
  const Stream s = default_stream();
  {
    CachingAllocator alloc(fake_device_id(), &fake);
    void* p = alloc.allocate(3 * MiB, s);
    const std::vector<SegmentSnapshot> segments = alloc.snapshot();
    REQUIRE(segments.size() == 1);
    REQUIRE(segments[0].pool == SegmentPool::kLarge);
    REQUIRE(segments[0].size == 20 * MiB);
    alloc.deallocate(p);
    alloc.empty_cache();
  }
  ScopedEnv off("TESSERA_DISABLE_CACHING_ALLOCATOR", "1");
  CachingAllocator alloc(fake_device_id(), &fake);
  void* p = alloc.allocate(1000, s);
  void* q = alloc.allocate(5000, s);
  std::vector<SegmentSnapshot> segments = alloc.snapshot();
  REQUIRE(segments.size() == 2);
  for (const SegmentSnapshot& seg : segments) {
    REQUIRE(seg.pool == SegmentPool::kDirect);
    REQUIRE(seg.blocks.size() == 1);
    REQUIRE(seg.blocks[0].size == seg.size);
    REQUIRE(seg.blocks[0].requested == seg.size);  // exact sizes
  }
  REQUIRE(alloc.allocated_block_containing(addr(q) + 4999, 1).has_value());
  alloc.deallocate(p);
  segments = alloc.snapshot();
  REQUIRE(segments.size() == 1);
  REQUIRE(segments[0].address == addr(q));
  alloc.deallocate(q);
  REQUIRE(alloc.snapshot().empty());
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator: allocated_block_containing finds handed-out blocks only") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream s = default_stream();
  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(4096, s);

  std::optional<BlockSnapshot> found = alloc.allocated_block_containing(addr(b) + 100, 3996);
  REQUIRE(found.has_value());
  REQUIRE(found->address == addr(b));
  REQUIRE(found->size == 4096);
  REQUIRE(found->requested == 4096);
  REQUIRE(alloc.allocated_block_containing(addr(b), 4096).has_value());
  REQUIRE(!alloc.allocated_block_containing(addr(b) + 100, 3997).has_value());  // past b
  REQUIRE(alloc.allocated_block_containing(addr(a) + 1023, 1)->address == addr(a));
  REQUIRE(!alloc.allocated_block_containing(addr(b) + 4096, 1).has_value());  // free rest
  REQUIRE(!alloc.allocated_block_containing(addr(a) - 1, 1).has_value());     // before
  REQUIRE(!alloc.allocated_block_containing(addr(a) + 2 * MiB, 1).has_value());
  int on_the_stack = 0;
  REQUIRE(!alloc.allocated_block_containing(addr(&on_the_stack), sizeof(int)).has_value());

  alloc.deallocate(a);  // freed memory is not live
  REQUIRE(!alloc.allocated_block_containing(addr(a), 1).has_value());

  // A block that waits for another stream's work is not live either.
  const Stream other = Stream::create(fake_device_id());
  alloc.record_stream(b, other);
  fake.submit_work(other.native());
  alloc.deallocate(b);
  REQUIRE(!alloc.allocated_block_containing(addr(b), 1).has_value());
  const std::vector<SegmentSnapshot> segments = alloc.snapshot();
  REQUIRE(segments[0].blocks[1].address == addr(b));
  REQUIRE(segments[0].blocks[1].state == BlockState::kPendingFree);
  REQUIRE(segments[0].blocks[1].requested == 0);
  fake.complete_stream(other.native());
  alloc.empty_cache();
  REQUIRE(alloc.snapshot().empty());
  require_consistent_with_device(alloc, fake);
}

TEST_CASE("allocator snapshot: random allocations and frees keep it consistent") {
  FakeDevice& fake = fresh_fake();
  CachingAllocator alloc(fake_device_id(), &fake);
  const Stream streams[] = {default_stream(), Stream::create(fake_device_id())};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size_of(1, 3 * MiB);
  std::vector<void*> live;
  for (int step = 0; step < 400; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      live.push_back(alloc.allocate(size_of(rng) >> (rng() % 8), streams[rng() % 2]));
    } else {
      const size_t i = rng() % live.size();
      alloc.deallocate(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (step % 97 == 0) alloc.empty_cache();
    require_snapshot_consistent(alloc);
    for (void* p : live) REQUIRE(alloc.allocated_block_containing(addr(p), 1)->address == addr(p));
  }
  for (void* p : live) alloc.deallocate(p);
  alloc.empty_cache();
  REQUIRE(alloc.snapshot().empty());
  require_consistent_with_device(alloc, fake);
}

}  // namespace
}  // namespace tessera::alloc_test
