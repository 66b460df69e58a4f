#version 450
// embedding_dense_backward (embedding_backward.glsl) for f32, f16 and bf16
// gradients (kGradKind), summed in f32.
#include "buffers.glsl"
#include "index_elements.glsl"
#include "real_f32.glsl"

layout(constant_id = 2) const uint kGradKind = 0;  // kFloatF32, kFloatF16 or kFloatBF16

float load_grad(uvec2 addr, int at) { return load_float(kGradKind, addr, at); }
void store_grad_weight(uvec2 addr, int at, float v) { store_float(kGradKind, addr, at, v); }

#include "embedding_backward.glsl"
