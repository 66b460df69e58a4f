#include "bridge/csrc/pinned_allocator.h"

#include <ATen/core/CachingHostAllocator.h>

#include <mutex>

#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/device_list.h"
#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/storage.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {
namespace {

// Live pinned requests for PyTorch's host statistics (the runtime's own
// statistics count blocks, rounded to powers of two).
std::mutex stats_mutex;
at::HostStats pinned_stats;  // guarded by stats_mutex

void release(void* ctx) {
  auto* storage = static_cast<tessera::StoragePtr*>(ctx);
  if ((*storage)->data() != nullptr) {
    std::lock_guard<std::mutex> lock(stats_mutex);
    const size_t nbytes = (*storage)->nbytes();
    pinned_stats.active_requests.decrease(1);
    pinned_stats.active_bytes.decrease(nbytes);
    pinned_stats.allocations.decrease(1);
    pinned_stats.allocated_bytes.decrease(nbytes);
  }
  delete storage;  // the block returns to the runtime's cache once its streams pass it
}

class PinnedAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    tessera::StoragePtr storage;
    TESSERA_TRANSLATE_ERRORS(storage = tessera::PinnedHostAllocator::get().allocate(nbytes));
    void* data = storage->data();
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(stats_mutex);
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

  // The block holding ptr is kept from reuse until `stream`'s work so far
  // is done (the runtime's copy_ records its own non-blocking copies).
  bool record_event(void* ptr, void* /*ctx*/, c10::Stream stream) override {
    if (!stream.device().is_privateuseone()) return false;
    bool recorded = false;
    TESSERA_TRANSLATE_ERRORS(recorded = tessera::PinnedHostAllocator::get().record_stream(
                                 ptr, tessera::Stream(runtime_device(stream.device()),
                                                      static_cast<uint32_t>(stream.id()))));
    return recorded;
  }

  // Frees the cached pinned blocks whose streams have passed them.
  void empty_cache() override {
    TESSERA_TRANSLATE_ERRORS(tessera::PinnedHostAllocator::get().empty_cache());
  }

  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(stats_mutex);
    return pinned_stats;
  }
  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(stats_mutex);
    pinned_stats.active_requests.reset_accumulated();
    pinned_stats.active_bytes.reset_accumulated();
    pinned_stats.allocations.reset_accumulated();
    pinned_stats.allocated_bytes.reset_accumulated();
  }
  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(stats_mutex);
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
  return tessera::PinnedHostAllocator::get().owns(ptr);
}

}  // namespace torch_tessera
