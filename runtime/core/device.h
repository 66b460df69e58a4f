// Device identity. The runtime knows no device by name: a device type is a
// small id handed out when a device library registers its DeviceInterface
// under a name ("cpu", "cuda", "vulkan", ...).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tessera {

struct DeviceType {
  uint8_t id = 0;

  friend bool operator==(DeviceType, DeviceType) = default;
  std::string_view name() const;  // the registered name

  // The type registered under name; ValueError if none is.
  static DeviceType from_name(std::string_view name);
};

struct Device {
  DeviceType type;
  int32_t index = 0;

  friend bool operator==(const Device&, const Device&) = default;

  std::string to_string() const;  // "cpu:0"
  // Parses "cpu", "vulkan:1"; ValueError on an unknown type or bad index.
  static Device parse(std::string_view text);
};

// The device kernels run on when a device has none for an op, and where
// host data lives: the device registered as "cpu". Throws if no CPU device
// library is linked.
Device host_device();

}  // namespace tessera

template <>
struct std::hash<tessera::Device> {
  size_t operator()(const tessera::Device& d) const noexcept {
    return (static_cast<size_t>(d.type.id) << 32) ^ static_cast<size_t>(d.index);
  }
};
