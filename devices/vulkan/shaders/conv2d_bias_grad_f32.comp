#version 450
// conv2d's grad_bias (conv2d_bias_grad.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "conv2d_bias_grad.glsl"
