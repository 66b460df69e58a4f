// DistributedDataParallel's runtime statistics for tessera modules: the
// Reducer times forward, backward compute and backward communication with
// a Timer it takes from c10d's TimerRegistry for the module's device type.
// Without one for PrivateUse1 it warns ("Time stats are currently only
// collected for CPU and CUDA devices") and reports no times. This one
// records tessera events on the device's current stream, as CUDA's does.
#include <c10/core/DeviceGuard.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

#include <array>

namespace torch_tessera {
namespace {

class TesseraDdpTimer final : public c10d::Timer {
 public:
  explicit TesseraDdpTimer(c10::Device device)
      : device_(device),
        events_{timing_event(), timing_event(), timing_event(), timing_event(), timing_event()} {}

  void record(Event event) override {
    c10d::Timer::record(event);  // the host timestamp the Reducer also reads
    const c10::DeviceGuard guard(device_);
    const c10::impl::VirtualGuardImpl impl(c10::kPrivateUse1);
    device_event(event).record(impl.getStream(device_));
  }

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    c10::Event& first = device_event(start);
    c10::Event& last = device_event(end);
    // Events of phases an iteration skipped (no backward, no_sync) were
    // never recorded.
    if (!first.was_marked_for_recording() || !last.was_marked_for_recording()) return std::nullopt;
    const c10::DeviceGuard guard(device_);
    first.synchronize();
    last.synchronize();
    const double milliseconds = first.elapsedTime(last);
    // An end recorded in an earlier iteration than its start.
    if (milliseconds < 0) return std::nullopt;
    return static_cast<int64_t>(milliseconds * 1e6);
  }

 private:
  // BACKEND_DEFAULT is torch.Event(enable_timing=True).
  static c10::Event timing_event() { return c10::Event(c10::kPrivateUse1, c10::EventFlag::BACKEND_DEFAULT); }

  c10::Event& device_event(Event event) { return events_.at(static_cast<size_t>(event)); }

  const c10::Device device_;
  std::array<c10::Event, 5> events_;  // one per Timer::Event
};

}  // namespace
}  // namespace torch_tessera

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, torch_tessera::TesseraDdpTimer);
}  // namespace c10d
