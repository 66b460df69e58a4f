#version 450
// col2im for conv2d's backward (col2im.glsl) in double, as the CPU kernel
// computes f64. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "col2im.glsl"
