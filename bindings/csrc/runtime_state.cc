#include "bindings/csrc/bindings.h"

namespace tessera_py {

void register_runtime_state(py::module_&) {}

}  // namespace tessera_py
