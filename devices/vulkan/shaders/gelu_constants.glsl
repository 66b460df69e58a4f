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
#ifdef TESSERA_DOUBLES_GLSL
// The same as doubles, for the *_f64 shaders (the CPU kernel's f64 math).
const double kInvSqrt2D = 0.70710678118654752440LF;
const double kInvSqrt2PiD = 0.39894228040143267794LF;
const double kSqrt2OverPiD = 0.79788456080286535588LF;
const double kGeluCubicD = 0.044715LF;
#endif
#endif  // TESSERA_GELU_CONSTANTS_GLSL
