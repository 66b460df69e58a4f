#version 450
// Batch norm statistics with shared-memory reductions; see batch_norm.glsl.
#define ROWS_SUBGROUP 0
#include "batch_norm.glsl"
