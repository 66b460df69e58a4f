#version 450
// Batch norm statistics with subgroup reductions (devices with subgroup arithmetic); see batch_norm.glsl.
#define ROWS_SUBGROUP 1
#include "batch_norm.glsl"
