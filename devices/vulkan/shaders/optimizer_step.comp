#version 450
// The fused optimizer steps (optimizer_step.glsl) on f16 and bf16 tensors
// (the element kind, kernels/element_kind.h, is specialization constant 3):
// loaded as f32, each stored value rounded once to nearest even. Needs
// 8/16/64-bit shader types (element_kinds.glsl).
#include "element_kinds.glsl"
#include "float_math.glsl"

layout(constant_id = 3) const uint kKind = 1;

#define REAL float
float load_element(uvec2 addr, int at) { return load_float(kKind, addr, at); }
void store_element(uvec2 addr, int at, float v) { store_float(kKind, addr, at, v); }
bool real_is_nan(float v) { return is_nan(v); }
float real_sqrt(float v) { return c_sqrt(v); }

#include "optimizer_step.glsl"
