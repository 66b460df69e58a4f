// The fused optimizer steps' and the gradient scaler's parts of
// register_foreach_optimizer_ops (ops_fused_optimizer.cc, ops_grad_scaler.cc).
#pragma once

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// tessera._fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_.
void register_fused_optimizer_ops(py::module_& m);

// tessera._amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_
// (ops_grad_scaler.cc).
void register_grad_scaler_ops(py::module_& m);

}  // namespace tessera_py
