#version 450
// conv2d's grad_bias (conv2d_bias_grad.glsl) in double, as the CPU kernel
// computes f64. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "conv2d_bias_grad.glsl"
