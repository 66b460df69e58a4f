// The extension tessera._tessera: the runtime's tensors, devices and op set
// for Python, with no PyTorch. Device libraries (libtessera_<name>.so)
// beside the extension are loaded on import, as the bridge does, so one
// runtime library serves every layer of a process.
#include <dlfcn.h>

#include <string>

#include "bindings/csrc/bindings.h"
#include "runtime/device/device_library_loader.h"

namespace tessera_py {

namespace {

// The folder holding this extension (and the runtime and device libraries).
std::string extension_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&extension_dir), &info) == 0 || info.dli_fname == nullptr) {
    return ".";
  }
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

}  // namespace tessera_py

PYBIND11_MODULE(_tessera, m) {
  using namespace tessera_py;
  m.doc() = "The Tessera runtime: tensors on CPU, CUDA and Vulkan devices, without PyTorch.";
  tessera::load_device_libraries(extension_dir());
  m.def("device_libraries", [] {
    py::list out;
    for (const tessera::DeviceLibraryLoad& load : tessera::device_library_loads()) {
      out.append(py::dict("path"_a = load.path, "loaded"_a = load.loaded, "error"_a = load.error));
    }
    return out;
  }, "The device libraries this process tried to load, with the reason for any failure.");

  register_errors(m);
  register_dtypes_devices(m);
  register_tensor_class(m);
  register_creation_ops(m);
  register_runtime_state(m);
  register_interop(m);
  register_io(m);
  register_pointwise_ops(m);
  register_reduction_ops(m);
  register_special_ops(m);
  register_linalg_ops(m);
  register_indexing_ops(m);
  register_foreach_optimizer_ops(m);
  py::module_ nn = m.def_submodule("_nn", "tessera.nn.functional's C++ part");
  register_nn_ops(m, nn);
}
