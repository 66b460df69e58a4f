// A device library for device_library_loader_test: loading it registers
// the device type "loader_probe" (a FakeDevice under another name).
#include <memory>

#include "runtime/device/device_registry.h"
#include "tests/support/fake_device.h"

namespace {

class LoaderProbeDevice : public tessera::testing::FakeDevice {
 public:
  std::string_view type_name() const override { return "loader_probe"; }
};

TESSERA_REGISTER_DEVICE(std::make_unique<LoaderProbeDevice>());

}  // namespace
