// The process-wide list of device types and their interfaces. Device
// libraries register themselves from a static initializer
// (TESSERA_REGISTER_DEVICE) when they are loaded: linked into a program, or
// loaded later by load_device_libraries (device_library_loader.h), so
// registration may happen while other threads read the list.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/device/device_interface.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera {

class DeviceRegistry {
 public:
  static DeviceRegistry& instance();

  // Registers a device type under iface->type_name() and registers its
  // kernels. Returns the new type; ValueError if the name is taken.
  DeviceType register_device(std::unique_ptr<DeviceInterface> iface);
  // For static initializers: as register_device, but a failure is reported
  // on stderr instead of escaping (an exception there ends the process).
  void register_device_at_load(std::unique_ptr<DeviceInterface> iface) noexcept;

  // nullptr if no type has that name.
  DeviceInterface* find(std::string_view name) const;
  bool contains(DeviceType type) const;
  DeviceInterface& get(DeviceType type) const;  // ValueError if unknown
  std::string_view name(DeviceType type) const;
  std::vector<DeviceType> types() const;

  // Every device of every registered type, in registration order of types.
  std::vector<Device> all_devices() const;

 private:
  DeviceRegistry() = default;
  struct Entry {
    std::string name;
    std::unique_ptr<DeviceInterface> iface;
  };
  // index == DeviceType::id; only appended, never moved: readers see the
  // first count_ entries without a lock.
  std::array<Entry, kMaxDeviceTypes> entries_;
  std::atomic<size_t> count_{0};
  std::mutex register_mutex_;
};

// The interface of device's type, after checking that index exists.
DeviceInterface& device_interface(Device device);

}  // namespace tessera

#define TESSERA_REGISTER_DEVICE_CONCAT2(a, b) a##b
#define TESSERA_REGISTER_DEVICE_CONCAT(a, b) TESSERA_REGISTER_DEVICE_CONCAT2(a, b)
// Registers `expr` (a std::unique_ptr<DeviceInterface>) at static init.
#define TESSERA_REGISTER_DEVICE(expr)                                        \
  static const bool TESSERA_REGISTER_DEVICE_CONCAT(tessera_registered_device_, \
                                                   __LINE__) =                 \
      (::tessera::DeviceRegistry::instance().register_device_at_load(expr), true)
