// What a caching allocator holds, segment by segment: the answer of
// CachingAllocator::snapshot() and block_containing(), for tools that show
// memory (torch.tessera.memory_snapshot) and for code that must tell
// whether an address lies in memory the allocator handed out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera {

enum class BlockState {
  kAllocated,    // handed out to a user
  kPendingFree,  // freed by its user, reused once other streams' events complete
  kFree,         // cached in a pool
};

struct BlockSnapshot {
  uintptr_t address = 0;  // a device address: not dereferenceable on every device
  size_t size = 0;        // bytes of the block (the rounded size)
  size_t requested = 0;   // bytes the user asked for; 0 unless kAllocated
  BlockState state = BlockState::kFree;
};

enum class SegmentPool {
  kSmall,   // 2 MiB segments shared by requests of at most 1 MiB
  kLarge,   // larger requests
  kDirect,  // caching disabled: one device allocation per request
};

// One allocation from the device, cut into blocks in address order (their
// sizes add up to the segment's).
struct SegmentSnapshot {
  uintptr_t address = 0;
  size_t size = 0;
  uint32_t stream_id = 0;  // the stream its blocks are allocated on (0: default)
  SegmentPool pool = SegmentPool::kSmall;
  std::vector<BlockSnapshot> blocks;
};

}  // namespace tessera
