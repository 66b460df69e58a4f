// The float32 rows of vec_rows.h compiled for AVX-512. Call
// only where cpu_has_avx512() (cpu_isa.h) is true.
#pragma once

#include <cstdint>

#include "runtime/ops/signatures/pointwise.h"

namespace tessera::cpu {

// y[i] = op(x[i]) for i < n; op must be vec::has_unary_row's.
void unary_row_avx512(kernels::UnaryOp op, const float* x, float* y, int64_t n);

// y[i] = op(g[i], x[i]) for i < n; op must be vec::has_gradient_row's.
void gradient_row_avx512(kernels::PointwiseBinaryOp op, const float* g, const float* x, float* y,
                         int64_t n);

}  // namespace tessera::cpu
