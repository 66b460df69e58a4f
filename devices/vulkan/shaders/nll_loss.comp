#version 450
// nll_loss (nll_loss.glsl) in f32 for every kKind (f32, f16, bf16).
#include "buffers.glsl"
#include "index_elements.glsl"
#include "real_f32.glsl"

layout(constant_id = 1) const uint kKind = 0;  // kFloatF32, kFloatF16, kFloatBF16

float load_real(uvec2 addr, int at) { return load_float(kKind, addr, at); }
void store_real(uvec2 addr, int at, float v) { store_float(kKind, addr, at, v); }

#include "nll_loss.glsl"
