// A marker in a stream's work. Owns its native event.
#pragma once

#include "runtime/core/device.h"
#include "runtime/device/device_interface.h"
#include "runtime/stream/stream.h"

namespace tessera {

class Event {
 public:
  explicit Event(Device device);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device device() const { return device_; }
  bool recorded() const { return recorded_; }

  void record(Stream stream);       // marks the current end of stream
  void block(Stream stream) const;  // stream waits for this event
  bool query() const;               // true when reached (or never recorded)
  void synchronize() const;
  // Milliseconds from this event to `end`; both recorded on one device.
  double elapsed_time(const Event& end) const;

  NativeEvent native() const { return native_; }

 private:
  Device device_;
  NativeEvent native_ = nullptr;
  bool recorded_ = false;
};

}  // namespace tessera
