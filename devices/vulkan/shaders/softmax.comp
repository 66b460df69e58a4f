#version 450
// Softmax rows with shared-memory reductions; see softmax.glsl.
#define ROWS_SUBGROUP 0
#include "softmax.glsl"
