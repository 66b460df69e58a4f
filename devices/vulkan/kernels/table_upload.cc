// One host staging copy and one upload for a kernel's tables.
#include "devices/vulkan/kernels/table_upload.h"

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {

DeviceTables upload_tables(const KernelContext& ctx, std::initializer_list<HostTable> tables) {
  std::vector<size_t> offsets;
  size_t nbytes = 0;
  for (const HostTable& t : tables) {
    offsets.push_back(nbytes);
    TESSERA_CHECK(t.bytes <= SIZE_MAX - nbytes - 8, ValueError,
                  "vulkan: a kernel's tables exceed the address space");
    nbytes += (t.bytes + 7) / 8 * 8;
  }
  Tensor host = empty({static_cast<int64_t>(nbytes)}, TensorOptions(DType::kU8, host_device()));
  auto* bytes = static_cast<uint8_t*>(host.data_ptr());
  size_t k = 0;
  for (const HostTable& t : tables) {
    if (t.bytes > 0) std::memcpy(bytes + offsets[k], t.data, t.bytes);
    ++k;
  }
  DeviceTables out;
  out.buffer = empty({static_cast<int64_t>(nbytes)}, TensorOptions(DType::kU8, ctx.device));
  out.buffer.copy_(host);
  const auto base = reinterpret_cast<uint64_t>(out.buffer.data_ptr());
  for (size_t offset : offsets) out.addresses.push_back(base + offset);
  return out;
}

void append_chunks(std::vector<Chunk>& chunks, uint32_t entry, uint32_t numel,
                   uint32_t chunk_elems) {
  for (uint32_t first = 0; first < numel; first += chunk_elems) {
    chunks.push_back({entry, first});
    if (numel - first <= chunk_elems) break;  // no uint32 overflow past the end
  }
}

}  // namespace tessera::vulkan
