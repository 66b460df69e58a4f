#version 450
// Layer / rms norm rows with shared-memory reductions; see layer_norm.glsl.
#define ROWS_SUBGROUP 0
#include "layer_norm.glsl"
