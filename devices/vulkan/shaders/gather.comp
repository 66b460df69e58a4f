#version 450
// gather with every element size (kernels/gather.cc); the shader is gather.glsl.
#include "gather.glsl"
