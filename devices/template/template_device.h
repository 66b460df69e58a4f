// The template device of Tessera: device type "template", the smallest
// complete device, and the starting point for a new one (README.md beside
// this file says how to make yours from it).
//
// It runs on the host but behaves like an accelerator, so that everything
// a real device goes through is exercised:
//  - memory: host allocations that the runtime must treat as device memory
//    (DeviceProperties::host_accessible is false), so every host<->device
//    transfer is a real copy through copy_async, under a fixed capacity
//    that runs out like a real device's (template_memory.h);
//  - streams: one worker thread each, running the stream's tasks (copies,
//    kernels, event records) in order, so work is really asynchronous
//    (template_stream.h); events mark a position in a stream
//    (template_event.h);
//  - kernels: fill, copy, add/sub and a plain matrix product, run on the
//    stream's worker (kernels/); every other op goes through the runtime's
//    counted CPU fallback.
//
// Linking //devices/template registers the type (a static initializer; the
// target is alwayslink). Environment, read once at first use:
//   TESSERA_TEMPLATE_DEVICE_COUNT=2  how many devices the emulated "driver"
//                                    reports (default 1, at most 16);
//   TESSERA_TEMPLATE_DEVICES=1,0     which of them to use, in this order,
//                                    as TESSERA_VULKAN_DEVICES does;
//   TESSERA_TEMPLATE_MEMORY_MIB=64   each device's memory capacity in MiB
//                                    (default 4096).
// A malformed value is reported on stderr and the default used.
#pragma once

#include <functional>
#include <string_view>

#include "runtime/device/device_interface.h"

namespace tessera::template_device {

// The name the device type is registered under.
inline constexpr std::string_view kDeviceTypeName = "template";

// Runs fn on the worker of `stream` of template:<index>, in stream order
// (as cudaLaunchHostFunc): work enqueued after it waits for it. Tests use
// it to hold a stream at a known point. fn must not throw; one that does
// is reported by the stream's next query or synchronize. ValueError or
// DeviceError for a device or stream that does not exist.
void launch_host_function(int index, NativeStream stream, std::function<void()> fn);

// Does nothing; see tessera::cpu::link().
void link();

}  // namespace tessera::template_device
