#version 450
// Softmax rows with subgroup reductions (devices with subgroup arithmetic); see softmax.glsl.
#define ROWS_SUBGROUP 1
#include "softmax.glsl"
