// The data structures of the caching allocator (internal to
// caching_allocator.cc): size classes, blocks and pools.
//
// Memory comes from the device in segments. A segment is cut into blocks
// linked by prev/next in address order; every block is either handed out,
// "pending" (freed by the user but still in use by other streams until
// their events complete), or free and sitting in exactly one pool. Two free
// blocks are never adjacent: a block that becomes free merges with free
// neighbours at once. So "a free block with no neighbours" is exactly "a
// wholly free segment", which is what empty_cache and the OOM path return.
//
// Free blocks are ordered by (stream, size, address) so that a lower_bound
// on (stream, rounded size) is a best-fit search restricted to the
// allocating stream: a block freed on one stream is never handed to
// another, because work already queued on the first may still touch it.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/stream/stream.h"

namespace tessera::alloc_detail {

// Size classes, as in PyTorch's CUDA caching allocator.
inline constexpr size_t kMinBlockSize = 512;        // every size rounds up to this
inline constexpr size_t kSmallSize = 1 << 20;       // largest "small" request
inline constexpr size_t kSmallBuffer = 2 << 20;     // segment size of the small pool
inline constexpr size_t kMinLargeAlloc = 10 << 20;  // below: share a 20 MiB segment
inline constexpr size_t kLargeBuffer = 20 << 20;    // shared large segment
inline constexpr size_t kRoundLarge = 2 << 20;      // big segments round to this

inline size_t round_up(size_t n, size_t multiple, const char* what) {
  return checked_add_size(n, multiple - 1, what) / multiple * multiple;
}

// The block size that serves a request of nbytes (> 0).
inline size_t round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return round_up(nbytes, kMinBlockSize, "CachingAllocator::allocate (rounding)");
}

// Bytes to ask the device for when no cached block fits a block of `size`.
inline size_t segment_size_for(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return round_up(size, kRoundLarge, "CachingAllocator::allocate (segment size)");
}

struct Block;
struct BlockPool;

// Best fit within a stream: by stream, then size, then address.
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const;
};

using BlockSet = std::set<Block*, BlockOrder>;

struct Block {
  char* ptr = nullptr;
  size_t size = 0;            // bytes of this block (a multiple of 512)
  size_t requested = 0;       // what the user asked for, while handed out
  Stream stream;              // the stream it was allocated on, for its whole life
  BlockPool* pool = nullptr;  // null for direct (caching disabled) blocks
  Block* prev = nullptr;      // neighbours in the same segment, address order
  Block* next = nullptr;
  bool allocated = false;      // handed out, pending or in a RecentBins (so not in a pool)
  bool recent = false;         // freed and waiting in a RecentBins for a request of its size
  bool counted_split = false;  // its size is in inactive_split_bytes
  BlockSet::iterator pool_it;  // its place in the pool while free: O(1) removal
  int event_count = 0;         // outstanding events while pending
  std::vector<Stream> stream_uses;  // other streams that used it (record_stream)

  explicit Block(Stream s) : stream(s) {}
  bool is_split() const { return prev != nullptr || next != nullptr; }
};

inline bool BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream.id() != b->stream.id()) return a->stream.id() < b->stream.id();
  if (a->size != b->size) return a->size < b->size;
  return std::less<const char*>()(a->ptr, b->ptr);
}

// Small blocks freed a moment ago, kept whole for the next request of
// exactly their size on their stream (a stack per size, newest on top).
// A training step or an op loop frees and asks again for the same sizes
// over and over; a block served from here skips the pool's best-fit
// search, the split and the merge back (about 400 instructions of the
// ~10,000 that a small op takes through the bridge). The blocks stay out
// of the pools, counted as allocated in Block terms (so no neighbour
// merges into them) but free in every statistic; at most kDepth blocks a
// size up to kMaxSize, so at most about 1 MiB is held back from merging.
class RecentBins {
 public:
  static constexpr size_t kMaxSize = 16 << 10;
  static constexpr int kDepth = 4;

  static bool fits(size_t size) { return size <= kMaxSize; }

  // The newest block of exactly `size` freed on `stream`, removed, or nullptr.
  Block* take(Stream stream, size_t size);

  // Keeps b (free, of a size that fits); false when its size's stack is full.
  bool put(Block* b);

  // Removes and returns every block kept.
  std::vector<Block*> take_all();

 private:
  struct Bin {
    Block* blocks[kDepth] = {};
    int count = 0;
  };
  Bin bins_[kMaxSize / kMinBlockSize];

  static Bin& bin_for(Bin* bins, size_t size) { return bins[size / kMinBlockSize - 1]; }
};

// The free blocks of one size class. Set nodes are recycled: a cached
// allocate+free pair then does no heap allocation (each would cost about
// as much as the rest of the pair); the spares are capped so a burst of
// frees does not pin memory.
class BlockPool {
 public:
  explicit BlockPool(bool small) : is_small(small) {}

  const bool is_small;
  BlockSet blocks;

  void insert(Block* b) {
    if (!spare_.empty()) {
      BlockSet::node_type node = std::move(spare_.back());
      spare_.pop_back();
      node.value() = b;
      b->pool_it = blocks.insert(std::move(node)).position;
    } else {
      b->pool_it = blocks.insert(b).first;
    }
  }

  void erase(Block* b) {
    BlockSet::node_type node = blocks.extract(b->pool_it);
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(node));
  }

  // The smallest free block of at least size on stream, or nullptr.
  Block* best_fit(Stream stream, size_t size) const {
    Block key(stream);
    key.size = size;
    auto it = blocks.lower_bound(&key);
    if (it == blocks.end() || (*it)->stream.id() != stream.id()) return nullptr;
    return *it;
  }

  // True when a block of `size` cut from b leaves a remainder worth keeping
  // as a block of its own (in the large pool, only more than 1 MiB, so big
  // segments are not shredded into pieces no large request can use).
  bool should_split(const Block* b, size_t size) const {
    const size_t remaining = b->size - size;
    return is_small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  }

 private:
  static constexpr size_t kMaxSpare = 4096;
  std::vector<BlockSet::node_type> spare_;
};

inline Block* RecentBins::take(Stream stream, size_t size) {
  if (!fits(size)) return nullptr;
  Bin& bin = bin_for(bins_, size);
  if (bin.count == 0) return nullptr;
  // The newest of the stream's blocks: a block freed on one stream is
  // never handed to another (see BlockPool).
  for (int i = bin.count - 1; i >= 0; --i) {
    Block* b = bin.blocks[i];
    if (b->stream.id() != stream.id()) continue;
    for (int j = i; j + 1 < bin.count; ++j) bin.blocks[j] = bin.blocks[j + 1];
    bin.blocks[--bin.count] = nullptr;
    b->recent = false;
    return b;
  }
  return nullptr;
}

inline bool RecentBins::put(Block* b) {
  Bin& bin = bin_for(bins_, b->size);
  if (bin.count == kDepth) return false;
  b->recent = true;
  bin.blocks[bin.count++] = b;
  return true;
}

inline std::vector<Block*> RecentBins::take_all() {
  std::vector<Block*> out;
  for (Bin& bin : bins_) {
    for (int i = 0; i < bin.count; ++i) {
      bin.blocks[i]->recent = false;
      out.push_back(bin.blocks[i]);
      bin.blocks[i] = nullptr;
    }
    bin.count = 0;
  }
  return out;
}

}  // namespace tessera::alloc_detail
