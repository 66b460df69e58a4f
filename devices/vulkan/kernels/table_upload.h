// Tables a kernel builds on the host and its shaders read through buffer
// device addresses (the multi-tensor kernels' entries and chunks): one
// upload for all of them, so a list costs one copy however many tables
// it has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

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

// A host vector as a HostTable.
template <typename T>
HostTable host_table(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

}  // namespace tessera::vulkan
