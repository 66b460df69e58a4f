#version 450
// triangle with every element size (kernels/triangle.cc); the shader is triangle.glsl.
#include "triangle.glsl"
