// f32 -> f16 rounded to nearest even, computed on the bits. A conversion
// float16_t(v) (SPIR-V OpFConvert with no FPRoundingMode decoration)
// rounds as the driver chooses, and NVIDIA's rounds toward zero (an f32
// quotient just under 12 stored as f16 11), so every f16 store of a
// computed value builds its bits here with integer operations only and
// writes them through the Shorts view. The results match the CPU device's
// Half (runtime/core/half.h) bit for bit, NaN included. Needs no 16-bit
// arithmetic types.
#ifndef TESSERA_HALF_ROUNDING_GLSL
#define TESSERA_HALF_ROUNDING_GLSL

// The f16 nearest to v, ties to even, as bits in the low half: magnitudes
// from 65520 up overflow to inf, a NaN becomes the quiet NaN with v's sign.
uint f16_bits_of(float v) {
  const uint x = floatBitsToUint(v);
  const uint sign = (x >> 16) & 0x8000u;
  const uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // inf, or rounds to it
  if (a >= 0x38800000u) {
    // Normal in f16 (>= 2^-14): rebias the exponent (127 -> 15) and round
    // off 13 mantissa bits; a carry out of the mantissa steps the exponent,
    // which is the right result.
    return sign | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13);
  }
  // Subnormal or zero in f16: in units of 2^-24 (the smallest subnormal)
  // the value is the significand, leading 1 included, shifted right by
  // 126 - exponent. Below 2^-25 (exponent < 102) it rounds to zero.
  const uint exponent = a >> 23;
  if (exponent < 102u) return sign;
  const uint shift = 126u - exponent;  // 14 .. 24
  const uint significand = (a & 0x7fffffu) | 0x800000u;
  const uint round_bias = (1u << (shift - 1u)) - 1u + ((significand >> shift) & 1u);
  return sign | ((significand + round_bias) >> shift);
}

// The f32 equal to the f16 with bits h (exact: every f16 is an f32; a
// subnormal f16 is a normal f32, built from the bits so no driver flushes it).
float f16_bits_to_float(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint exponent = (h >> 10) & 0x1fu;
  const uint mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0u) return uintBitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0u) return uintBitsToFloat(sign);
  // mantissa * 2^-24: its leading 1 becomes the implicit bit.
  const int top = findMSB(mantissa);  // 0 .. 9
  return uintBitsToFloat(sign | (uint(top + 103) << 23) | ((mantissa << (23 - top)) & 0x7fffffu));
}

// v rounded to f16 precision, as an f32.
float rounded_to_f16(float v) { return f16_bits_to_float(f16_bits_of(v)); }

#endif  // TESSERA_HALF_ROUNDING_GLSL
