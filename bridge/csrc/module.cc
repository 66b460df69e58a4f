// torch_tessera._C: what the Python package needs from C++ beyond the
// registrations that loading this library performs (allocator, device
// guard, hooks, aten kernels, CPU fallback).
#include <Python.h>
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>

#include "bridge/csrc/cpu_fallback.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/distributed_bindings.h"
#include "bridge/csrc/error_translation.h"
#include "bridge/csrc/generator.h"
#include "bridge/csrc/memory_snapshot.h"
#include "bridge/csrc/pinned_allocator.h"
#include "bridge/csrc/profiler/kineto_plugin.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/device/device_library_loader.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/stream/stream.h"

namespace py = pybind11;

namespace torch_tessera {
namespace {

tessera::DeviceProperties properties(c10::DeviceIndex index) {
  const tessera::Device d = runtime_device(index);
  tessera::DeviceProperties p;
  TESSERA_TRANSLATE_ERRORS(p = tessera::device_interface(d).properties(d.index));
  return p;
}

// The folder this extension was loaded from, where the package keeps its
// device libraries.
std::string extension_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&extension_dir), &info) == 0 || info.dli_fname == nullptr) {
    return ".";
  }
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

py::list load_results(const std::vector<tessera::DeviceLibraryLoad>& loads) {
  py::list out;
  for (const tessera::DeviceLibraryLoad& l : loads) {
    py::dict d;
    d["path"] = l.path;
    d["loaded"] = l.loaded;
    d["error"] = l.error;
    out.append(d);
  }
  return out;
}

py::dict properties_dict(c10::DeviceIndex index) {
  const tessera::DeviceProperties p = properties(index);
  py::dict out;
  out["name"] = p.name;
  out["vendor"] = p.vendor;
  out["runtime_device"] = runtime_device(index).to_string();
  out["total_memory"] = p.total_memory;
  out["compute_units"] = p.compute_units;
  out["host_accessible"] = p.host_accessible;
  out["software"] = p.software;
  out["supports_f16"] = p.supports_f16;
  out["supports_f64"] = p.supports_f64;
  out["supports_i64"] = p.supports_i64;
  out["native_index"] = p.native_index;
  return out;
}

}  // namespace
}  // namespace torch_tessera

PYBIND11_MODULE(_C, m) {
  using namespace torch_tessera;
  m.doc() = "Tessera's PyTorch bridge (C++ part)";
  // The devices: whichever device libraries the package holds. They must be
  // in before anything asks for a device.
  tessera::load_device_libraries(extension_dir());
  m.def("device_libraries", [] { return load_results(tessera::device_library_loads()); });
  m.def("device_count", [] { return static_cast<int>(device_count()); });
  m.def("kineto_plugin_built", &kineto_plugin_built);
  m.def("current_device", [] { return static_cast<int>(current_device()); });
  m.def("set_device", [](int index) { set_current_device(static_cast<c10::DeviceIndex>(index)); });
  m.def("get_device_name", [](int index) { return properties(static_cast<c10::DeviceIndex>(index)).name; });
  m.def("get_device_properties", [](int index) { return properties_dict(static_cast<c10::DeviceIndex>(index)); });
  m.def("runtime_device", [](int index) { return runtime_device(static_cast<c10::DeviceIndex>(index)).to_string(); });
  m.def("synchronize", [](int index) {
    py::gil_scoped_release no_gil;
    TESSERA_TRANSLATE_ERRORS(tessera::synchronize(runtime_device(static_cast<c10::DeviceIndex>(index))));
  });
  m.def("set_memory_fraction", [](double fraction, int index) {
    TESSERA_TRANSLATE_ERRORS(tessera::CachingAllocator::get(runtime_device(static_cast<c10::DeviceIndex>(index)))
                                 .set_memory_fraction(fraction));
  });
  m.def("memory_snapshot", [](int index) { return memory_snapshot(static_cast<c10::DeviceIndex>(index)); });
  m.def("get_memory_fraction", [](int index) {
    double fraction = 1.0;
    TESSERA_TRANSLATE_ERRORS(
        fraction = tessera::CachingAllocator::get(runtime_device(static_cast<c10::DeviceIndex>(index)))
                       .memory_fraction());
    return fraction;
  });
  // What is_pinned() asks the hooks, for any address (tests and debugging).
  m.def("is_pinned_ptr", [](uintptr_t address) {
    return is_pinned(reinterpret_cast<const void*>(address));
  });
  m.def("default_generator", [](int index) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(static_cast<c10::DeviceIndex>(index))));
  });
  m.def("fallback_stats", &fallback_stats);
  m.def("reset_fallback_stats", &reset_fallback_stats);
  // One switch for both levels: aten ops without a tessera kernel, and
  // runtime ops without a kernel on the device they run on.
  m.def("set_fallback_enabled", &set_fallback_enabled);
  m.def("fallback_enabled", &fallback_enabled);
  m.def("runtime_fallback_stats", &tessera::cpu_fallback_counts);
  m.def("reset_runtime_fallback_stats", &tessera::reset_cpu_fallback_counts);
  bind_distributed(m);
}
