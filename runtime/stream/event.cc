#include "runtime/stream/event.h"

#include <utility>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"

namespace tessera {

Event::Event(Device device) : device_(device) {
  native_ = device_interface(device).create_event(device.index);
}

Event::~Event() {
  if (native_) {
    try {
      device_interface(device_).destroy_event(device_.index, native_);
    } catch (...) {
      // Destructors must not throw; a failing driver at teardown is ignored.
    }
  }
}

Event::Event(Event&& other) noexcept
    : device_(other.device_), native_(std::exchange(other.native_, nullptr)),
      recorded_(std::exchange(other.recorded_, false)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event tmp(std::move(*this));
    device_ = other.device_;
    native_ = std::exchange(other.native_, nullptr);
    recorded_ = std::exchange(other.recorded_, false);
  }
  return *this;
}

void Event::record(Stream stream) {
  TESSERA_CHECK(stream.device() == device_, DeviceError, "Event::record: event on ",
                device_.to_string(), " cannot record stream on ",
                stream.device().to_string());
  device_interface(device_).record_event(device_.index, native_, stream.native());
  recorded_ = true;
}

void Event::block(Stream stream) const {
  TESSERA_CHECK(stream.device() == device_, DeviceError, "Event::block: event on ",
                device_.to_string(), " cannot block stream on ",
                stream.device().to_string());
  if (!recorded_) return;  // as CUDA: waiting on an unrecorded event is a no-op
  device_interface(device_).stream_wait_event(device_.index, stream.native(), native_);
}

bool Event::query() const {
  return !recorded_ || device_interface(device_).query_event(device_.index, native_);
}

void Event::synchronize() const {
  if (recorded_) device_interface(device_).synchronize_event(device_.index, native_);
}

double Event::elapsed_time(const Event& end) const {
  TESSERA_CHECK(recorded_ && end.recorded_, ValueError,
                "Event::elapsed_time: both events must be recorded first");
  TESSERA_CHECK(end.device_ == device_, DeviceError, "Event::elapsed_time: events on ",
                device_.to_string(), " and ", end.device_.to_string());
  return device_interface(device_).elapsed_ms(device_.index, native_, end.native_);
}

}  // namespace tessera
