// The ops of kernels::BinaryOp on f32: out = a (op) b, b scaled by alpha
// for add and sub, as the CPU kernel computes them. Shared by
// binary_f32.comp and foreach_f32.comp.
#include "pointwise_op_constants.glsl"

float binary_float(uint op, float a, float b, float alpha) {
  switch (op) {
    case BINARY_OP_ADD: return a + alpha * b;
    case BINARY_OP_SUB: return a - alpha * b;
    case BINARY_OP_MUL: return a * b;
    default: return a / b;  // BINARY_OP_DIV
  }
}
