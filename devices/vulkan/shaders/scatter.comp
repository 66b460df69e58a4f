#version 450
// scatter with every element size (kernels/scatter.cc); the shader is scatter.glsl.
#include "scatter.glsl"
