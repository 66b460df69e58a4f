// Device names, parsing and the device registry with the CPU device linked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>

#include "runtime/core/device.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using tessera::testing::MessageContains;

namespace {

// A device interface that only has a name: enough to try registering it.
class NamedOnlyDevice : public DeviceInterface {
 public:
  explicit NamedOnlyDevice(std::string name) : name_(std::move(name)) {}
  std::string_view type_name() const override { return name_; }
  int device_count() override { return 0; }
  DeviceProperties properties(int) override { return {}; }
  MemoryInfo memory_info(int) override { return {}; }
  void* raw_allocate(int, size_t) override { return nullptr; }
  void raw_free(int, void*) override {}
  void copy_async(CopyKind, void*, const void*, size_t, int, NativeStream) override {}
  NativeStream default_stream(int) override { return nullptr; }
  NativeStream create_stream(int) override { return nullptr; }
  void destroy_stream(int, NativeStream) override {}
  bool query_stream(int, NativeStream) override { return true; }
  void synchronize_stream(int, NativeStream) override {}
  NativeEvent create_event(int) override { return nullptr; }
  void destroy_event(int, NativeEvent) override {}
  void record_event(int, NativeEvent, NativeStream) override {}
  void stream_wait_event(int, NativeStream, NativeEvent) override {}
  bool query_event(int, NativeEvent) override { return true; }
  void synchronize_event(int, NativeEvent) override {}
  double elapsed_ms(int, NativeEvent, NativeEvent) override { return 0; }
  void synchronize_device(int) override {}
  void register_kernels(KernelRegistry&) override {}

 private:
  std::string name_;
};

}  // namespace

TEST_CASE("device: parse and to_string", "[device]") {
  Device cpu = Device::parse("cpu");
  CHECK(cpu.type.name() == "cpu");
  CHECK(cpu.index == 0);
  CHECK(cpu.to_string() == "cpu:0");
  Device cpu0 = Device::parse("cpu:0");
  CHECK(cpu0 == cpu);
  CHECK(cpu0.to_string() == "cpu:0");
  CHECK(Device::parse(cpu0.to_string()) == cpu0);
  CHECK(host_device() == cpu0);
  CHECK(DeviceType::from_name("cpu") == cpu.type);

  CHECK_THROWS_MATCHES(Device::parse("gpu"), ValueError, MessageContains({"gpu"}));
  CHECK_THROWS_MATCHES(Device::parse("notadevice:0"), ValueError,
                       MessageContains({"notadevice"}));
  CHECK_THROWS_AS(Device::parse(""), ValueError);
  CHECK_THROWS_AS(Device::parse("cpu:"), ValueError);
  CHECK_THROWS_AS(Device::parse("cpu:x"), ValueError);
  CHECK_THROWS_AS(Device::parse("cpu:-1"), ValueError);
  CHECK_THROWS_AS(Device::parse("cpu:0:1"), ValueError);
  CHECK_THROWS_AS(Device::parse("cpu0"), ValueError);
  CHECK_THROWS_AS(Device::parse("CPU"), ValueError);
  CHECK_THROWS_MATCHES(DeviceType::from_name("nope"), ValueError,
                       MessageContains({"nope"}));

  std::unordered_set<Device> set = {cpu, cpu0, host_device()};
  CHECK(set.size() == 1);
}

TEST_CASE("device: the registry lists the CPU device", "[device]") {
  DeviceRegistry& reg = DeviceRegistry::instance();
  CHECK(&reg == &DeviceRegistry::instance());
  DeviceInterface* cpu = reg.find("cpu");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->type_name() == "cpu");
  CHECK(cpu->device_count() >= 1);
  CHECK(reg.find("definitely-not-registered") == nullptr);

  DeviceType type = DeviceType::from_name("cpu");
  CHECK(reg.contains(type));
  CHECK(&reg.get(type) == cpu);
  CHECK(reg.name(type) == "cpu");
  std::vector<DeviceType> types = reg.types();
  CHECK(std::find(types.begin(), types.end(), type) != types.end());
  std::vector<Device> all = reg.all_devices();
  CHECK(std::find(all.begin(), all.end(), Device::parse("cpu:0")) != all.end());
  int ncpu = 0;
  for (const Device& d : all) ncpu += d.type == type;
  CHECK(ncpu == cpu->device_count());

  CHECK(&device_interface(host_device()) == cpu);
  std::string msg;
  std::string kind = tessera::testing::thrown_kind(
      [&] { device_interface(Device{type, 999}); }, &msg);
  INFO(msg);
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);
  CHECK(msg.find("999") != std::string::npos);

  kind = tessera::testing::thrown_kind(
      [&] { (void)empty({2}, TensorOptions(Device{type, 77})); }, &msg);
  INFO(msg);
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);

  DeviceType unknown{static_cast<uint8_t>(kMaxDeviceTypes - 1)};
  if (!reg.contains(unknown)) {
    CHECK_THROWS_AS(reg.get(unknown), ValueError);
  }
}

TEST_CASE("device: CPU properties and memory info", "[device]") {
  DeviceInterface& cpu = device_interface(host_device());
  DeviceProperties p = cpu.properties(0);
  CHECK_FALSE(p.name.empty());
  CHECK(p.host_accessible);
  CHECK(p.compute_units >= 1);
  CHECK(p.total_memory > 0);
  CHECK(p.supports_f16);
  CHECK(p.supports_f64);
  CHECK(p.supports_i64);
  CHECK(p.native_index == -1);  // the host has no driver's number
  MemoryInfo m = cpu.memory_info(0);
  CHECK(m.total > 0);
  CHECK(m.free <= m.total);

  // Raw memory is host memory on the CPU device.
  void* ptr = cpu.raw_allocate(0, 4096);
  REQUIRE(ptr != nullptr);
  static_cast<char*>(ptr)[0] = 1;
  static_cast<char*>(ptr)[4095] = 2;
  char host[4096] = {};
  cpu.copy_sync(CopyKind::kDeviceToHost, host, ptr, 4096, 0, cpu.default_stream(0));
  CHECK(host[0] == 1);
  CHECK(host[4095] == 2);
  cpu.raw_free(0, ptr);
}

TEST_CASE("device: registering a taken name is a ValueError", "[device]") {
  CHECK_THROWS_MATCHES(
      DeviceRegistry::instance().register_device(std::make_unique<NamedOnlyDevice>("cpu")),
      ValueError, MessageContains({"cpu"}));
  // The CPU device is still the registered one.
  CHECK(DeviceRegistry::instance().find("cpu")->device_count() >= 1);
}
