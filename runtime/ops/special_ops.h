// Special functions (torch.special) and the elementwise math beside them:
// one front end over the SpecialFunction kernel (signatures/special.h).
//
// dtypes follow PyTorch: integer and bool inputs compute in float32;
// frac and nextafter need floating inputs; signbit gives bool; fmax, fmin
// and heaviside keep integer dtypes (computed exactly, as maximum, minimum
// and comparisons). Binary ops broadcast and promote their operands.
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/signatures/special.h"

namespace tessera {

using kernels::SpecialOp;

// The op's name as PyTorch spells it ("erfinv", "special_bessel_j0").
const char* special_name(SpecialOp op);

Tensor special_function(SpecialOp op, const Tensor& x);
Tensor& special_function_out(Tensor& out, SpecialOp op, const Tensor& x);
Tensor special_function(SpecialOp op, const Tensor& a, const Tensor& b);
Tensor& special_function_out(Tensor& out, SpecialOp op, const Tensor& a, const Tensor& b);

// polygamma(n, x), n >= 0 (ValueError otherwise).
Tensor polygamma(int64_t n, const Tensor& x);
Tensor& polygamma_out(Tensor& out, int64_t n, const Tensor& x);

}  // namespace tessera
