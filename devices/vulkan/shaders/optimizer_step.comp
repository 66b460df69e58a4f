#version 450
// The fused optimizer steps (optimizer_step.glsl) on f16 and bf16 tensors
// (the element kind, kernels/element_kind.h, is specialization constant 3):
// loaded as f32, each stored value rounded once to nearest even. Needs
// 8/16/64-bit shader types (element_kinds.glsl).
#include "element_kinds.glsl"
#include "real_f32.glsl"

layout(constant_id = 3) const uint kKind = 1;

float load_element(uvec2 addr, int at) { return load_float(kKind, addr, at); }
void store_element(uvec2 addr, int at, float v) { store_float(kKind, addr, at, v); }

#include "optimizer_step.glsl"
