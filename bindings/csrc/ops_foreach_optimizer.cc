// (in progress)
#include "bindings/csrc/bindings.h"

namespace tessera_py {

void register_foreach_optimizer_ops(py::module_&) {}

}  // namespace tessera_py
