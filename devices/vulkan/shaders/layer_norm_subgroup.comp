#version 450
// Layer / rms norm rows with subgroup reductions (devices with subgroup arithmetic); see layer_norm.glsl.
#define ROWS_SUBGROUP 1
#include "layer_norm.glsl"
