// What the Vulkan device tests share: whether a Vulkan device is present
// (REQUIRE_VULKAN skips a test without one), the device, and the CPU
// fallback count of an op.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/tessera.h"
#include "tests/support/skip.h"

namespace tessera::vulkan_testing {

inline DeviceInterface* vulkan_interface() { return DeviceRegistry::instance().find("vulkan"); }

inline bool have_vulkan() {
  DeviceInterface* iface = vulkan_interface();
  return iface != nullptr && iface->device_count() > 0;
}

inline Device gpu() { return Device::parse("vulkan:0"); }

inline int64_t fallback_count(const std::string& op) {
  const auto counts = cpu_fallback_counts();
  const auto it = counts.find(op);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace tessera::vulkan_testing

#define REQUIRE_VULKAN() \
  if (!tessera::vulkan_testing::have_vulkan()) TESSERA_SKIP("no Vulkan device on this machine")
