// The float32 unary ops and activation gradients that run on vector code
// (vec_activation.h, vec_math.h), one contiguous row at a time. Built
// twice: for AVX2 in the kernels that call them and for AVX-512 in
// avx512/vec_rows_avx512.cc (see the width note in normalization_vec.h);
// the kernels pick one by CPUID.
#pragma once

#include <cstdint>

#include "devices/cpu/kernels/vec_activation.h"
#include "devices/cpu/kernels/vec_math.h"
#include "runtime/ops/signatures/pointwise.h"

namespace tessera::cpu::vec {
inline namespace TESSERA_CPU_VEC_ABI {

// True for the ops unary_row computes.
constexpr bool has_unary_row(kernels::UnaryOp op) {
  using kernels::UnaryOp;
  switch (op) {
    case UnaryOp::kTanh:
    case UnaryOp::kSigmoid:
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kSilu:
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
    case UnaryOp::kLog:
    case UnaryOp::kLog1p:
    case UnaryOp::kErf:
    case UnaryOp::kSin:
    case UnaryOp::kCos: return true;
    default: return false;
  }
}

// y[i] = op(x[i]) for i < n (y may be x); op must be has_unary_row's.
// Lambdas, not function pointers: map_row then inlines the math instead
// of calling it for every vector.
inline void unary_row(kernels::UnaryOp op, const float* x, float* y, int64_t n) {
  using kernels::UnaryOp;
  switch (op) {
    case UnaryOp::kTanh: return map_row(x, y, n, [](f32v v) { return tanh_v(v); });
    case UnaryOp::kSigmoid: return map_row(x, y, n, [](f32v v) { return sigmoid_v(v); });
    case UnaryOp::kGelu: return map_row(x, y, n, [](f32v v) { return gelu_v(v); });
    case UnaryOp::kGeluTanh: return map_row(x, y, n, [](f32v v) { return gelu_tanh_v(v); });
    case UnaryOp::kSilu: return map_row(x, y, n, [](f32v v) { return silu_v(v); });
    case UnaryOp::kExp: return map_row(x, y, n, [](f32v v) { return exp_v(v); });
    case UnaryOp::kExpm1: return map_row(x, y, n, [](f32v v) { return expm1_v(v); });
    case UnaryOp::kLog: return map_row(x, y, n, [](f32v v) { return log_v(v); });
    case UnaryOp::kLog1p: return map_row(x, y, n, [](f32v v) { return log1p_v(v); });
    case UnaryOp::kErf: return map_row(x, y, n, [](f32v v) { return erf_v(v); });
    case UnaryOp::kSin: return map_row(x, y, n, [](f32v v) { return sin_cos_v<false>(v); });
    case UnaryOp::kCos: return map_row(x, y, n, [](f32v v) { return sin_cos_v<true>(v); });
    default: return;
  }
}

// True for the activation gradients gradient_row computes.
constexpr bool has_gradient_row(kernels::PointwiseBinaryOp op) {
  using Op = kernels::PointwiseBinaryOp;
  return op == Op::kGeluBackward || op == Op::kGeluTanhBackward || op == Op::kSiluBackward;
}

// y[i] = op(g[i], x[i]) for i < n: the gradient g times the activation's
// derivative at x; op must be has_gradient_row's.
inline void gradient_row(kernels::PointwiseBinaryOp op, const float* g, const float* x, float* y,
                         int64_t n) {
  using Op = kernels::PointwiseBinaryOp;
  switch (op) {
    case Op::kGeluBackward:
      return map2_row(g, x, y, n, [](f32v u, f32v v) { return gelu_backward_v(u, v); });
    case Op::kGeluTanhBackward:
      return map2_row(g, x, y, n, [](f32v u, f32v v) { return gelu_tanh_backward_v(u, v); });
    case Op::kSiluBackward:
      return map2_row(g, x, y, n, [](f32v u, f32v v) { return silu_backward_v(u, v); });
    default: return;
  }
}

}  // namespace TESSERA_CPU_VEC_ABI
}  // namespace tessera::cpu::vec
