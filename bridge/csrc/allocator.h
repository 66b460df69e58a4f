// The PyTorch allocator for tessera devices: a thin adapter over the
// runtime's caching allocator. A torch storage's DataPtr context holds a
// reference to the runtime Storage, so torch and the runtime share memory
// with no copies, and the memory lives as long as either side uses it.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include "runtime/core/storage.h"

namespace torch_tessera {

class TesseraAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t mempool_id) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;
};

TesseraAllocator& allocator();

// A DataPtr that keeps `storage` alive, on the tessera device it lives on.
c10::DataPtr make_data_ptr(tessera::StoragePtr storage);

// The runtime storage behind a DataPtr made here; nullptr for any other
// DataPtr (memory torch allocated some other way).
const tessera::StoragePtr* runtime_storage(const c10::DataPtr& ptr);

}  // namespace torch_tessera
