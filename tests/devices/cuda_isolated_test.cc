// CUDA device cases that each need a process of their own, run under
// environments set by the BUILD targets (selected by tag):
//  [device_list]  TESSERA_CUDA_DEVICES="999,0,0": absent GPUs are ignored
//                 and repeated ones count once;
//  [failure]      a kernel that writes outside any allocation: the device
//                 is marked failed with the cause, every later use of it
//                 fails at once with that cause, and the host keeps working
//                 (the CUDA context is lost, hence a process of its own).
#include <catch2/catch.hpp>

#include <string>

#include "devices/cuda/cuda_device.h"
#include "runtime/core/error.h"
#include "runtime/core/storage.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/ops.h"
#include "runtime/stream/stream.h"
#include "tests/support/skip.h"

using namespace tessera;

namespace {

int cuda_devices() {
  DeviceInterface* iface = DeviceRegistry::instance().find("cuda");
  return iface == nullptr ? 0 : iface->device_count();
}

}  // namespace

TEST_CASE("cuda: TESSERA_CUDA_DEVICES picks and dedups", "[device_list]") {
  // "999,0,0": at most GPU 0, once.
  CHECK(cuda_devices() <= 1);
  if (cuda_devices() == 0) TESSERA_SKIP("no CUDA device on this machine (" + cuda::unavailable_reason() + ")");
  CHECK(cuda::device_info(0).ordinal == 0);
  CHECK(DeviceRegistry::instance().find("cuda")->properties(0).native_index == 0);
  Tensor t = full({4}, 2.5, TensorOptions(Device::parse("cuda:0")));
  CHECK(t.to(host_device()).to_vector<double>() == std::vector<double>(4, 2.5));
}

TEST_CASE("cuda: a faulting kernel fails the device, clearly and for good", "[failure]") {
  if (cuda_devices() == 0) TESSERA_SKIP("no CUDA device on this machine (" + cuda::unavailable_reason() + ")");
  const Device gpu = Device::parse("cuda:0");
  // A tensor over an address no allocation covers: filling it makes the
  // kernel write there (an illegal address, caught at the next sync).
  auto bogus = std::make_shared<Storage>(gpu, reinterpret_cast<void*>(uintptr_t{0x10000}),
                                         size_t{1} << 20, nullptr);
  Tensor t = Tensor::from_storage(bogus, DType::kF32, {1 << 18}, {1});
  std::string cause;
  try {
    t.fill_(1.0);
    synchronize(gpu);
    FAIL("writing through an invalid device address must raise");
  } catch (const DeviceError& e) {
    cause = e.what();
  }
  CHECK(cause.find("cuda:0") != std::string::npos);
  CHECK(cuda::device_info(0).failed);
  // Later use fails at once, naming the first cause.
  try {
    zeros({4}, TensorOptions(gpu));
    FAIL("a failed device must refuse work");
  } catch (const DeviceError& e) {
    CHECK(std::string(e.what()).find("failed earlier") != std::string::npos);
  }
  // The host is unaffected.
  CHECK(ones({3}).to_vector<double>() == std::vector<double>{1, 1, 1});
}
