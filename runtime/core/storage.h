// A reference-counted block of device memory. The allocator that produced
// it frees it when the last reference (tensor, view, bridge storage) goes.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/core/device.h"

namespace tessera {

class Allocator;

class Storage {
 public:
  // Takes ownership of data, which allocator->deallocate() releases. A null
  // allocator means the memory is borrowed (e.g. wrapped from the host) and
  // is never freed here.
  Storage(Device device, void* data, size_t nbytes, Allocator* allocator);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  Device device() const { return device_; }
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Allocator* allocator() const { return allocator_; }

 private:
  Device device_;
  void* data_;
  size_t nbytes_;
  Allocator* allocator_;
};

using StoragePtr = std::shared_ptr<Storage>;

// Allocates nbytes on device through its caching allocator, on the current
// stream of that device.
StoragePtr allocate_storage(Device device, size_t nbytes);

}  // namespace tessera
