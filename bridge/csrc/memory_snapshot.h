// torch.tessera.memory_snapshot(): the runtime caching allocator's segments
// and blocks as Python dicts, with the keys and state names of
// torch.cuda.memory_snapshot() where the meaning is the same, so tools
// written for CUDA snapshots read them.
#pragma once

#include <c10/core/Device.h>
#include <pybind11/pybind11.h>

namespace torch_tessera {

// [{"device", "address", "total_size", "allocated_size", "active_size",
//   "requested_size", "stream", "segment_type", "blocks": [{"address",
//   "size", "requested_size", "state"}]}], one dict per segment of
// tessera:index, in address order.
pybind11::list memory_snapshot(c10::DeviceIndex index);

}  // namespace torch_tessera
