#version 450
// Reductions of f32 / f16 / bf16 input accumulated in f32 (see reduce_common.glsl);
// combines work groups through shared memory only (reduce_f32acc_sg.comp
// adds subgroup sums).
#define ACC_T float
#define ACC_FLOAT
#include "reduce_common.glsl"
