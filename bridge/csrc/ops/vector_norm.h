// The vector norm of a torch tensor as a runtime op: what linalg.vector_norm
// and norm run (reduction.cc), and _foreach_norm per list entry.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/OptionalArrayRef.h>

#include <optional>

#include "runtime/core/tensor.h"

namespace torch_tessera {

// Over `dim` (every dim when absent or empty), after casting to `dtype` if
// given; `op` names the caller in errors.
tessera::Tensor vector_norm(const at::Tensor& self, const c10::Scalar& ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<c10::ScalarType> dtype, const char* op);

}  // namespace torch_tessera
