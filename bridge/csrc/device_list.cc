#include "bridge/csrc/device_list.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "runtime/device/device_listing.h"
#include "runtime/device/device_registry.h"

namespace torch_tessera {
namespace {

// Hardware accelerators first (tessera:0 is the GPU where there is one),
// then the host device, then devices emulated on the host's CPU
// (lavapipe): those are slower than the host device itself. Device types
// made for developing Tessera (the template device) are left out; naming
// them in TESSERA_VISIBLE_DEVICES uses them.
std::vector<tessera::Device> default_order() {
  auto& registry = tessera::DeviceRegistry::instance();
  std::vector<tessera::Device> accelerators, hosts, software;
  const tessera::Device host = tessera::host_device();
  for (const tessera::Device& d : registry.all_devices()) {
    if (!tessera::listed_by_default(registry.name(d.type))) continue;
    if (d.type == host.type) {
      hosts.push_back(d);
    } else if (registry.get(d.type).properties(d.index).software) {
      software.push_back(d);
    } else {
      accelerators.push_back(d);
    }
  }
  accelerators.insert(accelerators.end(), hosts.begin(), hosts.end());
  accelerators.insert(accelerators.end(), software.begin(), software.end());
  return accelerators;
}

// "cpu, vulkan" in an error message: the device types this build has.
std::string known_types() {
  auto& registry = tessera::DeviceRegistry::instance();
  std::string out;
  for (const tessera::DeviceType type : registry.types()) {
    if (!out.empty()) out += ", ";
    out += std::string(registry.name(type));
  }
  return out;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// Errors here are ValueErrors naming the variable, its value and what is
// wrong; they surface on the first use of a tessera device.
std::vector<tessera::Device> parse_visible(const std::string& spec) {
  auto& registry = tessera::DeviceRegistry::instance();
  std::vector<tessera::Device> out;
  const auto add = [&](const tessera::Device& d, const std::string& item) {
    for (const tessera::Device& seen : out) {
      // Two tessera indices on one runtime device would make the device of
      // a storage ambiguous.
      TORCH_CHECK_VALUE(!(seen == d), "TESSERA_VISIBLE_DEVICES='", spec, "': ", item,
                        " names runtime device ", d.to_string(), " a second time");
    }
    out.push_back(d);
  };
  std::stringstream items(spec);
  std::string raw;
  while (std::getline(items, raw, ',')) {
    const std::string item = trimmed(raw);
    if (item.empty()) continue;
    if (item.find(':') == std::string::npos) {
      TORCH_CHECK_VALUE(registry.find(item) != nullptr, "TESSERA_VISIBLE_DEVICES='", spec,
                        "': unknown device type '", item, "' (this build has: ", known_types(),
                        ")");
      const tessera::DeviceType type = tessera::DeviceType::from_name(item);
      const int n = registry.get(type).device_count();
      for (int i = 0; i < n; ++i) add(tessera::Device{type, i}, item);
      continue;
    }
    tessera::Device d;
    try {
      d = tessera::Device::parse(item);
    } catch (const std::exception& e) {
      TORCH_CHECK_VALUE(false, "TESSERA_VISIBLE_DEVICES='", spec, "': '", item,
                        "' is not a device (this build has: ", known_types(), "): ", e.what());
    }
    const int n = registry.get(d.type).device_count();
    TORCH_CHECK_VALUE(d.index >= 0 && d.index < n, "TESSERA_VISIBLE_DEVICES='", spec, "': ",
                      item, " does not exist on this machine (it has ", n, " ",
                      std::string(registry.name(d.type)), " device", n == 1 ? "" : "s", ")");
    add(d, item);
  }
  return out;
}

// "there is 1 tessera device (tessera:0)", and where the list comes from.
std::string describe_devices(size_t count) {
  std::string out;
  if (count == 0) {
    out = "there are no tessera devices";
  } else if (count == 1) {
    out = "there is 1 tessera device (tessera:0)";
  } else {
    out = "there are " + std::to_string(count) + " tessera devices (tessera:0 to tessera:" +
          std::to_string(count - 1) + ")";
  }
  if (const char* spec = std::getenv("TESSERA_VISIBLE_DEVICES"); spec != nullptr) {
    out += std::string(" with TESSERA_VISIBLE_DEVICES='") + spec + "'";
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
  TORCH_CHECK_INDEX(index >= 0 && static_cast<size_t>(index) < devices.size(), "tessera:",
                    static_cast<int>(index), " does not exist: ",
                    describe_devices(devices.size()));
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
