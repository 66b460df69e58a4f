// The caching allocator (see caching_allocator.h for the behaviour and
// block_pool.h for the blocks, segments and pools it keeps).
//
// One mutex guards each allocator: every operation is a few set and hash
// operations, so finer locking would cost more than it saves. Measured on
// the 2-core AMD EPYC (2026-11-27): an uncontended lock and unlock take
// 6 ns, an allocate+free pair served from `recent` 26 ns (so 12 ns of it
// is the mutex), and a 1-element add through the PyTorch bridge 1.15 us,
// whose allocate and free then spend 1% in the mutex. A lock-free fast
// path would need per-thread caches drained by empty_cache, snapshot and
// the OOM path, and statistics kept per thread or in atomics (each
// atomic update costs what a lock does, and the six counters would
// exceed it); that trade is not worth 1%.
#include "runtime/alloc/caching_allocator.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/alloc/block_pool.h"
#include "runtime/alloc/pointer_map.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/device/fault_injection.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/stream/event.h"

namespace tessera {

namespace {

using alloc_detail::Block;
using alloc_detail::BlockPool;
using alloc_detail::RecentBins;
using alloc_detail::kSmallSize;
using alloc_detail::round_size;
using alloc_detail::segment_size_for;

std::string format_bytes(size_t n) {
  char buf[64];
  const double d = static_cast<double>(n);
  if (n < (size_t{1} << 10)) {
    std::snprintf(buf, sizeof(buf), "%zu bytes", n);
  } else if (n < (size_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", d / 1024.0);
  } else if (n < (size_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", d / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", d / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

// A freed block's event on one of the streams that used it.
struct PendingEvent {
  Event event;
  Block* block;
};

// A live segment: its first block (the same Block for the segment's whole
// life, see free_block) and its size.
struct Segment {
  Block* head;
  size_t size;
};

BlockState state_of(const Block& b) {
  if (!b.allocated || b.recent) return BlockState::kFree;
  return b.event_count > 0 ? BlockState::kPendingFree : BlockState::kAllocated;
}

BlockSnapshot snapshot_of(const Block& b) {
  BlockSnapshot out;
  out.address = reinterpret_cast<uintptr_t>(b.ptr);
  out.size = b.size;
  out.state = state_of(b);
  out.requested = out.state == BlockState::kAllocated ? b.requested : 0;
  return out;
}

}  // namespace

struct CachingAllocator::Impl {
  Device device;
  DeviceInterface* iface;
  bool disabled;

  mutable std::mutex mutex;
  BlockPool small_pool{true};
  BlockPool large_pool{false};
  RecentBins recent;  // small blocks just freed, whole, for the next request of their size
  // Handed-out and caching-disabled blocks by address (not pending ones).
  alloc_detail::PointerMap<Block*> allocated_blocks;
  // Events of pending blocks, per stream id: events on one stream complete
  // in order, so polling can stop at the first one not yet reached.
  std::unordered_map<uint32_t, std::deque<PendingEvent>> pending;
  std::vector<Block*> spare_blocks;  // recycled Block structs (hot path: no new)
  // Live segments by address: changes only when the device allocates or
  // frees, and lets snapshot() and block lookups by address skip the pools.
  std::map<uintptr_t, Segment> segments;
  AllocatorStats stats;
  double fraction = 1.0;
  size_t reserved_limit = std::numeric_limits<size_t>::max();

  Impl(Device d, DeviceInterface* i)
      : device(d),
        iface(i),
        disabled(env_switch("TESSERA_DISABLE_CACHING_ALLOCATOR").value_or(false)) {}

  ~Impl() {
    // Best effort: wait for pending blocks, return every wholly free segment.
    // Live blocks belong to their users; only the bookkeeping goes.
    try {
      synchronize_and_free_events();
    } catch (...) {
    }
    try {
      flush_recent();
      release_free_segments();
    } catch (...) {
    }
    std::vector<Block*> all;
    for (BlockPool* p : {&small_pool, &large_pool}) {
      all.insert(all.end(), p->blocks.begin(), p->blocks.end());
    }
    allocated_blocks.for_each([&](const void*, Block* b) { all.push_back(b); });
    for (auto& kv : pending) {
      for (PendingEvent& pe : kv.second) {
        if (--pe.block->event_count == 0) all.push_back(pe.block);
      }
    }
    pending.clear();
    for (Block* b : all) delete b;
    for (Block* b : spare_blocks) delete b;
  }

  // -- Block structs.
  Block* new_block(Stream stream, char* ptr, size_t size, BlockPool* pool) {
    Block* b;
    if (!spare_blocks.empty()) {
      b = spare_blocks.back();
      spare_blocks.pop_back();
      b->stream = stream;
    } else {
      b = new Block(stream);
    }
    b->ptr = ptr;
    b->size = size;
    b->pool = pool;
    return b;
  }

  void recycle_block(Block* b) {
    b->requested = 0;
    b->prev = b->next = nullptr;
    b->allocated = false;
    b->counted_split = false;
    b->event_count = 0;
    b->stream_uses.clear();
    spare_blocks.push_back(b);
  }

  // -- Free blocks, in a pool or in `recent`: every one goes through
  // count_free and uncount_free, so that inactive_split_bytes always
  // equals the free bytes of split segments.
  void count_free(Block* b) {
    if (b->is_split()) {
      b->counted_split = true;
      stats.inactive_split_bytes.increase(static_cast<int64_t>(b->size));
    }
  }

  void uncount_free(Block* b) {
    if (b->counted_split) {
      b->counted_split = false;
      stats.inactive_split_bytes.decrease(static_cast<int64_t>(b->size));
    }
  }

  void pool_insert(Block* b) {
    b->pool->insert(b);
    count_free(b);
  }

  void pool_erase(Block* b) {
    b->pool->erase(b);
    uncount_free(b);
  }

  // Best-fit free block of at least size on stream, removed from the pool.
  Block* take_free_block(BlockPool& pool, Stream stream, size_t size) {
    Block* b = pool.best_fit(stream, size);
    if (b != nullptr) pool_erase(b);
    return b;
  }

  // A new segment from the device as one block (not in any pool), or null
  // when the device is out of memory or the memory fraction would be passed.
  Block* allocate_segment(BlockPool& pool, Stream stream, size_t size) {
    char* p = static_cast<char*>(raw_allocate_limited(size));
    if (p == nullptr) return nullptr;
    stats.segment_count.increase(1);
    Block* b = new_block(stream, p, size, &pool);
    segments.emplace(reinterpret_cast<uintptr_t>(p), Segment{b, size});
    return b;
  }

  void* raw_allocate_limited(size_t size) {
    const size_t reserved = static_cast<size_t>(stats.reserved_bytes.current);
    if (size > reserved_limit || reserved > reserved_limit - size) return nullptr;
    void* p = iface->raw_allocate(device.index, size);
    if (p == nullptr) return nullptr;
    ++stats.num_device_allocs;
    stats.reserved_bytes.increase(static_cast<int64_t>(size));
    return p;
  }

  void raw_free_segment(void* p, size_t size) {
    iface->raw_free(device.index, p);
    ++stats.num_device_frees;
    stats.reserved_bytes.decrease(static_cast<int64_t>(size));
    stats.segment_count.decrease(1);
  }

  // -- Allocation (caching).
  void* allocate(size_t nbytes, Stream stream) {
    std::lock_guard<std::mutex> lock(mutex);
    if (disabled) return allocate_direct(nbytes, stream);
    process_events();

    const size_t size = round_size(nbytes);
    if (Block* b = recent.take(stream, size); b != nullptr) {
      uncount_free(b);
      stats.active_bytes.increase(static_cast<int64_t>(size));
      return hand_out(b, nbytes);
    }
    BlockPool& pool = size <= kSmallSize ? small_pool : large_pool;
    Block* block = take_free_block(pool, stream, size);
    if (block == nullptr) {
      const size_t seg_size = segment_size_for(size);
      block = allocate_segment(pool, stream, seg_size);
      if (block == nullptr) {
        // Out of memory (or over the fraction): give the cache back and
        // retry. Synchronizing pending events may also free a block that
        // fits, so look in the pool again first.
        release_cached_blocks();
        ++stats.num_alloc_retries;
        block = take_free_block(pool, stream, size);
        if (block == nullptr) block = allocate_segment(pool, stream, seg_size);
        if (block == nullptr) {
          ++stats.num_ooms;
          throw OutOfMemoryError(oom_message(size, nbytes));
        }
      }
    }

    if (block->pool->should_split(block, size)) {
      Block* rest = new_block(stream, block->ptr + size, block->size - size, block->pool);
      rest->prev = block;
      rest->next = block->next;
      if (rest->next != nullptr) rest->next->prev = rest;
      block->next = rest;
      block->size = size;
      pool_insert(rest);
    }
    block->allocated = true;
    stats.active_bytes.increase(static_cast<int64_t>(block->size));
    return hand_out(block, nbytes);
  }

  // The last steps of every caching allocation: the block (marked
  // allocated, counted active) goes to the user for a request of nbytes.
  void* hand_out(Block* block, size_t nbytes) {
    block->requested = nbytes;
    allocated_blocks.insert(block->ptr, block);
    stats.allocation_count.increase(1);
    stats.allocated_bytes.increase(static_cast<int64_t>(block->size));
    stats.requested_bytes.increase(static_cast<int64_t>(nbytes));
    return block->ptr;
  }

  // -- Free (caching): the user is done with ptr.
  void deallocate(void* ptr) {
    std::unique_lock<std::mutex> lock(mutex);
    Block* block = allocated_blocks.erase(ptr);
    TESSERA_CHECK(block != nullptr, ValueError, "CachingAllocator::deallocate: pointer ", ptr,
                  " was not allocated by the caching allocator of ", device.to_string(),
                  " (or was already freed)");
    stats.allocation_count.decrease(1);
    stats.allocated_bytes.decrease(static_cast<int64_t>(block->size));
    stats.requested_bytes.decrease(static_cast<int64_t>(block->requested));

    if (disabled) {
      deallocate_direct(block, lock);
      return;
    }
    if (!block->stream_uses.empty()) {
      insert_events(block);
    } else if (!keep_recent(block)) {
      free_block(block);
    }
  }

  // Puts a freed small block (no other stream used it) in `recent` as it
  // is, counted free; false when it does not fit there.
  bool keep_recent(Block* block) {
    if (!RecentBins::fits(block->size) || !recent.put(block)) return false;
    stats.active_bytes.decrease(static_cast<int64_t>(block->size));
    count_free(block);
    return true;
  }

  // Returns the blocks in `recent` to their pools, merged with their free
  // neighbours, so that wholly free segments show as such.
  void flush_recent() {
    for (Block* b : recent.take_all()) {
      uncount_free(b);
      return_to_pool(b);
    }
  }

  // Records one event per stream that used the block; the block stays out
  // of the pools (and counted as active) until they all complete.
  void insert_events(Block* block) {
    std::vector<Stream> uses = std::move(block->stream_uses);
    block->stream_uses.clear();
    for (const Stream& s : uses) {
      try {
        Event ev(device);
        ev.record(s);
        pending[s.id()].push_back(PendingEvent{std::move(ev), block});
        ++block->event_count;
      } catch (const Error&) {
        // No event to poll: wait for the stream now instead. If that fails
        // too the block is never reused (leaked), which is safe.
        s.synchronize();
      }
    }
    if (block->event_count == 0) free_block(block);
  }

  // Polls pending events in order per stream; frees blocks whose last
  // event has completed.
  void process_events() {
    if (pending.empty()) return;
    for (auto it = pending.begin(); it != pending.end();) {
      std::deque<PendingEvent>& q = it->second;
      while (!q.empty() && q.front().event.query()) {
        Block* b = q.front().block;
        q.pop_front();
        if (--b->event_count == 0) free_block(b);
      }
      it = q.empty() ? pending.erase(it) : std::next(it);
    }
  }

  void synchronize_and_free_events() {
    for (auto it = pending.begin(); it != pending.end();) {
      std::deque<PendingEvent>& q = it->second;
      while (!q.empty()) {
        q.front().event.synchronize();
        Block* b = q.front().block;
        q.pop_front();
        if (--b->event_count == 0) free_block(b);
      }
      it = pending.erase(it);
    }
  }

  // The block is no longer used by anyone: merge it with free neighbours
  // and put the result in its pool. A free predecessor absorbs the block
  // (not the other way round), so a segment's first Block never changes
  // and `segments` needs no update here.
  void free_block(Block* block) {
    stats.active_bytes.decrease(static_cast<int64_t>(block->size));
    return_to_pool(block);
  }

  // free_block without the statistics: merge and insert.
  void return_to_pool(Block* block) {
    block->allocated = false;
    if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
      pool_erase(prev);
      prev->size += block->size;
      prev->next = block->next;
      if (prev->next != nullptr) prev->next->prev = prev;
      recycle_block(block);
      block = prev;
    }
    if (Block* next = block->next; next != nullptr && !next->allocated) {
      pool_erase(next);
      block->size += next->size;
      block->next = next->next;
      if (block->next != nullptr) block->next->prev = block;
      recycle_block(next);
    }
    pool_insert(block);
  }

  // Returns every wholly free segment to the device, after waiting for
  // pending blocks so that they can be returned too.
  void release_cached_blocks() {
    synchronize_and_free_events();
    flush_recent();
    release_free_segments();
  }

  // Returns the wholly free segments (free blocks with no neighbours).
  void release_free_segments() {
    for (BlockPool* pool : {&small_pool, &large_pool}) {
      for (auto it = pool->blocks.begin(); it != pool->blocks.end();) {
        Block* b = *it;
        if (b->is_split()) {
          ++it;
          continue;
        }
        it = pool->blocks.erase(it);
        segments.erase(reinterpret_cast<uintptr_t>(b->ptr));
        raw_free_segment(b->ptr, b->size);
        recycle_block(b);
      }
    }
  }

  // -- Caching disabled: one device allocation per request.
  void* allocate_direct(size_t nbytes, Stream stream) {
    void* p = raw_allocate_limited(nbytes);
    if (p == nullptr) {
      ++stats.num_ooms;
      throw OutOfMemoryError(oom_message(nbytes, nbytes));
    }
    stats.segment_count.increase(1);
    Block* b = new_block(stream, static_cast<char*>(p), nbytes, nullptr);
    segments.emplace(reinterpret_cast<uintptr_t>(p), Segment{b, nbytes});
    b->allocated = true;
    b->requested = nbytes;
    allocated_blocks.insert(p, b);
    stats.allocation_count.increase(1);
    stats.allocated_bytes.increase(static_cast<int64_t>(nbytes));
    stats.active_bytes.increase(static_cast<int64_t>(nbytes));
    stats.requested_bytes.increase(static_cast<int64_t>(nbytes));
    return p;
  }

  // Waits for the streams that used the block (outside the lock: their
  // work may need the allocator), then frees it at once.
  void deallocate_direct(Block* block, std::unique_lock<std::mutex>& lock) {
    void* p = block->ptr;
    const size_t size = block->size;
    std::vector<Stream> uses = std::move(block->stream_uses);
    stats.active_bytes.decrease(static_cast<int64_t>(size));
    segments.erase(reinterpret_cast<uintptr_t>(p));
    recycle_block(block);
    lock.unlock();
    for (const Stream& s : uses) s.synchronize();
    iface->raw_free(device.index, p);
    lock.lock();
    ++stats.num_device_frees;
    stats.reserved_bytes.decrease(static_cast<int64_t>(size));
    stats.segment_count.decrease(1);
  }

  void record_stream(void* ptr, Stream stream) {
    std::lock_guard<std::mutex> lock(mutex);
    Block* b = allocated_blocks.find(ptr);
    TESSERA_CHECK(b != nullptr, ValueError, "CachingAllocator::record_stream: pointer ", ptr,
                  " is not a live allocation of the caching allocator of ",
                  device.to_string());
    if (stream == b->stream) return;  // its own stream orders itself
    for (const Stream& s : b->stream_uses) {
      if (s == stream) return;
    }
    b->stream_uses.push_back(stream);
  }

  std::string oom_message(size_t size, size_t nbytes) const {
    std::string free_text = "unknown";
    std::string total_text = "unknown";
    try {
      MemoryInfo info = iface->memory_info(device.index);
      free_text = format_bytes(info.free);
      total_text = format_bytes(info.total);
    } catch (...) {
      // The message matters more than the device's answer.
    }
    char frac[32];
    std::snprintf(frac, sizeof(frac), "%.2f", fraction);
    std::string msg = "CachingAllocator: out of memory on " + device.to_string() +
                      " allocating " + format_bytes(size) + " (requested " +
                      std::to_string(nbytes) + " bytes); device free " + free_text +
                      " of " + total_text + " total; reserved by tessera " +
                      format_bytes(static_cast<size_t>(stats.reserved_bytes.current)) +
                      ", allocated " +
                      format_bytes(static_cast<size_t>(stats.allocated_bytes.current)) +
                      "; memory fraction " + frac;
    if (reserved_limit != std::numeric_limits<size_t>::max()) {
      msg += " (reserved limit " + format_bytes(reserved_limit) + ")";
    }
    return msg;
  }
};

CachingAllocator::CachingAllocator(Device device, DeviceInterface* iface)
    : device_(device) {
  TESSERA_CHECK(iface != nullptr, ValueError,
                "CachingAllocator: null device interface for ", device.to_string());
  impl_ = std::make_unique<Impl>(device, iface);
}

CachingAllocator::~CachingAllocator() = default;

void* CachingAllocator::allocate(size_t nbytes, Stream stream) {
  if (nbytes == 0) return nullptr;
  TESSERA_CHECK(stream.device() == device_, ValueError, "CachingAllocator::allocate: ",
                stream.to_string(), " is not on the allocator's device ",
                device_.to_string(), " (", nbytes, " bytes requested)");
  fault_injection::check_allocation(device_, nbytes);
  return impl_->allocate(nbytes, stream);
}

void CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  impl_->deallocate(ptr);
}

void CachingAllocator::record_stream(void* ptr, Stream stream) {
  if (ptr == nullptr) return;  // zero-byte storages have no block
  TESSERA_CHECK(stream.device() == device_, ValueError,
                "CachingAllocator::record_stream: ", stream.to_string(),
                " is not on the allocator's device ", device_.to_string());
  impl_->record_stream(ptr, stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->release_cached_blocks();
}

void CachingAllocator::set_memory_fraction(double fraction) {
  TESSERA_CHECK(fraction > 0.0 && fraction <= 1.0, ValueError,
                "CachingAllocator::set_memory_fraction: fraction must be in (0, 1], got ",
                fraction, " for ", device_.to_string());
  // Ask the device outside the lock; the total does not change.
  size_t limit = std::numeric_limits<size_t>::max();
  if (fraction < 1.0) {
    const size_t total = impl_->iface->memory_info(device_.index).total;
    // A device that cannot tell its total (0) gets no cap rather than a
    // cap of zero bytes.
    if (total > 0) limit = static_cast<size_t>(fraction * static_cast<double>(total));
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->fraction = fraction;
  impl_->reserved_limit = limit;
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->fraction;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  AllocatorStats& s = impl_->stats;
  for (Stat* st : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes, &s.requested_bytes,
                   &s.allocation_count, &s.segment_count, &s.inactive_split_bytes}) {
    st->reset_peak();
  }
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  AllocatorStats& s = impl_->stats;
  for (Stat* st : {&s.allocated_bytes, &s.reserved_bytes, &s.active_bytes, &s.requested_bytes,
                   &s.allocation_count, &s.segment_count, &s.inactive_split_bytes}) {
    st->allocated = 0;
    st->freed = 0;
  }
  s.num_alloc_retries = 0;
  s.num_ooms = 0;
  s.num_device_allocs = 0;
  s.num_device_frees = 0;
}

std::vector<SegmentSnapshot> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  // Merged, so that a snapshot never shows two free neighbours; this only
  // changes which free block a later request gets.
  impl_->flush_recent();
  std::vector<SegmentSnapshot> out;
  out.reserve(impl_->segments.size());
  for (const auto& [address, segment] : impl_->segments) {
    SegmentSnapshot s;
    s.address = address;
    s.size = segment.size;
    s.stream_id = segment.head->stream.id();
    const BlockPool* pool = segment.head->pool;
    s.pool = pool == nullptr ? SegmentPool::kDirect
                             : (pool->is_small ? SegmentPool::kSmall : SegmentPool::kLarge);
    for (const Block* b = segment.head; b != nullptr; b = b->next) {
      s.blocks.push_back(snapshot_of(*b));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<BlockSnapshot> CachingAllocator::allocated_block_containing(uintptr_t address,
                                                                          size_t nbytes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  // The last segment starting at or before address.
  auto it = impl_->segments.upper_bound(address);
  if (it == impl_->segments.begin()) return std::nullopt;
  --it;
  const uintptr_t start = it->first;
  if (address - start >= it->second.size) return std::nullopt;
  for (const Block* b = it->second.head; b != nullptr; b = b->next) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(b->ptr);
    if (address < begin || address - begin >= b->size) continue;
    if (state_of(*b) != BlockState::kAllocated) return std::nullopt;
    if (nbytes > b->size - (address - begin)) return std::nullopt;  // runs past the block
    return snapshot_of(*b);
  }
  return std::nullopt;
}

bool CachingAllocator::caching_disabled() const { return impl_->disabled; }

namespace {

// Allocators are never destroyed: storages freed during static destruction
// (globals holding tensors) must still find theirs. Small type ids and
// indices are looked up without a lock; the rest go through a map.
constexpr int kFastIndices = 16;

struct AllocatorTable {
  std::array<std::array<std::atomic<CachingAllocator*>, kFastIndices>, kMaxDeviceTypes> fast{};
  std::mutex mutex;
  std::unordered_map<Device, CachingAllocator*> all;
};

AllocatorTable& allocator_table() {
  static auto* table = new AllocatorTable();
  return *table;
}

}  // namespace

CachingAllocator& CachingAllocator::get(Device device) {
  AllocatorTable& t = allocator_table();
  const bool fast = device.type.id < kMaxDeviceTypes && device.index >= 0 &&
                    device.index < kFastIndices;
  if (fast) {
    CachingAllocator* a = t.fast[device.type.id][device.index].load(std::memory_order_acquire);
    if (a != nullptr) return *a;
  }
  DeviceInterface& iface = device_interface(device);  // validates the device
  std::lock_guard<std::mutex> lock(t.mutex);
  CachingAllocator*& slot = t.all[device];
  if (slot == nullptr) slot = new CachingAllocator(device, &iface);
  if (fast) t.fast[device.type.id][device.index].store(slot, std::memory_order_release);
  return *slot;
}

}  // namespace tessera
