#include "runtime/ops/kernel_registry.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace tessera {

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

int KernelRegistry::slot_for(const char* name, bool optional) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(name);
  if (it != slots_.end()) return it->second;
  const int s = num_rows_.load();
  TESSERA_CHECK(s < kMaxOps, ValueError, "KernelRegistry: more than ", kMaxOps, " ops");
  rows_[s].name = name;
  rows_[s].optional = optional;
  slots_.emplace(name, s);
  num_rows_.store(s + 1);
  return s;
}

void KernelRegistry::set(int slot, DeviceType type, void* fn) {
  TESSERA_CHECK(type.id < kMaxDeviceTypes, ValueError,
                "KernelRegistry: device type id ", int(type.id), " out of range");
  rows_[slot].fns[type.id].store(fn, std::memory_order_release);
}

void* KernelRegistry::get(int slot, DeviceType type) const {
  if (type.id >= kMaxDeviceTypes) return nullptr;
  return rows_[slot].fns[type.id].load(std::memory_order_acquire);
}

std::vector<std::string> KernelRegistry::ops_for(DeviceType type) const {
  return names_for(type, /*with_optional=*/true);
}

std::vector<std::string> KernelRegistry::required_ops_for(DeviceType type) const {
  return names_for(type, /*with_optional=*/false);
}

std::vector<std::string> KernelRegistry::names_for(DeviceType type, bool with_optional) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (int i = 0; i < num_rows_.load(); ++i) {
    if (rows_[i].optional && !with_optional) continue;
    if (rows_[i].name && type.id < kMaxDeviceTypes && rows_[i].fns[type.id].load()) {
      names.emplace_back(rows_[i].name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tessera
