#include "bridge/csrc/pinned_allocator.h"

#include <mutex>
#include <unordered_set>

#include "bridge/csrc/error_translation.h"
#include "runtime/core/storage.h"

namespace torch_tessera {
namespace {

// Start addresses of live pinned blocks. Interior pointers are not pinned
// by this definition, matching what callers pass (a storage's data).
std::mutex pinned_mutex;
std::unordered_set<const void*> pinned_blocks;

void release(void* ctx) {
  auto* storage = static_cast<tessera::StoragePtr*>(ctx);
  {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_blocks.erase((*storage)->data());
  }
  delete storage;
}

class PinnedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    tessera::StoragePtr storage;
    TESSERA_TRANSLATE_ERRORS(storage = tessera::allocate_storage(tessera::host_device(), nbytes));
    void* data = storage->data();
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(pinned_mutex);
      pinned_blocks.insert(data);
    }
    return c10::DataPtr(data, new tessera::StoragePtr(std::move(storage)), &release,
                        c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

}  // namespace

c10::Allocator* pinned_allocator() {
  static PinnedAllocator instance;
  return &instance;
}

bool is_pinned(const void* ptr) {
  std::lock_guard<std::mutex> lock(pinned_mutex);
  return pinned_blocks.count(ptr) != 0;
}

}  // namespace torch_tessera
