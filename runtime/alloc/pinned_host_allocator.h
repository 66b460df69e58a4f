// Page-locked ("pinned") host memory, the source and destination of
// asynchronous copies between the host and a device, in the style of
// PyTorch's CachingHostAllocator:
//  - the memory comes from the first registered device type that can pin
//    host memory (DeviceInterface::raw_allocate_host, e.g. cudaHostAlloc);
//    with none, blocks are ordinary host memory (page_locked() is false),
//    so code that pins works on every machine;
//  - requests round up to a power of two (at least 4 KiB) and freed blocks
//    are cached per size, because pinning is slow (it maps and locks pages);
//  - a block that a stream used (record_stream, which copy_ calls for a
//    non-blocking copy) returns to the cache only once an event recorded on
//    that stream when the block was freed has completed, so a copy in
//    flight never sees its source reused;
//  - empty_cache() returns the free blocks to the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/alloc/allocator.h"
#include "runtime/core/storage.h"
#include "runtime/stream/stream.h"

namespace tessera {

struct PinnedHostStats {
  size_t allocated_bytes = 0;       // in blocks handed out (rounded sizes)
  size_t cached_bytes = 0;          // in free blocks kept for reuse
  size_t pending_bytes = 0;         // freed, waiting for a stream's events
  size_t peak_allocated_bytes = 0;
  uint64_t allocations = 0;         // requests served
  uint64_t cache_hits = 0;          // of which from the cache
};

class PinnedHostAllocator final : public Allocator {
 public:
  static PinnedHostAllocator& get();

  // Host storage (on host_device()) of at least nbytes; nbytes == 0 gives
  // a storage without data. OutOfMemoryError when neither the cache nor
  // the device can provide it.
  StoragePtr allocate(size_t nbytes);
  void deallocate(void* ptr) override;

  // Marks that `stream` (of any device) reads or writes the block holding
  // ptr: when freed, the block waits for the stream's work enqueued so far.
  // False, and nothing recorded, when ptr is not in a live block of ours.
  bool record_stream(const void* ptr, Stream stream);

  // True when ptr lies in a live block of this allocator.
  bool owns(const void* ptr) const;
  // True when ptr lies in a live block of page-locked device memory (false
  // for ordinary memory, used where no device type can pin).
  bool page_locked(const void* ptr) const;

  // Frees cached blocks whose events completed; waits for none.
  void empty_cache();
  PinnedHostStats stats() const;
  void reset_peak_stats();

  ~PinnedHostAllocator() override;

 private:
  PinnedHostAllocator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
