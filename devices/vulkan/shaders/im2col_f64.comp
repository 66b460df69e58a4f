#version 450
// im2col for conv2d (im2col.glsl) in double, as the CPU kernel computes f64.
// Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "im2col.glsl"
