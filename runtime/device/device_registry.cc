#include "runtime/device/device_registry.h"

#include <cstdio>
#include <exception>

#include "runtime/core/error.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera {

DeviceRegistry& DeviceRegistry::instance() {
  static DeviceRegistry registry;
  return registry;
}

DeviceType DeviceRegistry::register_device(std::unique_ptr<DeviceInterface> iface) {
  TESSERA_CHECK(iface != nullptr, ValueError, "register_device: null device interface");
  std::lock_guard<std::mutex> lock(register_mutex_);
  std::string name(iface->type_name());
  TESSERA_CHECK(find(name) == nullptr, ValueError, "register_device: device type '",
                name, "' is already registered");
  const size_t n = count_.load(std::memory_order_relaxed);
  TESSERA_CHECK(n < kMaxDeviceTypes, ValueError,
                "register_device: at most ", kMaxDeviceTypes, " device types");
  DeviceType type{static_cast<uint8_t>(n)};
  DeviceInterface* raw = iface.get();
  entries_[n] = Entry{std::move(name), std::move(iface)};
  count_.store(n + 1, std::memory_order_release);
  raw->register_kernels(KernelRegistry::instance());
  return type;
}

void DeviceRegistry::register_device_at_load(std::unique_ptr<DeviceInterface> iface) noexcept {
  try {
    register_device(std::move(iface));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: a device library failed to register: %s\n", e.what());
  }
}

DeviceInterface* DeviceRegistry::find(std::string_view name) const {
  const size_t n = count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (entries_[i].name == name) return entries_[i].iface.get();
  }
  return nullptr;
}

bool DeviceRegistry::contains(DeviceType type) const {
  return type.id < count_.load(std::memory_order_acquire);
}

DeviceInterface& DeviceRegistry::get(DeviceType type) const {
  TESSERA_CHECK(contains(type), ValueError, "unknown device type id ", int(type.id),
                " (", count_.load(std::memory_order_acquire), " device types registered)");
  return *entries_[type.id].iface;
}

std::string_view DeviceRegistry::name(DeviceType type) const {
  return contains(type) ? std::string_view(entries_[type.id].name)
                        : std::string_view("<unregistered>");
}

std::vector<DeviceType> DeviceRegistry::types() const {
  std::vector<DeviceType> out;
  const size_t n = count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) out.push_back(DeviceType{static_cast<uint8_t>(i)});
  return out;
}

std::vector<Device> DeviceRegistry::all_devices() const {
  std::vector<Device> out;
  for (DeviceType t : types()) {
    int n = get(t).device_count();
    for (int i = 0; i < n; ++i) out.push_back(Device{t, i});
  }
  return out;
}

DeviceInterface& device_interface(Device device) {
  DeviceInterface& iface = DeviceRegistry::instance().get(device.type);
  TESSERA_CHECK(device.index >= 0 && device.index < iface.device_count(), ValueError,
                "device ", device.to_string(), " does not exist (",
                iface.device_count(), " ", iface.type_name(), " devices)");
  return iface;
}

}  // namespace tessera
