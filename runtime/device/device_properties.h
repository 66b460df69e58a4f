#pragma once

#include <cstddef>
#include <string>

namespace tessera {

struct DeviceProperties {
  std::string name;              // "Intel Xeon (2 threads)", "llvmpipe", ...
  std::string vendor;
  size_t total_memory = 0;       // bytes the device can allocate in all
  int compute_units = 0;         // cores, SMs, compute units
  bool host_accessible = false;  // device pointers can be read by the host
  // Emulated on the host's CPU (lavapipe, SwiftShader): correct but slower
  // than the host device, so layers that pick a default device rank it
  // after the host.
  bool software = false;
  bool supports_f16 = true;
  bool supports_f64 = true;
  bool supports_i64 = true;
  // The driver's own number for the device, where the runtime's index may
  // differ from it (TESSERA_CUDA_DEVICES picks and reorders GPUs): CUDA's
  // device ordinal, Vulkan's physical-device index. What other libraries
  // (DLPack consumers, NCCL, torch.cuda) call the device. -1 for devices
  // with no such number (the host).
  int native_index = -1;
};

struct MemoryInfo {
  size_t free = 0;
  size_t total = 0;
};

}  // namespace tessera
