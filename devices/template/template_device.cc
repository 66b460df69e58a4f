// The template implementation of the device interface: each method checks
// the device index and handle it is given, then forwards to the device's
// context, memory, streams or events. See template_device.h for the design
// and runtime/device/device_interface.h for what each method guarantees.
#include "devices/template/template_device.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "devices/template/kernels/kernels.h"
#include "devices/template/template_context.h"
#include "devices/template/template_event.h"
#include "runtime/core/error.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_listing.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::template_device {
namespace {

TemplateEvent& as_event(NativeEvent handle, const char* op) {
  TESSERA_CHECK(handle != nullptr, DeviceError, "template ", op, ": null event handle");
  return *static_cast<TemplateEvent*>(handle);
}

class TemplateDevice final : public DeviceInterface {
 public:
  std::string_view type_name() const override { return kDeviceTypeName; }
  // Called on every op (device_interface() checks indices with it): the
  // list is built once, so this is a load and a size.
  int device_count() override { return template_device::device_count(); }

  DeviceProperties properties(int index) override {
    TemplateContext& c = context(index, "properties");
    DeviceProperties p;
    p.name = "Tessera template device " + std::to_string(c.ordinal());
    p.vendor = "Tessera template";
    p.total_memory = c.memory().capacity();
    p.compute_units = 1;  // one worker thread per stream
    // Its memory is to be treated as device memory: the runtime and the
    // bridge then reach it only through copy_async, as on a GPU.
    p.host_accessible = false;
    // It runs on the host's CPU, slower than the host device itself.
    p.software = true;
    return p;
  }

  MemoryInfo memory_info(int index) override {
    TemplateMemory& memory = context(index, "memory_info").memory();
    MemoryInfo info;
    info.total = memory.capacity();
    info.free = info.total - memory.used();
    return info;
  }

  void* raw_allocate(int index, size_t nbytes) override {
    return context(index, "raw_allocate").memory().allocate(nbytes);
  }

  void raw_free(int index, void* ptr) override {
    if (ptr == nullptr) return;
    TemplateContext& c = context(index, "raw_free");
    // Like cudaFree, wait for the device first: the caching allocator
    // returns cached memory (empty_cache, the out-of-memory retry) without
    // waiting for the stream that used it last.
    if (!c.wait_all_idle()) {
      std::fprintf(stderr, "tessera: template raw_free: the device did not go idle; leaking %p\n",
                   ptr);
      return;
    }
    TESSERA_CHECK(c.memory().free(ptr), DeviceError, "template raw_free: ", ptr,
                  " is not an allocation of template:", index);
  }

  // Every kind is a memcpy on the stream's worker, in stream order. The
  // host side must stay valid until the stream passes the copy (the
  // interface's contract: copy_sync waits, and the runtime's non-blocking
  // copies use pinned blocks that wait for the stream before reuse). A
  // device whose DMA cannot read pageable memory stages through a buffer
  // of its own here instead, as the Vulkan device does.
  void copy_async(CopyKind, void* dst, const void* src, size_t nbytes, int index,
                  NativeStream stream) override {
    TemplateStream& s = context(index, "copy_async").stream(stream, "copy_async");
    if (nbytes == 0) return;
    TESSERA_CHECK(dst != nullptr && src != nullptr, DeviceError, "template copy_async: null ",
                  dst == nullptr ? "destination" : "source", " pointer for ", nbytes, " bytes");
    s.enqueue([dst, src, nbytes] { std::memcpy(dst, src, nbytes); });
  }

  NativeStream default_stream(int index) override {
    return &context(index, "default_stream").default_stream();
  }
  NativeStream create_stream(int index) override {
    return context(index, "create_stream").create_stream();
  }
  void destroy_stream(int index, NativeStream stream) override {
    TemplateContext& c = context(index, "destroy_stream");
    c.destroy_stream(&c.stream(stream, "destroy_stream"));
  }
  bool query_stream(int index, NativeStream stream) override {
    return context(index, "query_stream").stream(stream, "query_stream").query();
  }
  void synchronize_stream(int index, NativeStream stream) override {
    context(index, "synchronize_stream")
        .stream(stream, "synchronize_stream")
        .synchronize("synchronize_stream");
  }

  NativeEvent create_event(int index) override {
    context(index, "create_event");
    return new TemplateEvent();
  }
  void destroy_event(int index, NativeEvent event) override {
    context(index, "destroy_event");
    delete &as_event(event, "destroy_event");
  }
  void record_event(int index, NativeEvent event, NativeStream stream) override {
    TemplateStream& s = context(index, "record_event").stream(stream, "record_event");
    as_event(event, "record_event").record(s);
  }
  void stream_wait_event(int index, NativeStream stream, NativeEvent event) override {
    TemplateStream& s = context(index, "stream_wait_event").stream(stream, "stream_wait_event");
    as_event(event, "stream_wait_event").block(s);
  }
  bool query_event(int index, NativeEvent event) override {
    context(index, "query_event");
    return as_event(event, "query_event").query();
  }
  void synchronize_event(int index, NativeEvent event) override {
    context(index, "synchronize_event");
    as_event(event, "synchronize_event").synchronize("synchronize_event");
  }
  double elapsed_ms(int index, NativeEvent start, NativeEvent end) override {
    context(index, "elapsed_ms");
    return as_event(start, "elapsed_ms").elapsed_ms(as_event(end, "elapsed_ms"));
  }

  void synchronize_device(int index) override {
    context(index, "synchronize_device").synchronize_all("synchronize_device");
  }

  // Called from DeviceRegistry::register_device after the type is added,
  // so the name already resolves. Kernels register whether or not any
  // device exists, as a vendor's must (the registry is per type).
  void register_kernels(KernelRegistry& registry) override {
    register_all_kernels(registry, DeviceType::from_name(kDeviceTypeName));
  }
};

}  // namespace

void launch_host_function(int index, NativeStream stream, std::function<void()> fn) {
  context(index, "launch_host_function").stream(stream, "launch_host_function").enqueue(std::move(fn));
}

void link() {}

}  // namespace tessera::template_device

TESSERA_REGISTER_DEVICE(std::make_unique<tessera::template_device::TemplateDevice>());

// Kept off the bridge's default device list: the bridge uses this device
// only where TESSERA_VISIBLE_DEVICES names it. A device made from this one
// (./dev new-device) deletes these lines once it passes the bridge's tests
// (tests/bridge/), which then run on it too.
static const bool tessera_template_unlisted =
    (tessera::set_listed_by_default(tessera::template_device::kDeviceTypeName, false), true);
