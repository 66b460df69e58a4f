// c10's device guard for tessera: the current device and stream per
// thread, and events, all backed by the runtime (so torch.Stream,
// torch.Event, record_stream and elapsed_time are real).
#include <c10/core/DeviceCapability.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "bridge/csrc/allocator.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/tensor_convert.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {
namespace {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

c10::Stream to_torch_stream(const tessera::Stream& s) {
  return c10::Stream(c10::Stream::UNSAFE, torch_device(s.device()),
                     static_cast<c10::StreamId>(s.id()));
}

tessera::Stream to_runtime_stream(const c10::Stream& s) {
  return tessera::Stream(runtime_device(s.device()), static_cast<uint32_t>(s.id()));
}

tessera::Event* as_event(void* event) { return static_cast<tessera::Event*>(event); }

struct TesseraGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    const c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }

  c10::Device getDevice() const override { return c10::Device(kType, current_device()); }

  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected a tessera device, got ", d);
    set_current_device(d.has_index() ? d.index() : 0);
  }

  void uncheckedSetDevice(c10::Device d) const noexcept override {
    // Each kernel's guard restores the device on its way out, and that is
    // almost always the device still current: skip the range check then.
    if (d.type() == kType && d.has_index() && d.index() == current_device()) return;
    try {
      setDevice(d);
    } catch (...) {
    }
  }

  c10::Stream getStream(c10::Device d) const override {
    return to_torch_stream(tessera::current_stream(runtime_device(d)));
  }

  c10::Stream getDefaultStream(c10::Device d) const override {
    return to_torch_stream(tessera::Stream::default_stream(runtime_device(d)));
  }

  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/) const override {
    return getNewStream(d, 0);
  }

  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    tessera::Stream s = tessera::Stream::default_stream(runtime_device(d));
    TESSERA_TRANSLATE_ERRORS(s = tessera::Stream::create(runtime_device(d)));
    return to_torch_stream(s);
  }

  c10::Stream exchangeStream(c10::Stream s) const override {
    const tessera::Stream next = to_runtime_stream(s);
    const tessera::Stream previous = tessera::current_stream(next.device());
    tessera::set_current_stream(next);
    return to_torch_stream(previous);
  }

  void* getStreamNativeHandle(const c10::Stream s) const override {
    return to_runtime_stream(s).native();
  }

  // torch.accelerator.get_device_capability: the dtypes tessera tensors
  // can have on this device (the runtime's dtypes, less those the device
  // reports it cannot store).
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    const tessera::Device device = runtime_device(d);
    tessera::DeviceProperties props;
    TESSERA_TRANSLATE_ERRORS(props = tessera::device_interface(device).properties(device.index));
    c10::DeviceCapability capability;
    auto& supported = capability.capability_data.supported_scalar_types;
    // Through the named bitfields: their bit order is the compiler's.
#define TESSERA_CLEAR_DTYPE(_, name) supported.has_##name = 0;
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TESSERA_CLEAR_DTYPE)
#undef TESSERA_CLEAR_DTYPE
    for (int i = 0; i < tessera::kNumDTypes; ++i) {
      const auto dtype = static_cast<tessera::DType>(i);
      if (dtype == tessera::DType::kF16 && !props.supports_f16) continue;
      if (dtype == tessera::DType::kF64 && !props.supports_f64) continue;
      if (dtype == tessera::DType::kI64 && !props.supports_i64) continue;
      const c10::ScalarType type = to_torch_dtype(dtype);
#define TESSERA_SET_DTYPE(_, name) \
  if (type == c10::ScalarType::name) supported.has_##name = 1;
      AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TESSERA_SET_DTYPE)
#undef TESSERA_SET_DTYPE
    }
    return capability;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return torch_tessera::device_count();
    } catch (...) {
      return 0;
    }
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "Event device index ", static_cast<int>(device_index),
                " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()));
    const tessera::Stream s = to_runtime_stream(stream);
    if (*event == nullptr) *event = new tessera::Event(s.device());
    TESSERA_TRANSLATE_ERRORS(as_event(*event)->record(s));
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;
    const tessera::Stream waiter = to_runtime_stream(stream);
    tessera::Event* e = as_event(event);
    if (e->device() != waiter.device()) {
      // Two tessera devices may be of different runtime types (a GPU and
      // the CPU), whose events cannot enter each other's streams: the host
      // waits instead, which orders everything enqueued on `stream` later.
      TESSERA_TRANSLATE_ERRORS(e->synchronize());
      return;
    }
    TESSERA_TRANSLATE_ERRORS(e->block(waiter));
  }

  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    bool done = false;
    TESSERA_TRANSLATE_ERRORS(done = as_event(event)->query());
    return done;
  }

  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    delete as_event(event);
  }

  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    TESSERA_TRANSLATE_ERRORS(as_event(event)->synchronize());
  }

  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device_index*/) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "elapsed_time: both events must be recorded before calculating elapsed time");
    double ms = 0;
    TESSERA_TRANSLATE_ERRORS(ms = as_event(start)->elapsed_time(*as_event(end)));
    return ms;
  }

  bool queryStream(const c10::Stream& stream) const override {
    bool done = false;
    TESSERA_TRANSLATE_ERRORS(done = to_runtime_stream(stream).query());
    return done;
  }

  void synchronizeStream(const c10::Stream& stream) const override {
    TESSERA_TRANSLATE_ERRORS(to_runtime_stream(stream).synchronize());
  }

  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    TESSERA_TRANSLATE_ERRORS(tessera::synchronize(runtime_device(device_index)));
  }

  void recordDataPtrOnStream(const c10::DataPtr& data_ptr,
                             const c10::Stream& stream) const override {
    allocator().recordStream(data_ptr, stream);
  }
};

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, TesseraGuardImpl);

}  // namespace torch_tessera
