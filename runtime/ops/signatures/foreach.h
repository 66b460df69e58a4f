// Kernel signature: the multi-tensor pointwise kernel (the front end is in
// foreach_ops.h), and the entry type it shares with the front end. See
// kernel_signatures.h for the conventions.
#pragma once

#include <variant>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/signatures/pointwise.h"

namespace tessera {

// Which op an entry runs: the kernel family is the alternative's type.
using PointwiseOpCode = std::variant<kernels::BinaryOp, kernels::UnaryOp,
                                     kernels::PointwiseBinaryOp, kernels::TernaryOp>;

// One entry: out = op(a[, b[, c]]) with the family's scalars: Binary's
// alpha is s0; Unary's p0 and p1 are s0 and s1; PointwiseBinary's p0 is
// s0; Ternary's value is s0. The inputs a family does not take stay
// undefined.
struct PointwiseEntry {
  Tensor out;
  Tensor a, b, c;
  Scalar s0, s1;
};

}  // namespace tessera

namespace tessera::kernels {

// Every entry as the family's single-tensor kernel would run it (inputs
// already expanded to out's sizes, one floating dtype), as one launch.
// Optional: without it each entry runs on the family's kernel.
struct ForeachPointwise {
  static constexpr const char* name = "foreach_pointwise";
  static constexpr bool optional = true;
  using Fn = void (*)(const KernelContext&, const PointwiseOpCode& code,
                      std::vector<PointwiseEntry>& entries);
};

}  // namespace tessera::kernels
