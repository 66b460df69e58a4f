#include "devices/cpu/cpu_stream.h"

#include <atomic>

#include "runtime/core/error.h"

namespace tessera::cpu {

CpuStream* default_cpu_stream() {
  static CpuStream stream{0};
  return &stream;
}

CpuStream* create_cpu_stream() {
  static std::atomic<uint64_t> next_id{1};
  return new CpuStream{next_id.fetch_add(1, std::memory_order_relaxed)};
}

void destroy_cpu_stream(CpuStream* stream) {
  if (stream != nullptr && stream != default_cpu_stream()) delete stream;
}

CpuStream* as_cpu_stream(NativeStream handle, const char* op) {
  TESSERA_CHECK(handle != nullptr, DeviceError, "cpu ", op, ": null stream handle");
  return static_cast<CpuStream*>(handle);
}

}  // namespace tessera::cpu
