// Events of the CPU device. Work on CPU streams is complete when the call
// that enqueued it returns (see cpu_stream.h), so an event is complete as
// soon as it is recorded: recording stores a steady_clock timestamp, query
// is always true, and waiting on one (from a stream or the host) is a
// no-op. elapsed_ms is the difference of two recorded timestamps.
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/device/device_interface.h"

namespace tessera::cpu {

class CpuEvent {
 public:
  void record();  // now
  bool recorded() const { return recorded_.load(std::memory_order_acquire); }
  // Nanoseconds on std::chrono::steady_clock at the last record.
  int64_t timestamp_ns() const { return ns_.load(std::memory_order_acquire); }

 private:
  std::atomic<int64_t> ns_{0};
  std::atomic<bool> recorded_{false};
};

// The event behind a handle; DeviceError naming `op` for a null handle.
CpuEvent* as_cpu_event(NativeEvent handle, const char* op);

// Milliseconds from start to end; ValueError if either was never recorded.
double cpu_elapsed_ms(const CpuEvent& start, const CpuEvent& end);

}  // namespace tessera::cpu
