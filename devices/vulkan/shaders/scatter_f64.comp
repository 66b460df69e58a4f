#version 450
// scatter with every element size and f64 folds in double (kernels/
// scatter.cc); the shader is scatter.glsl. Needs shaderFloat64.
#define INDEX_F64
#include "scatter.glsl"
