// Safetensors files from Python: tessera.load_file and tessera.save_file,
// named and called as in the safetensors package (safetensors.torch), over
// the runtime's loader and writer (runtime/io/safetensors.h).
#include <map>
#include <optional>
#include <string>

#include "bindings/csrc/bindings.h"
#include "runtime/io/safetensors.h"

namespace tessera_py {

// A file name from a str, bytes or os.PathLike, as the OS spells it.
struct FilePath {
  std::string bytes;
};

}  // namespace tessera_py

namespace pybind11::detail {

// pybind11's std::filesystem::path caster calls itself os.PathLike, which
// a type checker reads as refusing str; this one names both.
template <>
struct type_caster<tessera_py::FilePath> {
  PYBIND11_TYPE_CASTER(tessera_py::FilePath, const_name("Union[str, os.PathLike[str]]"));

  bool load(handle src, bool) {
    object path = reinterpret_steal<object>(PyOS_FSPath(src.ptr()));
    if (!path) {
      PyErr_Clear();
      return false;
    }
    // str in the file system's encoding (undecodable bytes round-trip
    // through surrogateescape), as open() does.
    object encoded = PyUnicode_Check(path.ptr())
                         ? reinterpret_steal<object>(PyUnicode_EncodeFSDefault(path.ptr()))
                         : path;
    if (!encoded || !PyBytes_Check(encoded.ptr())) {
      PyErr_Clear();
      return false;
    }
    value.bytes = std::string(PyBytes_AS_STRING(encoded.ptr()),
                              static_cast<size_t>(PyBytes_GET_SIZE(encoded.ptr())));
    return true;
  }

  static handle cast(const tessera_py::FilePath& p, return_value_policy, handle) {
    return PyUnicode_DecodeFSDefaultAndSize(p.bytes.data(),
                                            static_cast<Py_ssize_t>(p.bytes.size()));
  }
};

}  // namespace pybind11::detail

namespace tessera_py {

void register_io(py::module_& m) {
  m.def(
      "load_file",
      [](const FilePath& filename, tessera::Device device) {
        return tessera::load_safetensors(filename.bytes, device);
      },
      "filename"_a, "device"_a = "cpu", ReleaseGil(),
      "The tensors of a safetensors file, by name, on device. On the CPU device they share the "
      "file's memory-mapped pages (no copy; writes to them stay in this process, the file never "
      "changes); on other devices they are copies. A malformed file raises ValueError.");
  m.def(
      "save_file",
      [](const std::map<std::string, tessera::Tensor>& tensors, const FilePath& filename,
         const std::optional<std::map<std::string, std::string>>& metadata) {
        tessera::save_safetensors(filename.bytes, tensors,
                                  metadata ? *metadata : std::map<std::string, std::string>{});
      },
      "tensors"_a, "filename"_a, "metadata"_a = py::none(), ReleaseGil(),
      "Writes tensors (on any device) and string metadata to a safetensors file, in the layout "
      "the safetensors package writes; the file is replaced atomically (written beside it, then "
      "renamed).");
}

}  // namespace tessera_py
