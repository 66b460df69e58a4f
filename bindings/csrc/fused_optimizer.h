// The fused optimizer steps' part of register_foreach_optimizer_ops
// (ops_fused_optimizer.cc).
#pragma once

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// tessera._fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_.
void register_fused_optimizer_ops(py::module_& m);

}  // namespace tessera_py
