// (in progress)
#include "bindings/csrc/bindings.h"

namespace tessera_py {

void register_nn_ops(py::module_&, py::module_&) {}

}  // namespace tessera_py
