// Which Vulkan devices the backend uses, run under environments set by the
// BUILD targets (each target selects its test cases by tag):
//  [no_driver]    the loader finds no driver: 0 devices, and using one is a
//                 clear error, never a crash;
//  [device_list]  TESSERA_VULKAN_DEVICES="999,0,0": absent indices are
//                 ignored and repeated ones count once.
#include <catch2/catch.hpp>

#include "devices/vulkan/vulkan_device.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/ops.h"
#include "tests/support/skip.h"

using namespace tessera;

TEST_CASE("vulkan: no driver means zero devices", "[no_driver]") {
  DeviceInterface* iface = DeviceRegistry::instance().find("vulkan");
  REQUIRE(iface != nullptr);  // the type registers whether or not Vulkan works
  CHECK(iface->device_count() == 0);
  CHECK(iface->device_count() == 0);  // asking again is just as quiet
  CHECK_THROWS_AS(iface->properties(0), ValueError);
  CHECK_THROWS_AS(zeros({2}, TensorOptions(Device::parse("vulkan:0"))), Error);
  // The host keeps working.
  CHECK(ones({3}).to_vector<double>() == std::vector<double>{1, 1, 1});
}

TEST_CASE("vulkan: TESSERA_VULKAN_DEVICES picks and dedups", "[device_list]") {
  DeviceInterface* iface = DeviceRegistry::instance().find("vulkan");
  REQUIRE(iface != nullptr);
  // "999,0,0": at most physical device 0, once.
  CHECK(iface->device_count() <= 1);
  if (iface->device_count() == 0) TESSERA_SKIP("physical device 0 is absent or unusable here");
  CHECK(vulkan::device_info(0).physical_index == 0);
  CHECK(DeviceRegistry::instance().find("vulkan")->properties(0).native_index == 0);
  Tensor t = full({4}, 2.5, TensorOptions(Device::parse("vulkan:0")));
  CHECK(t.to(host_device()).to_vector<double>() == std::vector<double>(4, 2.5));
}
