// A C++ program built outside the repository against the installed SDK
// (tests/sdk/test_install.py builds it with CMake and with pkg-config).
//
//   runtime_program --list     prints the devices the linked libraries registered
//   runtime_program DEVICE     a matmul and a broadcast add on DEVICE, printed
//                              and checked against the values worked out here
//
// Exits 0 when every value matches, 1 on a wrong value, 2 on an error.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "runtime/tessera.h"

namespace {

int list_devices() {
  for (const tessera::Device& d : tessera::DeviceRegistry::instance().all_devices()) {
    std::printf("%s\n", d.to_string().c_str());
  }
  return 0;
}

int run_on(const std::string& name) {
  const tessera::Device device = tessera::Device::parse(name);
  // a = [[0, 1, 2], [3, 4, 5]], b = [[1, 2], [3, 4], [5, 6]]
  tessera::Tensor a = tessera::arange(6, {tessera::DType::kF32, device}).view({2, 3});
  tessera::Tensor b = tessera::arange(1, 7, 1, {tessera::DType::kF32, device}).view({3, 2});
  // a @ b = [[13, 16], [40, 52]]; + [10, 20] broadcast over the rows.
  tessera::Tensor bias = tessera::full({2}, 10.0, {tessera::DType::kF32, device}) *
                         tessera::arange(1, 3, 1, {tessera::DType::kF32, device});
  tessera::Tensor c = tessera::matmul(a, b) + bias;
  if (c.device() != device) {
    std::printf("result on %s, not %s\n", c.device().to_string().c_str(), name.c_str());
    return 1;
  }
  const std::vector<float> got = c.to(tessera::host_device()).contiguous().to_vector<float>();
  std::printf("(a @ b + bias) on %s = [[%g, %g], [%g, %g]]\n", device.to_string().c_str(), got[0],
              got[1], got[2], got[3]);
  const std::vector<float> want = {23, 36, 50, 72};
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-5f) {
      std::printf("element %zu: %g, expected %g\n", i, got[i], want[i]);
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s --list | DEVICE\n", argv[0]);
    return 2;
  }
  try {
    const std::string arg = argv[1];
    return arg == "--list" ? list_devices() : run_on(arg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
