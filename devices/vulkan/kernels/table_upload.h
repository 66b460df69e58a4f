// Tables a kernel builds on the host and its shaders read through buffer
// device addresses (the multi-tensor kernels' entries and chunks): one
// upload for all of them, so a list costs one copy however many tables
// it has; and the chunk table the multi-tensor kernels share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "devices/vulkan/kernels/launch.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::vulkan {

struct HostTable {
  const void* data;
  size_t bytes;
};

// A device buffer holding the tables back to back, each starting at a
// multiple of 8 bytes; addresses[i] is table i's device address. The
// buffer must outlive the launches that read it (the caching allocator
// keeps it for the stream's pending work once the tensor is dropped).
struct DeviceTables {
  Tensor buffer;
  std::vector<uint64_t> addresses;
};

DeviceTables upload_tables(const KernelContext& ctx, std::initializer_list<HostTable> tables);

// A row of the multi-tensor kernels' chunk table: entry `entry`'s elements
// from `first` on (shaders/foreach.glsl, foreach_norm.comp read it as a
// uvec2).
struct Chunk {
  uint32_t entry;
  uint32_t first;
};

// Appends the chunks of `chunk_elems` elements that cover an entry of
// `numel` elements (none for an empty one) without overflowing uint32.
void append_chunks(std::vector<Chunk>& chunks, uint32_t entry, uint32_t numel,
                   uint32_t chunk_elems);

// Calls launch(first, groups) for consecutive slices of `count` work
// groups, each at most kMaxWorkGroupsPerDim (launch.h): one work group per
// table row, whatever the table's length.
template <typename F>
void launch_in_slices(size_t count, const F& launch) {
  for (size_t first = 0; first < count; first += kMaxWorkGroupsPerDim) {
    launch(static_cast<uint32_t>(first),
           static_cast<uint32_t>(std::min<size_t>(kMaxWorkGroupsPerDim, count - first)));
  }
}

// A host vector as a HostTable.
template <typename T>
HostTable host_table(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

}  // namespace tessera::vulkan
