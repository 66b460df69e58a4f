// Runtime errors become Python exceptions of the matching type, carrying
// the runtime's message (which names the op, shapes, dtypes and devices).
#include "bindings/csrc/bindings.h"
#include "runtime/core/error.h"

namespace tessera_py {

namespace {

PyObject* python_type_of(tessera::ErrorKind kind) {
  switch (kind) {
    case tessera::ErrorKind::kValue: return PyExc_ValueError;
    case tessera::ErrorKind::kType: return PyExc_TypeError;
    case tessera::ErrorKind::kIndex: return PyExc_IndexError;
    case tessera::ErrorKind::kOutOfMemory: return PyExc_MemoryError;
    case tessera::ErrorKind::kNotImplemented: return PyExc_NotImplementedError;
    case tessera::ErrorKind::kDevice: return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

}  // namespace

void register_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::Error& e) {
      PyErr_SetString(python_type_of(e.kind()), e.what());
    }
  });
}

}  // namespace tessera_py
