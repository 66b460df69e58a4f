// Which of a machine's devices a device type uses, from an environment
// variable such as TESSERA_VULKAN_DEVICES=2,0 or TESSERA_CUDA_DEVICES=1:
// the listed indices in the listed order, each once, those that do not
// exist skipped. Unset or empty: every device, in the driver's order.
#pragma once

#include <vector>

namespace tessera {

// The indices (into the driver's list of `available` devices) to use, per
// the variable `env_var`. Malformed entries are skipped with a warning on
// stderr: enumeration runs from device_count(), which must not throw.
std::vector<int> selected_devices(const char* env_var, int available);

}  // namespace tessera
