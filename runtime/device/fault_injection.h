// Faults on purpose, for reliability tests: a device's allocations refused
// as out of memory, its operations (kernel launches, copies) failing, or
// the device lost. The checks sit in the runtime's own paths (the caching
// allocator, the kernel dispatch, copies between devices), so they work
// the same on every device, real or fake, with no hook in the device.
//
// Off by default and free when off: each check is one relaxed atomic load.
//
//   fault_injection::inject(vulkan0, Fault::kAllocation, /*after=*/2);
//   add(a, b);  // the third allocation on vulkan:0 throws OutOfMemoryError
//   fault_injection::clear();
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/core/device.h"

namespace tessera::fault_injection {

enum class Fault {
  // An allocation request is refused: OutOfMemoryError, as when the device
  // is full after the allocator has freed its cache.
  kAllocation,
  // A kernel launch or copy fails: DeviceError, as on a driver error.
  kOperation,
  // The device is lost: from the fault on, every allocation, kernel launch
  // and copy on it throws DeviceError, until clear().
  kDeviceLost,
};

// On `device`, the first `after` events of the fault's kind (allocations;
// operations for the other two) succeed and the next `count` fail (count
// < 0: all that follow). Replaces an earlier injection of the same fault on
// the same device.
void inject(Device device, Fault fault, int64_t after = 0, int64_t count = 1);

// Removes every injection; a lost device works again.
void clear();

// Faults that fired since the last clear().
int64_t fired();

// Allocations and operations on device since the last clear(), counted
// only while some injection is in place (so a test can count what an op
// does by injecting a fault that never fires).
int64_t allocations(Device device);
int64_t operations(Device device);

namespace detail {
extern std::atomic<bool> armed;
void on_allocation(Device device, size_t nbytes);
void on_operation(Device device, const char* what);
}  // namespace detail

// The hooks, called by the runtime.
inline void check_allocation(Device device, size_t nbytes) {
  if (detail::armed.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::on_allocation(device, nbytes);
  }
}
inline void check_operation(Device device, const char* what) {
  if (detail::armed.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::on_operation(device, what);
  }
}

}  // namespace tessera::fault_injection
