// The per-device pool of library handles behind CublasLease and CudnnLease.
// Creating a cuBLAS or cuDNN handle costs milliseconds, and a handle may be
// used by one thread at a time, so a lease takes a free handle of its
// device (or creates one), binds it to the caller's stream, and gives it
// back when the lease ends. Host code only (not among the nvcc actions'
// inputs, see BUILD).
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "devices/cuda/cuda_context.h"

namespace tessera::cuda {

template <typename Handle>
class HandlePool {
 public:
  // A handle of `device`, bound to a stream by `bind(handle)`. When the
  // pool has none, `create(&handle)` makes one with the device current (a
  // handle belongs to the device current at its creation). create and
  // bind raise on failure; a handle whose bind fails goes back first.
  template <typename Create, typename Bind>
  Handle take(CudaContext& device, const Create& create, const Bind& bind) {
    Handle handle = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<Handle>& free = free_[device.index()];
      if (!free.empty()) {
        handle = free.back();
        free.pop_back();
      }
    }
    if (handle == nullptr) {
      DeviceScope scope(device);
      create(&handle);
    }
    try {
      bind(handle);
    } catch (...) {
      give_back(device.index(), handle);
      throw;
    }
    return handle;
  }

  void give_back(int device_index, Handle handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[device_index].push_back(handle);
  }

 private:
  std::mutex mutex_;
  std::map<int, std::vector<Handle>> free_;  // by device index
};

}  // namespace tessera::cuda
