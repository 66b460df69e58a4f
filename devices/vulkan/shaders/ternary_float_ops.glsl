// The f32-valued ops of kernels::TernaryOp (all but where) on f32, as the
// CPU kernel computes them; value is addcmul / addcdiv's scale. Shared by
// ternary_f32.comp and foreach_f32.comp.
#include "pointwise_op_constants.glsl"

float ternary_float(uint op, float a, float b, float c, float value) {
  switch (op) {
    // lerp(start a, end b, weight c) in the CPU kernel's two forms, each
    // exact at its end (weight 0 gives start, 1 gives end).
    case TERNARY_OP_LERP: return abs(c) < 0.5 ? a + c * (b - a) : b - (b - a) * (1.0 - c);
    case TERNARY_OP_ADDCMUL: return a + value * b * c;
    default: return a + value * b / c;  // TERNARY_OP_ADDCDIV
  }
}
