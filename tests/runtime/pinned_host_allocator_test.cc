// The pinned host allocator on the CPU device and a fake device whose
// streams finish only when the test says: where its memory comes from,
// caching by size, blocks held back for streams that used them, and
// non-blocking copies through copy_.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/stream/stream.h"
#include "tests/support/fake_device.h"

namespace tessera {
namespace {

using testing::fake_device;
using testing::fake_device_id;

// Each test starts from an empty cache with the fake device pinning, and
// uses block sizes of its own (the allocator is one per process).
PinnedHostAllocator& fresh_allocator(bool pinning) {
  fake_device().synchronize_device(0);
  fake_device().set_host_pinning(pinning);
  PinnedHostAllocator& a = PinnedHostAllocator::get();
  a.empty_cache();
  return a;
}

TEST_CASE("pinned host memory: page-locked blocks from the device, cached by size") {
  PinnedHostAllocator& alloc = fresh_allocator(true);
  const int64_t live_before = fake_device().live_host_allocations();
  const PinnedHostStats before = alloc.stats();

  StoragePtr a = alloc.allocate(5000);  // an 8 KiB block
  REQUIRE(a->device() == host_device());
  REQUIRE(a->nbytes() == 5000);
  auto* base = static_cast<unsigned char*>(a->data());
  REQUIRE(alloc.owns(base));
  REQUIRE(alloc.owns(base + 4999));
  REQUIRE(alloc.owns(base + 8191));  // the rest of the block is still ours
  REQUIRE_FALSE(alloc.owns(base + 8192));
  REQUIRE(alloc.page_locked(base));
  REQUIRE(fake_device().live_host_allocations() == live_before + 1);
  REQUIRE(alloc.stats().allocated_bytes == before.allocated_bytes + 8192);
  std::memset(base, 7, 5000);  // it is host memory

  void* first = a->data();
  a.reset();
  REQUIRE_FALSE(alloc.owns(first));
  REQUIRE(alloc.stats().cached_bytes == before.cached_bytes + 8192);

  // The same power-of-two size comes back from the cache.
  StoragePtr b = alloc.allocate(8000);
  REQUIRE(b->data() == first);
  REQUIRE(alloc.stats().cache_hits == before.cache_hits + 1);
  REQUIRE(fake_device().live_host_allocations() == live_before + 1);
  // Another size does not.
  StoragePtr c = alloc.allocate(100);  // 4 KiB, the smallest block
  REQUIRE(c->data() != first);
  REQUIRE(fake_device().live_host_allocations() == live_before + 2);
  b.reset();
  c.reset();

  alloc.empty_cache();
  REQUIRE(fake_device().live_host_allocations() == live_before);
  REQUIRE(alloc.stats().cached_bytes == 0);
  REQUIRE(alloc.stats().peak_allocated_bytes >= before.allocated_bytes + 8192 + 4096);
}

TEST_CASE("pinned host memory: ordinary memory where no device can pin") {
  PinnedHostAllocator& alloc = fresh_allocator(false);
  const int64_t live_before = fake_device().live_host_allocations();
  StoragePtr a = alloc.allocate(3 << 20);
  REQUIRE(alloc.owns(a->data()));
  REQUIRE_FALSE(alloc.page_locked(a->data()));
  REQUIRE(fake_device().live_host_allocations() == live_before);
  std::memset(a->data(), 1, 3 << 20);

  // Empty requests need no memory; absurd ones fail with a clear error.
  REQUIRE(alloc.allocate(0)->data() == nullptr);
  REQUIRE_THROWS_AS(alloc.allocate(~size_t{0}), OutOfMemoryError);
  REQUIRE_THROWS_WITH(alloc.allocate(~size_t{0}),
                      Catch::Contains("pinned host memory") && Catch::Contains("larger than any"));
}

TEST_CASE("pinned host memory: a block a stream used waits for that stream") {
  PinnedHostAllocator& alloc = fresh_allocator(true);
  const Stream stream = Stream::create(fake_device_id());

  StoragePtr a = alloc.allocate(40000);  // a 64 KiB block
  void* first = a->data();
  REQUIRE(alloc.record_stream(static_cast<char*>(first) + 100, stream));
  REQUIRE_FALSE(alloc.record_stream(&stream, stream));  // not pinned memory
  fake_device().submit_work(stream.native());  // a copy still reads it
  a.reset();
  REQUIRE(alloc.stats().pending_bytes >= 65536);

  StoragePtr b = alloc.allocate(40000);
  REQUIRE(b->data() != first);  // the stream may still read the first block

  fake_device().complete_stream(stream.native());
  StoragePtr c = alloc.allocate(40000);  // events are polled first
  REQUIRE(c->data() == first);
  b.reset();
  c.reset();
  REQUIRE(alloc.stats().pending_bytes == 0);
}

TEST_CASE("pinned host memory: tensors, pin_memory and non-blocking copies") {
  fresh_allocator(true);
  Tensor host = arange(0, 1000, 1, TensorOptions(DType::kF32));
  REQUIRE_FALSE(host.is_pinned());
  Tensor pinned = host.pin_memory();
  REQUIRE(pinned.is_pinned());
  REQUIRE(pinned.pin_memory().is_same(pinned));
  REQUIRE(pinned.to_vector<float>() == host.to_vector<float>());

  Tensor empty_one = empty_pinned({0}, DType::kI64);
  REQUIRE(empty_one.numel() == 0);
  REQUIRE_FALSE(empty_one.is_pinned());
  Tensor shaped = empty_pinned({3, 4}, DType::kF64);
  REQUIRE(shaped.is_pinned());
  REQUIRE(shaped.is_contiguous());

  // Host-to-host "non-blocking" copies are ordinary ones.
  Tensor back = empty({1000}, DType::kF32);
  back.copy_(pinned, /*non_blocking=*/true);
  REQUIRE(back.to_vector<float>() == host.to_vector<float>());
}

TEST_CASE("pinned host memory: non-blocking copies stay in flight, pageable ones do not") {
  fresh_allocator(true);
  const Tensor values = arange(0, 1000, 1, TensorOptions(DType::kF32));
  Tensor pinned = values.pin_memory();
  Tensor on_device = empty({1000}, TensorOptions(DType::kF32, fake_device_id()));
  const Stream stream = current_stream(fake_device_id());
  stream.synchronize();

  on_device.copy_(pinned, /*non_blocking=*/true);
  REQUIRE_FALSE(stream.query());  // left in flight on the stream
  void* block = pinned.data_ptr();
  pinned = Tensor();  // freed while the copy may still read it
  Tensor other = empty_pinned({1000}, DType::kF32);
  REQUIRE(other.data_ptr() != block);
  stream.synchronize();

  // Device to pinned host, in flight until the stream is synchronized.
  other.copy_(on_device, /*non_blocking=*/true);
  REQUIRE_FALSE(stream.query());
  stream.synchronize();
  REQUIRE(other.to_vector<float>() == values.to_vector<float>());

  // From pageable memory non_blocking is a blocking copy.
  on_device.copy_(values, /*non_blocking=*/true);
  REQUIRE(stream.query());
  // to(host, non_blocking) lands in pinned memory.
  Tensor landed = on_device.to(host_device(), DType::kF32, /*non_blocking=*/true);
  REQUIRE(landed.is_pinned());
  stream.synchronize();
  REQUIRE(landed.to_vector<float>() == values.to_vector<float>());
}

}  // namespace
}  // namespace tessera
