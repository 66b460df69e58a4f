#include "bridge/csrc/memory_snapshot.h"

#include <vector>

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "runtime/alloc/caching_allocator.h"

namespace py = pybind11;

namespace torch_tessera {
namespace {

// torch.cuda's names: "active" is allocated or pending free (still in use
// by some stream), "inactive" is cached.
const char* state_name(tessera::BlockState state) {
  switch (state) {
    case tessera::BlockState::kAllocated: return "active_allocated";
    case tessera::BlockState::kPendingFree: return "active_pending_free";
    case tessera::BlockState::kFree: return "inactive";
  }
  return "unknown";
}

const char* pool_name(tessera::SegmentPool pool) {
  switch (pool) {
    case tessera::SegmentPool::kSmall: return "small";
    case tessera::SegmentPool::kLarge: return "large";
    case tessera::SegmentPool::kDirect: return "direct";
  }
  return "unknown";
}

}  // namespace

py::list memory_snapshot(c10::DeviceIndex index) {
  std::vector<tessera::SegmentSnapshot> segments;
  {
    py::gil_scoped_release no_gil;  // the allocator's lock may be held by a kernel thread
    TESSERA_TRANSLATE_ERRORS(
        segments = tessera::CachingAllocator::get(runtime_device(index)).snapshot());
  }
  py::list out;
  for (const tessera::SegmentSnapshot& s : segments) {
    size_t allocated = 0, active = 0, requested = 0;
    py::list blocks;
    for (const tessera::BlockSnapshot& b : s.blocks) {
      if (b.state == tessera::BlockState::kAllocated) allocated += b.size;
      if (b.state != tessera::BlockState::kFree) active += b.size;
      requested += b.requested;
      py::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested;
      block["state"] = state_name(b.state);
      blocks.append(std::move(block));
    }
    py::dict segment;
    segment["device"] = static_cast<int>(index);
    segment["address"] = s.address;
    segment["total_size"] = s.size;
    segment["allocated_size"] = allocated;
    segment["active_size"] = active;
    segment["requested_size"] = requested;
    segment["stream"] = s.stream_id;
    segment["segment_type"] = pool_name(s.pool);
    segment["blocks"] = std::move(blocks);
    out.append(std::move(segment));
  }
  return out;
}

}  // namespace torch_tessera
