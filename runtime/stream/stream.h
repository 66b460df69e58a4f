// Streams as runtime values, in the style of c10::Stream: a device plus a
// small id. Id 0 is the device's default stream; other ids name streams
// created through the device interface and kept for the life of the
// process (like CUDA's stream pool), so a Stream is cheap to copy and
// compare. Each thread has a current stream per device, initially the
// default one.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/device.h"
#include "runtime/device/device_interface.h"

namespace tessera {

class Stream {
 public:
  Stream(Device device, uint32_t id) : device_(device), id_(id) {}

  Device device() const { return device_; }
  uint32_t id() const { return id_; }
  bool is_default() const { return id_ == 0; }

  NativeStream native() const;  // the device's handle
  bool query() const;           // true when all enqueued work is done
  void synchronize() const;
  std::string to_string() const;

  friend bool operator==(const Stream&, const Stream&) = default;

  static Stream default_stream(Device device);
  // A new stream on device (created through the device interface).
  static Stream create(Device device);

 private:
  Device device_;
  uint32_t id_;
};

Stream current_stream(Device device);
void set_current_stream(Stream stream);

// Makes `stream` current on its device for a scope, then restores.
class StreamGuard {
 public:
  explicit StreamGuard(Stream stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// Waits for all streams of the device.
void synchronize(Device device);

}  // namespace tessera

template <>
struct std::hash<tessera::Stream> {
  size_t operator()(const tessera::Stream& s) const noexcept {
    return std::hash<tessera::Device>()(s.device()) * 31 + s.id();
  }
};
