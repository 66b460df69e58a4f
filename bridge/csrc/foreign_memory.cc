#include "bridge/csrc/foreign_memory.h"

#include <c10/util/Exception.h>

#include <cstdint>
#include <memory>
#include <sstream>

#include "bridge/csrc/device_list.h"
#include "runtime/alloc/caching_allocator.h"

namespace torch_tessera {

tessera::StoragePtr borrow_foreign_storage(const c10::Storage& storage, c10::Device device,
                                           const char* op) {
  const tessera::Device runtime = runtime_device(device);
  void* data = storage.mutable_data();
  const size_t nbytes = storage.nbytes();
  if (nbytes > 0) {
    const auto address = reinterpret_cast<uintptr_t>(data);
    const bool live = tessera::CachingAllocator::get(runtime)
                          .allocated_block_containing(address, nbytes)
                          .has_value();
    if (!live) {
      std::ostringstream where;
      where << "0x" << std::hex << address;
      TORCH_CHECK(false, op, ": a tensor on ", device, " whose memory (", nbytes,
                  " bytes at ", where.str(), ") is not a live allocation of ", device,
                  " (", runtime.to_string(), "); tessera tensors must live in memory "
                  "the tessera allocator handed out on their device, e.g. through "
                  "torch.from_dlpack of a tessera tensor");
    }
  }
  return std::make_shared<tessera::Storage>(runtime, data, nbytes, /*allocator=*/nullptr);
}

}  // namespace torch_tessera
