#include "devices/cpu/cpu_event.h"

#include <chrono>

#include "runtime/core/error.h"

namespace tessera::cpu {

void CpuEvent::record() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
            std::memory_order_release);
  recorded_.store(true, std::memory_order_release);
}

CpuEvent* as_cpu_event(NativeEvent handle, const char* op) {
  TESSERA_CHECK(handle != nullptr, DeviceError, "cpu ", op, ": null event handle");
  return static_cast<CpuEvent*>(handle);
}

double cpu_elapsed_ms(const CpuEvent& start, const CpuEvent& end) {
  TESSERA_CHECK(start.recorded() && end.recorded(), ValueError,
                "elapsed_time on cpu: both events must have been recorded (start ",
                start.recorded() ? "recorded" : "never recorded", ", end ",
                end.recorded() ? "recorded" : "never recorded", ")");
  return static_cast<double>(end.timestamp_ns() - start.timestamp_ns()) / 1e6;
}

}  // namespace tessera::cpu
