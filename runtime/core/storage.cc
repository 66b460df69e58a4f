#include "runtime/core/storage.h"

#include "runtime/alloc/allocator.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/stream/stream.h"

namespace tessera {

Storage::Storage(Device device, void* data, size_t nbytes, Allocator* allocator)
    : device_(device), data_(data), nbytes_(nbytes), allocator_(allocator) {}

Storage::~Storage() {
  if (allocator_ == nullptr || data_ == nullptr) return;
  try {
    allocator_->deallocate(data_);
  } catch (...) {
    // A destructor must not throw (it may run during unwinding); a failed
    // free only leaks the block.
  }
}

StoragePtr allocate_storage(Device device, size_t nbytes) {
  CachingAllocator& allocator = CachingAllocator::get(device);
  void* data = allocator.allocate(nbytes, current_stream(device));
  try {
    return std::make_shared<Storage>(device, data, nbytes, &allocator);
  } catch (...) {
    allocator.deallocate(data);  // make_shared failed: do not leak the block
    throw;
  }
}

}  // namespace tessera
