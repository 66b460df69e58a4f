// REAL as f32, for the shader bodies written over a compute type
// (optimizer_step.glsl, nll_loss*.glsl, embedding_backward.glsl,
// pool_*.glsl, im2col.glsl, col2im.glsl, conv2d_bias_grad.glsl): the type,
// a buffer reference type of it, and the NaN-aware helpers those bodies
// use. Include after buffers.glsl.
#ifndef TESSERA_REAL_GLSL
#define TESSERA_REAL_GLSL
#include "float_math.glsl"

#define REAL float
#define Reals Floats
#define REAL_NEG_INF uintBitsToFloat(0xff800000u)
bool real_is_nan(float v) { return is_nan(v); }
float real_nan() { return kNaN; }
float real_sqrt(float v) { return c_sqrt(v); }  // NaN below zero
#endif  // TESSERA_REAL_GLSL
