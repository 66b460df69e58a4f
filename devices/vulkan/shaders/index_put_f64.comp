#version 450
// index_put with every element size and f64 accumulate in double (kernels/
// index_put.cc); the shader is index_put.glsl. Needs shaderFloat64.
#define INDEX_F64
#include "index_put.glsl"
