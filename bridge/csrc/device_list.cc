#include "bridge/csrc/device_list.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "runtime/device/device_registry.h"

namespace torch_tessera {
namespace {

std::vector<tessera::Device> default_order() {
  std::vector<tessera::Device> accelerators;
  std::vector<tessera::Device> hosts;
  const tessera::Device host = tessera::host_device();
  for (const tessera::Device& d : tessera::DeviceRegistry::instance().all_devices()) {
    (d.type == host.type ? hosts : accelerators).push_back(d);
  }
  accelerators.insert(accelerators.end(), hosts.begin(), hosts.end());
  return accelerators;
}

std::vector<tessera::Device> parse_visible(const std::string& spec) {
  auto& registry = tessera::DeviceRegistry::instance();
  std::vector<tessera::Device> out;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    if (item.find(':') == std::string::npos) {
      TORCH_CHECK(registry.find(item) != nullptr, "TESSERA_VISIBLE_DEVICES='", spec,
                  "': unknown device type '", item, "'");
      const tessera::DeviceType type = tessera::DeviceType::from_name(item);
      const int n = registry.get(type).device_count();
      for (int i = 0; i < n; ++i) out.push_back(tessera::Device{type, i});
      continue;
    }
    tessera::Device d;
    try {
      d = tessera::Device::parse(item);
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "TESSERA_VISIBLE_DEVICES='", spec, "': ", e.what());
    }
    TORCH_CHECK(d.index < registry.get(d.type).device_count(), "TESSERA_VISIBLE_DEVICES='",
                spec, "': ", item, " does not exist on this machine");
    out.push_back(d);
  }
  return out;
}

thread_local c10::DeviceIndex tls_current_device = 0;

}  // namespace

const std::vector<tessera::Device>& visible_devices() {
  static const std::vector<tessera::Device> devices = [] {
    const char* spec = std::getenv("TESSERA_VISIBLE_DEVICES");
    return spec != nullptr ? parse_visible(spec) : default_order();
  }();
  return devices;
}

c10::DeviceIndex device_count() {
  return static_cast<c10::DeviceIndex>(visible_devices().size());
}

tessera::Device runtime_device(c10::DeviceIndex index) {
  const auto& devices = visible_devices();
  TORCH_CHECK_INDEX(index >= 0 && static_cast<size_t>(index) < devices.size(),
                    "tessera:", static_cast<int>(index), " does not exist: there are ",
                    devices.size(), " tessera devices");
  return devices[static_cast<size_t>(index)];
}

tessera::Device runtime_device(const c10::Device& device) {
  TORCH_CHECK(device.type() == c10::DeviceType::PrivateUse1, "expected a tessera device, got ",
              device);
  return runtime_device(device.has_index() ? device.index() : current_device());
}

c10::DeviceIndex torch_index(const tessera::Device& device) {
  const auto& devices = visible_devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == device) return static_cast<c10::DeviceIndex>(i);
  }
  TORCH_CHECK(false, "runtime device ", device.to_string(),
              " is not a visible tessera device (TESSERA_VISIBLE_DEVICES)");
}

c10::Device torch_device(const tessera::Device& device) {
  return c10::Device(c10::DeviceType::PrivateUse1, torch_index(device));
}

c10::DeviceIndex current_device() { return tls_current_device; }

void set_current_device(c10::DeviceIndex index) {
  runtime_device(index);  // range check
  tls_current_device = index;
}

}  // namespace torch_tessera
