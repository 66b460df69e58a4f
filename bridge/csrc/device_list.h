// tessera:N, the PyTorch device, is the N-th entry of one flat list of
// runtime devices: accelerators first (in the order their types were
// registered), the runtime's CPU device last. TESSERA_VISIBLE_DEVICES, a
// comma-separated list such as "vulkan:0,cpu" (a bare type name means all
// its devices), chooses and orders the entries instead.
#pragma once

#include <c10/core/Device.h>

#include <vector>

#include "runtime/core/device.h"

namespace torch_tessera {

// The visible runtime devices, computed once.
const std::vector<tessera::Device>& visible_devices();

c10::DeviceIndex device_count();

// The runtime device behind tessera:index; c10::Error if out of range.
tessera::Device runtime_device(c10::DeviceIndex index);
tessera::Device runtime_device(const c10::Device& device);

// The tessera index of a runtime device; c10::Error if it is not visible.
c10::DeviceIndex torch_index(const tessera::Device& device);
c10::Device torch_device(const tessera::Device& device);

// The current tessera device of this thread (as torch.cuda.current_device).
c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex index);

}  // namespace torch_tessera
