#version 450
// col2im for conv2d's backward (col2im.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "col2im.glsl"
