// The pinned host allocator (see pinned_host_allocator.h for the policy).
//
// One mutex guards everything: pinned allocations are few and large (copy
// buffers, data loader batches), so the lock is never contended in a way
// that matters.
#include "runtime/alloc/pinned_host_allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/event.h"

namespace tessera {

namespace {

constexpr size_t kMinBlockSize = size_t{1} << 12;  // one page
constexpr size_t kMaxBlockSize = size_t{1} << 62;

struct Block {
  void* ptr = nullptr;
  size_t size = 0;                      // rounded: what was allocated
  DeviceInterface* provider = nullptr;  // null: ordinary host memory
  std::vector<Stream> streams;          // that used the block (record_stream)
  int pending_events = 0;
  bool allocated = false;
};

struct PendingEvent {
  Event event;
  Block* block;
};

size_t block_size_for(size_t nbytes) {
  TESSERA_CHECK(nbytes <= kMaxBlockSize, OutOfMemoryError, "pinned host memory: a request of ",
                nbytes, " bytes is larger than any block (", kMaxBlockSize, " bytes)");
  return std::max(kMinBlockSize, std::bit_ceil(nbytes));
}

// Page-locked memory from the first registered device type that has some,
// else ordinary page-aligned host memory (provider stays null).
void* raw_allocate(size_t size, DeviceInterface*& provider) {
  DeviceRegistry& registry = DeviceRegistry::instance();
  for (DeviceType type : registry.types()) {
    DeviceInterface& iface = registry.get(type);
    if (iface.device_count() == 0) continue;
    if (void* p = iface.raw_allocate_host(size)) {
      provider = &iface;
      return p;
    }
  }
  provider = nullptr;
  return std::aligned_alloc(kMinBlockSize, size);
}

void raw_free(Block& b) noexcept {
  if (b.provider != nullptr) {
    try {
      b.provider->raw_free_host(b.ptr);
    } catch (...) {
      // A failed device may refuse; the pages stay locked until exit.
    }
  } else {
    std::free(b.ptr);
  }
}

}  // namespace

struct PinnedHostAllocator::Impl {
  mutable std::mutex mutex;
  // Every block held, live, pending or cached, by start address.
  std::map<uintptr_t, std::unique_ptr<Block>> blocks;
  std::unordered_map<size_t, std::vector<Block*>> free_blocks;  // by size
  std::vector<PendingEvent> pending;
  PinnedHostStats stats;

  Block* find_live(const void* ptr) const {
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks.upper_bound(address);
    if (it == blocks.begin()) return nullptr;
    --it;
    Block* b = it->second.get();
    if (!b->allocated || address - it->first >= b->size) return nullptr;
    return b;
  }

  void cache(Block* b) {
    stats.cached_bytes += b->size;
    free_blocks[b->size].push_back(b);
  }

  // Caches the blocks whose last event has completed.
  void process_events() {
    for (size_t i = 0; i < pending.size();) {
      bool complete = true;
      try {
        complete = pending[i].event.query();
      } catch (...) {
        // A failed device's work neither finishes nor runs on: none of it
        // can touch the block any more.
      }
      if (!complete) {
        ++i;
        continue;
      }
      Block* b = pending[i].block;
      pending[i] = std::move(pending.back());
      pending.pop_back();
      if (--b->pending_events == 0) {
        stats.pending_bytes -= b->size;
        cache(b);
      }
    }
  }

  Block* take_cached(size_t size) {
    auto it = free_blocks.find(size);
    if (it == free_blocks.end() || it->second.empty()) return nullptr;
    Block* b = it->second.back();
    it->second.pop_back();
    stats.cached_bytes -= size;
    return b;
  }

  void release_cached() {
    for (auto& [size, list] : free_blocks) {
      for (Block* b : list) {
        raw_free(*b);
        stats.cached_bytes -= b->size;
        blocks.erase(reinterpret_cast<uintptr_t>(b->ptr));
      }
      list.clear();
    }
  }
};

PinnedHostAllocator::PinnedHostAllocator() : impl_(std::make_unique<Impl>()) {}

// Never destroyed (see get()); pages are returned at exit by the OS.
PinnedHostAllocator::~PinnedHostAllocator() = default;

PinnedHostAllocator& PinnedHostAllocator::get() {
  // Leaked on purpose: storages freed by other static destructors (the
  // bridge's, Python's) may still return blocks at exit.
  static auto* allocator = new PinnedHostAllocator();
  return *allocator;
}

StoragePtr PinnedHostAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return std::make_shared<Storage>(host_device(), nullptr, 0, this);
  const size_t size = block_size_for(nbytes);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& s = *impl_;
  s.process_events();
  Block* b = s.take_cached(size);
  if (b != nullptr) {
    ++s.stats.cache_hits;
  } else {
    DeviceInterface* provider = nullptr;
    void* p = raw_allocate(size, provider);
    if (p == nullptr) {
      // Pinned pages are a limited resource: give back the cache, retry.
      s.release_cached();
      p = raw_allocate(size, provider);
    }
    TESSERA_CHECK(p != nullptr, OutOfMemoryError, "pinned host memory: cannot allocate ", size,
                  " bytes (", nbytes, " requested; ", s.stats.allocated_bytes,
                  " bytes in use, ", s.stats.pending_bytes, " waiting for streams)");
    auto owned = std::make_unique<Block>();
    owned->ptr = p;
    owned->size = size;
    owned->provider = provider;
    b = owned.get();
    s.blocks.emplace(reinterpret_cast<uintptr_t>(p), std::move(owned));
  }
  b->allocated = true;
  b->streams.clear();
  ++s.stats.allocations;
  s.stats.allocated_bytes += size;
  s.stats.peak_allocated_bytes = std::max(s.stats.peak_allocated_bytes, s.stats.allocated_bytes);
  return std::make_shared<Storage>(host_device(), b->ptr, nbytes, this);
}

void PinnedHostAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& s = *impl_;
  auto it = s.blocks.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == s.blocks.end() || !it->second->allocated) return;  // not ours: nothing to do
  Block* b = it->second.get();
  b->allocated = false;
  s.stats.allocated_bytes -= b->size;
  for (const Stream& stream : b->streams) {
    try {
      Event event(stream.device());
      event.record(stream);
      s.pending.push_back(PendingEvent{std::move(event), b});
      ++b->pending_events;
    } catch (...) {
      // No event (a failed device): its work is dead and cannot touch the
      // block.
    }
  }
  b->streams.clear();
  if (b->pending_events > 0) {
    s.stats.pending_bytes += b->size;
  } else {
    s.cache(b);
  }
}

bool PinnedHostAllocator::record_stream(const void* ptr, Stream stream) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Block* b = impl_->find_live(ptr);
  if (b == nullptr) return false;
  if (std::find(b->streams.begin(), b->streams.end(), stream) == b->streams.end()) {
    b->streams.push_back(stream);
  }
  return true;
}

bool PinnedHostAllocator::owns(const void* ptr) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->find_live(ptr) != nullptr;
}

bool PinnedHostAllocator::page_locked(const void* ptr) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Block* b = impl_->find_live(ptr);
  return b != nullptr && b->provider != nullptr;
}

void PinnedHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->process_events();
  impl_->release_cached();
}

PinnedHostStats PinnedHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void PinnedHostAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->stats.peak_allocated_bytes = impl_->stats.allocated_bytes;
}

}  // namespace tessera
