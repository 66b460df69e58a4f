// GELU's constants as in the CPU kernel: 1/sqrt(2), 1/sqrt(2 pi), sqrt(2/pi)
// and the cubic coefficient of the tanh approximation; shared by the
// forward (unary_float_ops.glsl) and the gradient (pointwise_float_ops.glsl),
// which the multi-tensor shaders include together.
#ifndef TESSERA_GELU_CONSTANTS_GLSL
#define TESSERA_GELU_CONSTANTS_GLSL
const float kInvSqrt2 = 0.70710678118654752440;
const float kInvSqrt2Pi = 0.39894228040143267794;
const float kSqrt2OverPi = 0.79788456080286535588;
const float kGeluCubic = 0.044715;
#endif  // TESSERA_GELU_CONSTANTS_GLSL
