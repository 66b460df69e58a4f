// The sub-allocator inside Vulkan memory blocks, without Vulkan.
#include <algorithm>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "devices/vulkan/range_allocator.h"
#include "runtime/core/error.h"

using tessera::vulkan::RangeAllocator;

TEST_CASE("range allocator: best fit, coalescing, exhaustion") {
  RangeAllocator ranges(1024);
  CHECK(ranges.empty());
  auto a = ranges.allocate(256);
  auto b = ranges.allocate(256);
  auto c = ranges.allocate(512);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(*a == 0);
  CHECK(*b == 256);
  CHECK(*c == 512);
  CHECK(ranges.free_bytes() == 0);
  CHECK_FALSE(ranges.allocate(1));

  ranges.free(*a, 256);
  ranges.free(*c, 512);
  // Best fit: 256 bytes go into the 256-byte hole, not the 512-byte one.
  auto d = ranges.allocate(256);
  REQUIRE(d);
  CHECK(*d == 0);
  ranges.free(*d, 256);
  // Freeing b merges [0, 1024) back into one range.
  ranges.free(*b, 256);
  CHECK(ranges.empty());
  CHECK(ranges.largest_free() == 1024);
  auto all = ranges.allocate(1024);
  REQUIRE(all);
  CHECK(*all == 0);
}

TEST_CASE("range allocator: double free and out-of-range free are errors") {
  RangeAllocator ranges(512);
  auto a = ranges.allocate(256);
  REQUIRE(a);
  ranges.free(*a, 256);
  CHECK_THROWS_AS(ranges.free(*a, 256), tessera::ValueError);
  CHECK_THROWS_AS(ranges.free(256, 512), tessera::ValueError);
  CHECK_THROWS_AS(ranges.allocate(0), tessera::ValueError);
}

TEST_CASE("range allocator: random allocate/free keeps ranges disjoint") {
  RangeAllocator ranges(1 << 20);
  std::mt19937 rng(7);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t size = 256 * (1 + rng() % 64);
      if (auto offset = ranges.allocate(size)) live.emplace_back(*offset, size);
    } else {
      const size_t k = rng() % live.size();
      ranges.free(live[k].first, live[k].second);
      live.erase(live.begin() + static_cast<long>(k));
    }
    uint64_t used = 0;
    for (auto& [offset, size] : live) used += size;
    REQUIRE(ranges.free_bytes() == ranges.capacity() - used);
  }
  std::sort(live.begin(), live.end());
  for (size_t i = 1; i < live.size(); ++i) {
    CHECK(live[i - 1].first + live[i - 1].second <= live[i].first);
  }
  for (auto& [offset, size] : live) ranges.free(offset, size);
  CHECK(ranges.empty());
  CHECK(ranges.largest_free() == ranges.capacity());
}
