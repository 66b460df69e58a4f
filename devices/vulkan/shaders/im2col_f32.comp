#version 450
// im2col for conv2d (im2col.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "im2col.glsl"
