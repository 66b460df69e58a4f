// The caching allocator, written once for every device on top of the
// device's raw_allocate/raw_free. In the style of PyTorch's CUDA caching
// allocator:
//  - requests round up to 512 bytes; requests of at most 1 MiB are "small"
//    and come from 2 MiB segments, larger ones from 20 MiB segments (up to
//    10 MiB requests) or segments of their own rounded to 2 MiB;
//  - a free block larger than the request is split, and a freed block
//    merges with free neighbours of the same segment;
//  - a freed block of at most 16 KiB first waits, whole, for the next
//    request of its exact size on its stream (a few a size); empty_cache,
//    snapshot and the out-of-memory path merge such blocks back first;
//  - free blocks are kept per stream: a block freed on stream S is reused
//    only by allocations on S, unless other streams used it
//    (record_stream), in which case it returns to the pool only after an
//    event recorded on each of those streams has completed;
//  - on out-of-memory: free the cached segments, retry once, then throw
//    OutOfMemoryError stating requested, free and reserved bytes;
//  - reserved bytes are capped by a per-process fraction of device memory;
//  - TESSERA_DISABLE_CACHING_ALLOCATOR=1 makes every allocate and free go to
//    the device directly (for sanitizer runs), with statistics still kept.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/alloc/allocator.h"
#include "runtime/alloc/allocator_snapshot.h"
#include "runtime/alloc/allocator_stats.h"
#include "runtime/core/device.h"
#include "runtime/stream/stream.h"

namespace tessera {

class DeviceInterface;

class CachingAllocator : public Allocator {
 public:
  // Allocator for `device`, using iface for raw memory and events.
  CachingAllocator(Device device, DeviceInterface* iface);
  ~CachingAllocator() override;

  // Memory for nbytes (0 gives nullptr), usable on `stream`.
  void* allocate(size_t nbytes, Stream stream);
  void deallocate(void* ptr) override;

  // Marks that `stream` uses ptr (a pointer returned by allocate), so that
  // its block is not reused before stream's work enqueued so far is done.
  void record_stream(void* ptr, Stream stream);

  // Returns cached, wholly free segments to the device.
  void empty_cache();

  // Caps reserved bytes at fraction * total device memory; 0 < f <= 1.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;

  AllocatorStats stats() const;
  void reset_peak_stats();

  // Every segment with its blocks, in address order. Costs one pass over
  // the blocks under the lock: for tools, not for hot paths.
  std::vector<SegmentSnapshot> snapshot() const;

  // The handed-out block that contains [address, address + nbytes), or
  // nothing (memory of another allocator, freed or cached memory, a range
  // that crosses a block's end). Finds the segment in O(log segments) and
  // walks its blocks.
  std::optional<BlockSnapshot> allocated_block_containing(uintptr_t address,
                                                          size_t nbytes) const;
  void reset_accumulated_stats();

  // True when TESSERA_DISABLE_CACHING_ALLOCATOR was set at construction.
  bool caching_disabled() const;

  Device device() const { return device_; }

  // The allocator for a device, created on first use.
  static CachingAllocator& get(Device device);

 private:
  struct Impl;
  Device device_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
