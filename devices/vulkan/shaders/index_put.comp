#version 450
// index_put with every element size (kernels/index_put.cc); the shader is index_put.glsl.
#include "index_put.glsl"
