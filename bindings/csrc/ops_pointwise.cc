// (in progress)
#include "bindings/csrc/bindings.h"

namespace tessera_py {

void register_pointwise_ops(py::module_&) {}

}  // namespace tessera_py
