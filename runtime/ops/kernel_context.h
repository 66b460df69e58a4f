#pragma once

#include "runtime/core/device.h"
#include "runtime/device/device_interface.h"

namespace tessera {

// Where a kernel runs: the device and the stream to enqueue on (the
// current stream of that device when the op was called).
struct KernelContext {
  Device device;
  NativeStream stream = nullptr;
};

}  // namespace tessera
