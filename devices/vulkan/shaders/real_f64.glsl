// REAL as f64, for the shader bodies written over a compute type (see
// real_f32.glsl): the *_f64 shaders, which need shaderFloat64. Include
// after buffers.glsl.
#ifndef TESSERA_REAL_GLSL
#define TESSERA_REAL_GLSL
#include "doubles.glsl"

#define REAL double
#define Reals Doubles
#define REAL_NEG_INF double_of_bits(0xfff0000000000000UL)
bool real_is_nan(double v) { return double_is_nan(v); }
double real_nan() { return double_of_bits(0x7ff8000000000000UL); }
double real_sqrt(double v) { return double_sqrt(v); }  // NaN below zero
#endif  // TESSERA_REAL_GLSL
