// Linear-algebra composites over the runtime's ops that both tessera.linalg
// (ops_linalg.cc) and tessera.nn.functional (normalize, pairwise_distance,
// embedding's max_norm) use.
#pragma once

#include <optional>

#include "runtime/core/tensor.h"

namespace tessera_py {

// torch.linalg.vector_norm: (sum |x|^ord)^(1 / ord) over dims (empty: all),
// with ord = inf / -inf the max / min of |x| and ord = 0 the count of
// non-zeros. Floating input (or a floating dtype to convert it to).
tessera::Tensor vector_norm(const tessera::Tensor& x, double ord, const tessera::Shape& dims,
                            bool keepdim, std::optional<tessera::DType> dtype = std::nullopt);

}  // namespace tessera_py
