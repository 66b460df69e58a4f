// Streams of the CPU device.
//
// Design: CPU kernels and copies run synchronously on the calling thread
// (the kernel itself may fan out over oneTBB workers, but returns only when
// done), so when any call returns, the work "enqueued" on every CPU stream
// is complete and stream order holds trivially. This is what PyTorch's CPU
// device does. Streams are still distinct objects with their own ids, so
// the runtime's per-stream allocator pools and record_stream work unchanged
// on the CPU; query is always true and synchronize a no-op.
#pragma once

#include <cstdint>

#include "runtime/device/device_interface.h"

namespace tessera::cpu {

struct CpuStream {
  uint64_t id;  // 0 for the default stream
};

// The default stream: one fixed object for the life of the process.
CpuStream* default_cpu_stream();
CpuStream* create_cpu_stream();
// Destroying the default stream is ignored.
void destroy_cpu_stream(CpuStream* stream);
// The stream behind a handle; DeviceError naming `op` for a null handle.
CpuStream* as_cpu_stream(NativeStream handle, const char* op);

}  // namespace tessera::cpu
