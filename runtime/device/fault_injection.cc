#include "runtime/device/fault_injection.h"

#include <map>
#include <mutex>
#include <utility>

#include "runtime/core/error.h"

namespace tessera::fault_injection {

namespace detail {
std::atomic<bool> armed{false};
}  // namespace detail

namespace {

struct Plan {
  int64_t after = 0;
  int64_t count = 0;  // < 0: unbounded
};

struct DeviceState {
  std::map<Fault, Plan> plans;
  int64_t allocations = 0;
  int64_t operations = 0;
  bool lost = false;
};

struct State {
  std::mutex mutex;
  std::map<std::pair<int, int>, DeviceState> devices;  // (type id, index)
  int64_t fired = 0;
};

State& state() {
  static State* s = new State;  // never destroyed: hooks may run at exit
  return *s;
}

std::pair<int, int> key(Device d) { return {d.type.id, d.index}; }

// Whether the event numbered `seen` (0-based) of plan p fails.
bool fires(const Plan& p, int64_t seen) {
  return seen >= p.after && (p.count < 0 || seen < p.after + p.count);
}

}  // namespace

void inject(Device device, Fault fault, int64_t after, int64_t count) {
  TESSERA_CHECK(after >= 0, ValueError, "fault_injection::inject: after must be >= 0, got ",
                after);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.devices[key(device)].plans[fault] = Plan{after, count};
  detail::armed.store(true, std::memory_order_relaxed);
}

void clear() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.devices.clear();
  s.fired = 0;
  detail::armed.store(false, std::memory_order_relaxed);
}

int64_t fired() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.fired;
}

int64_t allocations(Device device) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.devices.find(key(device));
  return it == s.devices.end() ? 0 : it->second.allocations;
}

int64_t operations(Device device) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.devices.find(key(device));
  return it == s.devices.end() ? 0 : it->second.operations;
}

namespace detail {

void on_allocation(Device device, size_t nbytes) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  DeviceState& d = s.devices[key(device)];
  const int64_t seen = d.allocations++;
  if (d.lost) {
    ++s.fired;
    lock.unlock();
    throw DeviceError(tessera::detail::concat("allocating ", nbytes, " bytes on ", device.to_string(),
                                     ": the device was lost (injected fault)"));
  }
  auto it = d.plans.find(Fault::kAllocation);
  if (it == d.plans.end() || !fires(it->second, seen)) return;
  ++s.fired;
  lock.unlock();
  throw OutOfMemoryError(tessera::detail::concat("out of memory on ", device.to_string(),
                                        ": allocation of ", nbytes,
                                        " bytes refused (injected fault)"));
}

void on_operation(Device device, const char* what) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  DeviceState& d = s.devices[key(device)];
  const int64_t seen = d.operations++;
  if (auto it = d.plans.find(Fault::kDeviceLost); it != d.plans.end() && fires(it->second, seen)) {
    d.lost = true;
  }
  if (d.lost) {
    ++s.fired;
    lock.unlock();
    throw DeviceError(tessera::detail::concat(what, " on ", device.to_string(),
                                     ": the device was lost (injected fault)"));
  }
  auto it = d.plans.find(Fault::kOperation);
  if (it == d.plans.end() || !fires(it->second, seen)) return;
  ++s.fired;
  lock.unlock();
  throw DeviceError(tessera::detail::concat(what, " on ", device.to_string(),
                                   " failed (injected device error)"));
}

}  // namespace detail

}  // namespace tessera::fault_injection
