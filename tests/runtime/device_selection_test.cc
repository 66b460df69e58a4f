// selected_devices: how TESSERA_<TYPE>_DEVICES picks and orders a device
// type's devices (shared by the Vulkan and CUDA devices).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

#include "runtime/device/device_selection.h"

using tessera::selected_devices;

namespace {

constexpr const char* kVar = "TESSERA_SELECTION_TEST_DEVICES";

std::vector<int> select(const char* value, int available) {
  if (value == nullptr) {
    unsetenv(kVar);
  } else {
    setenv(kVar, value, 1);
  }
  return selected_devices(kVar, available);
}

}  // namespace

TEST_CASE("device selection: unset or empty means every device in order", "[selection]") {
  CHECK(select(nullptr, 3) == std::vector<int>{0, 1, 2});
  CHECK(select("", 3) == std::vector<int>{0, 1, 2});
  CHECK(select(nullptr, 0).empty());
}

TEST_CASE("device selection: the listed devices in the listed order", "[selection]") {
  CHECK(select("2,0", 3) == std::vector<int>{2, 0});
  CHECK(select("1", 3) == std::vector<int>{1});
}

TEST_CASE("device selection: each device once, absent ones skipped", "[selection]") {
  CHECK(select("0,0,1,0", 2) == std::vector<int>{0, 1});
  CHECK(select("999,1", 2) == std::vector<int>{1});
  CHECK(select("5", 2).empty());
  CHECK(select("0", 0).empty());
}

TEST_CASE("device selection: malformed entries are skipped, not fatal", "[selection]") {
  CHECK(select("x,1", 2) == std::vector<int>{1});
  CHECK(select("-1,0", 2) == std::vector<int>{0});
  CHECK(select("1,,0", 2) == std::vector<int>{1, 0});
  CHECK(select("1.5,0", 2) == std::vector<int>{0});
  CHECK(select("99999999999999999999,1", 2) == std::vector<int>{1});
}
