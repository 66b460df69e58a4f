// The profiler's PrivateUse1 stubs (torch/csrc/profiler/stubs/base.h) over
// runtime events: with them the profiler's PrivateUse1 fallback state
// (torch.autograd.profiler.profile(use_device="tessera", use_kineto=False))
// records an event on the current tessera device's current stream as each
// op starts and ends, and reports the time between them as the op's
// device time.
//
// torch.profiler.profile(activities=[..., ProfilerActivity.PrivateUse1])
// does not reach these stubs in torch 2.13: it selects the Kineto state
// KINETO_PRIVATEUSE1, which takes device activity from a Kineto plugin
// instead (kineto_plugin.cc).
#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <memory>

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

tessera::Event* as_event(const ProfilerVoidEventStub* stub) {
  return stub == nullptr ? nullptr : static_cast<tessera::Event*>(stub->get());
}

struct TesseraProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const c10::DeviceIndex index = current_device();
    if (device != nullptr) *device = index;
    const tessera::Device runtime = runtime_device(index);
    auto owned = std::make_unique<tessera::Event>(runtime);
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    TESSERA_TRANSLATE_ERRORS(owned->record(tessera::current_stream(runtime)));
    *event = ProfilerVoidEventStub(owned.release(),
                                   [](void* e) { delete static_cast<tessera::Event*>(e); });
  }

  // Microseconds between two recorded events (waiting for the second). 0
  // when they are on different devices (the op changed the current device)
  // or the device cannot time its work (a Vulkan queue without
  // timestamps): the profiler then shows no device time for the op.
  float elapsed(const ProfilerVoidEventStub* start,
                const ProfilerVoidEventStub* end) const override {
    const tessera::Event* a = as_event(start);
    const tessera::Event* b = as_event(end);
    if (a == nullptr || b == nullptr || a->device() != b->device()) return 0.0f;
    try {
      return static_cast<float>(a->elapsed_time(*b) * 1000.0);
    } catch (const tessera::DeviceError& e) {
      TORCH_WARN_ONCE("tessera profiler: no device time for ", a->device().to_string(), ": ",
                      e.what());
      return 0.0f;
    }
  }

  // The runtime has no tracing annotations (NVTX-style ranges) to emit.
  void mark(const char* /*name*/) const override {}
  void rangePush(const char* /*name*/) const override {}
  void rangePop() const override {}

  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    struct RestoreDevice {
      c10::DeviceIndex previous = current_device();
      ~RestoreDevice() { set_current_device(previous); }
    } restore;
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      set_current_device(i);
      op(i);
    }
  }

  void synchronize() const override {
    for (const tessera::Device& d : visible_devices()) {
      TESSERA_TRANSLATE_ERRORS(tessera::synchronize(d));
    }
  }
};

const bool registered = [] {
  static TesseraProfilerStubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  return true;
}();

}  // namespace
}  // namespace torch_tessera
