#include "bridge/csrc/pinned_allocator.h"

#include <ATen/core/CachingHostAllocator.h>

#include <mutex>
#include <unordered_map>

#include "bridge/csrc/error_translation.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/storage.h"

namespace torch_tessera {
namespace {

// Live pinned blocks by start address, with their sizes for the stats.
// Interior pointers are not pinned by this definition, matching what
// callers pass (a storage's data).
std::mutex pinned_mutex;
std::unordered_map<const void*, size_t> pinned_blocks;
at::HostStats pinned_stats;  // guarded by pinned_mutex

void release(void* ctx) {
  auto* storage = static_cast<tessera::StoragePtr*>(ctx);
  if ((*storage)->data() != nullptr) {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_blocks.erase((*storage)->data());
    const size_t nbytes = (*storage)->nbytes();
    pinned_stats.active_requests.decrease(1);
    pinned_stats.active_bytes.decrease(nbytes);
    pinned_stats.allocations.decrease(1);
    pinned_stats.allocated_bytes.decrease(nbytes);
  }
  delete storage;
}

class PinnedAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    tessera::StoragePtr storage;
    TESSERA_TRANSLATE_ERRORS(storage = tessera::allocate_storage(tessera::host_device(), nbytes));
    void* data = storage->data();
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(pinned_mutex);
      pinned_blocks.emplace(data, nbytes);
      pinned_stats.active_requests.increase(1);
      pinned_stats.active_bytes.increase(nbytes);
      pinned_stats.allocations.increase(1);
      pinned_stats.allocated_bytes.increase(nbytes);
    }
    return c10::DataPtr(data, new tessera::StoragePtr(std::move(storage)), &release,
                        c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  // The runtime's copies between host and device are complete when they
  // return, so a pinned block never waits for a stream: there is nothing
  // to record beyond saying whether the block is ours.
  bool record_event(void* ptr, void* /*ctx*/, c10::Stream /*stream*/) override {
    return is_pinned(ptr);
  }

  // Pinned blocks are cached by the host device's caching allocator, which
  // is also the allocator of the tessera device on that runtime device (if
  // visible): emptying one empties the other's free segments too.
  void empty_cache() override {
    TESSERA_TRANSLATE_ERRORS(tessera::CachingAllocator::get(tessera::host_device()).empty_cache());
  }

  // Live pinned blocks only: cached free ones are the runtime allocator's
  // and counted in its statistics.
  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    return pinned_stats;
  }
  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_stats.active_requests.reset_accumulated();
    pinned_stats.active_bytes.reset_accumulated();
    pinned_stats.allocations.reset_accumulated();
    pinned_stats.allocated_bytes.reset_accumulated();
  }
  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_stats.active_requests.reset_peak();
    pinned_stats.active_bytes.reset_peak();
    pinned_stats.allocations.reset_peak();
    pinned_stats.allocated_bytes.reset_peak();
  }
};

PinnedAllocator& instance() {
  static PinnedAllocator allocator;
  return allocator;
}

// torch.accelerator.empty_host_cache() dereferences the PrivateUse1 host
// allocator without checking it exists.
const bool registered = [] {
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &instance());
  return true;
}();

}  // namespace

c10::Allocator* pinned_allocator() { return &instance(); }

bool is_pinned(const void* ptr) noexcept {
  if (ptr == nullptr) return false;
  std::lock_guard<std::mutex> lock(pinned_mutex);
  return pinned_blocks.count(ptr) != 0;
}

}  // namespace torch_tessera
