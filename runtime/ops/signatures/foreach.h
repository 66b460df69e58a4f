// Kernel signatures: the multi-tensor pointwise and norm kernels (the
// front ends are in foreach_ops.h), and the entry type the pointwise
// kernel shares with its front end. See kernel_signatures.h for the
// conventions.
#pragma once

#include <variant>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/signatures/pointwise.h"
#include "runtime/ops/signatures/reduction.h"  // ReduceExtOp

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

// outs[i] = the norm `op` (kNorm1, kNorm2 or kNormInf) over every element
// of inputs[i], as ReduceExt computes it: each out a 0-d tensor of its
// input's dtype, every input floating and non-empty, all on one device
// (dtypes may differ between entries). Clipping gradients takes the norm
// of every parameter's gradient; one launch serves the whole list.
// Optional: without it each entry runs on ReduceExt.
struct ForeachNorm {
  static constexpr const char* name = "foreach_norm";
  static constexpr bool optional = true;
  using Fn = void (*)(const KernelContext&, ReduceExtOp op, const std::vector<Tensor>& inputs,
                      std::vector<Tensor>& outs);
};

}  // namespace tessera::kernels
