#include "devices/template/template_event.h"

#include <stdexcept>
#include <string>

#include "devices/template/template_stream.h"
#include "runtime/core/error.h"

namespace tessera::template_device {

void StreamMarker::reach() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    at_ = std::chrono::steady_clock::now();
    reached_ = true;
  }
  cv_.notify_all();
}

bool StreamMarker::reached() {
  std::lock_guard<std::mutex> lock(mutex_);
  return reached_;
}

bool StreamMarker::wait(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, limit, [this] { return reached_; });
}

std::chrono::steady_clock::time_point StreamMarker::reached_at() {
  std::lock_guard<std::mutex> lock(mutex_);
  return at_;
}

std::shared_ptr<StreamMarker> TemplateEvent::latest() {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

void TemplateEvent::record(TemplateStream& stream) {
  auto marker = std::make_shared<StreamMarker>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = marker;
  }
  stream.enqueue([marker] { marker->reach(); });
}

void TemplateEvent::block(TemplateStream& stream) {
  std::shared_ptr<StreamMarker> marker = latest();
  if (marker == nullptr) return;
  // The waiting stream's worker blocks, not the caller. A wait that runs
  // out becomes that stream's task failure, reported at its next sync.
  stream.enqueue([marker] {
    if (!marker->wait(kWaitLimit)) {
      throw std::runtime_error("an event wait did not complete within " +
                               std::to_string(kWaitLimit.count()) + " s");
    }
  });
}

bool TemplateEvent::query() {
  std::shared_ptr<StreamMarker> marker = latest();
  return marker == nullptr || marker->reached();
}

void TemplateEvent::synchronize(const char* op) {
  std::shared_ptr<StreamMarker> marker = latest();
  if (marker == nullptr) return;
  TESSERA_CHECK(marker->wait(kWaitLimit), DeviceError, "template ", op,
                ": the event was not reached within ", kWaitLimit.count(),
                " s (a task of its stream is hung)");
}

double TemplateEvent::elapsed_ms(TemplateEvent& end) {
  std::shared_ptr<StreamMarker> from = latest(), to = end.latest();
  TESSERA_CHECK(from != nullptr && to != nullptr, ValueError,
                "elapsed_time on template: both events must have been recorded (start ",
                from != nullptr ? "recorded" : "never recorded", ", end ",
                to != nullptr ? "recorded" : "never recorded", ")");
  TESSERA_CHECK(from->wait(kWaitLimit) && to->wait(kWaitLimit), DeviceError,
                "template elapsed_ms: an event was not reached within ", kWaitLimit.count(),
                " s (a task of its stream is hung)");
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(to->reached_at() -
                                                                       from->reached_at());
  return static_cast<double>(ns.count()) / 1e6;
}

}  // namespace tessera::template_device
