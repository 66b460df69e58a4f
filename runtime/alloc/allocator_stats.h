#pragma once

#include <cstdint>

namespace tessera {

// One statistic: its current value, its peak since the last reset, and
// cumulative allocated/freed totals.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  // sum of increases
  int64_t freed = 0;      // sum of decreases

  void increase(int64_t amount) {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_peak() { peak = current; }
};

// The statistics of one device's caching allocator. Bytes are rounded
// block sizes (what the allocator hands out), as in PyTorch.
struct AllocatorStats {
  Stat allocated_bytes;       // in blocks handed out to users
  Stat reserved_bytes;        // in segments obtained from the device
  Stat active_bytes;          // handed out, or freed but awaiting stream events
  Stat requested_bytes;       // what users asked for, unrounded
  Stat allocation_count;      // live blocks handed out
  Stat segment_count;         // live segments
  Stat inactive_split_bytes;  // free bytes inside segments that are split
  int64_t num_alloc_retries = 0;  // allocations that freed the cache and retried
  int64_t num_ooms = 0;           // allocations that failed even after that
  int64_t num_device_allocs = 0;  // raw_allocate calls
  int64_t num_device_frees = 0;   // raw_free calls
};

}  // namespace tessera
