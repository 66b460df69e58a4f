// The CPU device of Tessera: device type "cpu", exactly one device (cpu:0),
// host memory, and kernels on Eigen (GEMM) and oneTBB (threads).
//
// Nothing here needs to be called: the library registers the device type
// from a static initializer when it is linked (its Bazel target
// //devices/cpu is alwayslink), after which tessera::host_device() and
// Device::parse("cpu") work. Every program that makes tensors needs it,
// since the host device is where host data lives and where the CPU
// fallback runs.
//
// Design, in short (details in README.md beside this file):
//  - memory: 64-byte aligned host allocations; out of memory gives nullptr
//    to the caching allocator, which frees its cache and retries;
//  - streams and events: kernels and copies run synchronously on the
//    calling thread, so every stream is always idle and an event is
//    complete when recorded (its timestamp gives elapsed times), as on
//    PyTorch's CPU device; streams still have distinct identities so the
//    allocator's per-stream pools work;
//  - kernels: fill, arange, copy, binary, reduce, bmm, uniform, normal, all
//    dtypes, any strides, parallel over oneTBB above about 32K elements.
#pragma once

#include <string_view>

namespace tessera::cpu {

// The name the device type is registered under.
inline constexpr std::string_view kDeviceTypeName = "cpu";

// Does nothing. A program that links the library some other way than as an
// alwayslink dependency (e.g. a static archive without --whole-archive) can
// call it to make sure the object holding the registration is linked.
void link();

}  // namespace tessera::cpu
