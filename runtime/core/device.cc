#include "runtime/core/device.h"

#include <charconv>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"

namespace tessera {

std::string_view DeviceType::name() const { return DeviceRegistry::instance().name(*this); }

DeviceType DeviceType::from_name(std::string_view name) {
  const DeviceRegistry& registry = DeviceRegistry::instance();
  for (DeviceType t : registry.types()) {
    if (registry.name(t) == name) return t;
  }
  std::string known;
  for (DeviceType t : registry.types()) {
    known += (known.empty() ? "" : ", ") + std::string(registry.name(t));
  }
  throw ValueError(detail::concat("unknown device type '", name,
                                  "' (registered: ", known.empty() ? "none" : known, ")"));
}

std::string Device::to_string() const {
  return std::string(type.name()) + ":" + std::to_string(index);
}

Device Device::parse(std::string_view text) {
  size_t colon = text.find(':');
  Device d{DeviceType::from_name(text.substr(0, colon)), 0};
  if (colon != std::string_view::npos) {
    std::string_view idx = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), d.index);
    TESSERA_CHECK(ec == std::errc() && end == idx.data() + idx.size() && d.index >= 0,
                  ValueError, "invalid device string '", text,
                  "': expected 'type' or 'type:index'");
  }
  return d;
}

Device host_device() {
  static const Device host{DeviceType::from_name("cpu"), 0};
  return host;
}

}  // namespace tessera
