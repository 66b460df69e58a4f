// Which pointwise ops the f32 shaders compute, for the single-tensor
// kernels (unary.cc, pointwise_binary.cc) and the multi-tensor one
// (foreach.cc), which shares their formulas.
#pragma once

#include "runtime/ops/signatures/pointwise.h"

namespace tessera::vulkan {

// unary_float_ops.glsl's ops and the predicates of predicate_f32.comp and
// unary.comp: every UnaryOp but bitwise_not.
bool float_shaders_handle(kernels::UnaryOp op);

// pointwise_float_ops.glsl's ops (pointwise_f32.comp): maximum, minimum,
// fmod, logaddexp, logaddexp2 and the activation gradients.
bool is_f32_shader_op(kernels::PointwiseBinaryOp op);

}  // namespace tessera::vulkan
