// Streams, events, synchronization, the caching allocator's statistics and
// the CPU-fallback counters: the runtime's state as torch.cuda exposes it.
// `with tessera.stream(s):` is written in Python (tessera/__init__.py) over
// current_stream/set_stream.
#include <map>
#include <optional>
#include <string>

#include "bindings/csrc/bindings.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"

namespace tessera_py {

namespace {

using tessera::CachingAllocator;
using tessera::Device;
using tessera::Event;
using tessera::Stream;

Device device_or_host(std::optional<Device> device) {
  return device.value_or(tessera::host_device());
}

void put_stat(py::dict& out, const std::string& name, const tessera::Stat& s) {
  out[(name + ".current").c_str()] = s.current;
  out[(name + ".peak").c_str()] = s.peak;
  out[(name + ".allocated").c_str()] = s.allocated;
  out[(name + ".freed").c_str()] = s.freed;
}

py::dict memory_stats(std::optional<Device> device) {
  tessera::AllocatorStats s;
  {
    py::gil_scoped_release release;
    s = CachingAllocator::get(device_or_host(device)).stats();
  }
  py::dict out;
  put_stat(out, "allocated_bytes", s.allocated_bytes);
  put_stat(out, "reserved_bytes", s.reserved_bytes);
  put_stat(out, "active_bytes", s.active_bytes);
  put_stat(out, "requested_bytes", s.requested_bytes);
  put_stat(out, "allocation", s.allocation_count);
  put_stat(out, "segment", s.segment_count);
  put_stat(out, "inactive_split_bytes", s.inactive_split_bytes);
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["num_device_alloc"] = s.num_device_allocs;
  out["num_device_free"] = s.num_device_frees;
  return out;
}

}  // namespace

void register_runtime_state(py::module_& m) {
  // -- Streams. Both classes are registered before any method that takes
  // the other, so that signatures name them ("Event", not "tessera::Event").
  py::class_<Stream> stream(m, "Stream",
                            "A queue of work on one device. Stream(device) creates a new one; "
                            "ops run on the current stream of their device.");
  py::class_<Event> event(m, "Event", "A marker in a stream's work, for waits and timing.");
  stream.def(py::init([](std::optional<Device> device) {
               return Stream::create(device_or_host(device));
             }),
             "device"_a = py::none(), ReleaseGil());
  stream.def_property_readonly("device", &Stream::device);
  stream.def_property_readonly("id", &Stream::id);
  stream.def("query", &Stream::query, ReleaseGil(), "True when all work enqueued so far is done.");
  stream.def("synchronize", &Stream::synchronize, ReleaseGil());
  stream.def("wait_event", [](const Stream& s, const Event& e) { e.block(s); }, "event"_a,
             ReleaseGil(), "Work enqueued on this stream from now on waits for the event.");
  stream.def("wait_stream", [](const Stream& s, const Stream& other) {
    Event e(other.device());
    e.record(other);
    e.block(s);
  }, "stream"_a, ReleaseGil(), "Work enqueued from now on waits for other's work so far.");
  stream.def("record_event", [](const Stream& s, Event* event) -> Event* {
    Event* e = event != nullptr ? event : new Event(s.device());
    e->record(s);
    return e;
  }, "event"_a = py::none(), py::return_value_policy::take_ownership, ReleaseGil());
  stream.def("__eq__", [](const Stream& a, const Stream& b) { return a == b; });
  stream.def("__hash__", [](const Stream& s) { return std::hash<Stream>()(s); });
  stream.def("__repr__", &Stream::to_string);

  m.def("current_stream", [](std::optional<Device> device) {
    const Device d = device_or_host(device);
    // The runtime's current_stream does not check (ops call it for every
    // output); a user's device name is checked here.
    tessera::device_interface(d);
    return tessera::current_stream(d);
  }, "device"_a = py::none(), "This thread's current stream on the device.");
  m.def("default_stream", [](std::optional<Device> device) {
    return Stream::default_stream(device_or_host(device));
  }, "device"_a = py::none());
  m.def("set_stream", &tessera::set_current_stream, "stream"_a,
        "Makes stream this thread's current stream on its device.");
  m.def("synchronize", [](std::optional<Device> device) {
    tessera::synchronize(device_or_host(device));
  }, "device"_a = py::none(), ReleaseGil(), "Waits for all streams of the device.");

  // -- Events.
  event.def(py::init([](std::optional<Device> device) { return new Event(device_or_host(device)); }),
            "device"_a = py::none());
  event.def_property_readonly("device", &Event::device);
  event.def("record", [](Event& e, std::optional<Stream> s) {
    e.record(s.value_or(tessera::current_stream(e.device())));
  }, "stream"_a = py::none(), ReleaseGil(), "Marks the current end of stream (default: current).");
  event.def("wait", [](const Event& e, std::optional<Stream> s) {
    e.block(s.value_or(tessera::current_stream(e.device())));
  }, "stream"_a = py::none(), ReleaseGil(), "Makes the stream wait for this event.");
  event.def("query", &Event::query, ReleaseGil());
  event.def("synchronize", &Event::synchronize, ReleaseGil());
  event.def("elapsed_time", &Event::elapsed_time, "end_event"_a, ReleaseGil(),
            "Milliseconds from this event to end_event (both recorded, same device).");

  // -- The caching allocator.
  m.def("memory_stats", &memory_stats, "device"_a = py::none(),
        "The caching allocator's statistics for a device, named as torch.cuda.memory_stats "
        "names them ('allocated_bytes.current', 'reserved_bytes.peak', ...).");
  m.def("memory_allocated", [](std::optional<Device> d) {
    return CachingAllocator::get(device_or_host(d)).stats().allocated_bytes.current;
  }, "device"_a = py::none(), "Bytes in tensors now.");
  m.def("max_memory_allocated", [](std::optional<Device> d) {
    return CachingAllocator::get(device_or_host(d)).stats().allocated_bytes.peak;
  }, "device"_a = py::none());
  m.def("memory_reserved", [](std::optional<Device> d) {
    return CachingAllocator::get(device_or_host(d)).stats().reserved_bytes.current;
  }, "device"_a = py::none(), "Bytes the allocator holds from the device (tensors and cache).");
  m.def("max_memory_reserved", [](std::optional<Device> d) {
    return CachingAllocator::get(device_or_host(d)).stats().reserved_bytes.peak;
  }, "device"_a = py::none());
  m.def("reset_peak_memory_stats", [](std::optional<Device> d) {
    CachingAllocator::get(device_or_host(d)).reset_peak_stats();
  }, "device"_a = py::none());
  m.def("empty_cache", [](std::optional<Device> d) {
    CachingAllocator::get(device_or_host(d)).empty_cache();
  }, "device"_a = py::none(), ReleaseGil(), "Returns the cached, unused memory to the device.");
  m.def("set_per_process_memory_fraction", [](double fraction, std::optional<Device> d) {
    CachingAllocator::get(device_or_host(d)).set_memory_fraction(fraction);
  }, "fraction"_a, "device"_a = py::none(),
     "Caps the memory the allocator reserves at fraction (0, 1] of the device's total.");

  // -- The CPU fallback (ops a device has no kernel for run on the host).
  m.def("fallback_stats", &tessera::cpu_fallback_counts,
        "op name -> calls that ran through the CPU fallback since the last reset.");
  m.def("reset_fallback_stats", &tessera::reset_cpu_fallback_counts);
  m.def("set_fallback_enabled", &tessera::set_cpu_fallback_enabled, "enabled"_a,
        "False makes ops without a device kernel raise NotImplementedError instead.");
  m.def("fallback_enabled", &tessera::cpu_fallback_enabled);
}

}  // namespace tessera_py
