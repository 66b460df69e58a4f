// f64 in shaders, for the *_f64 shaders that kernels launch only where the
// device has shaderFloat64 (VulkanContext::has_f64_shaders): memory viewed
// as doubles, and the conversions whose rounding Vulkan leaves to the
// driver (OpFConvert and OpConvertSToF carry no rounding mode) done on the
// bits, so that they round to nearest even as the CPU device's casts do.
// Arithmetic (+ - * / fma sqrt) is the driver's double arithmetic.
// Include after buffers.glsl.
#ifndef TESSERA_DOUBLES_GLSL
#define TESSERA_DOUBLES_GLSL
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#include "dtype_access.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) buffer Doubles { double v[]; };

double double_of_bits(uint64_t bits) { return packDouble2x32(unpackUint2x32(bits)); }
uint64_t bits_of_double(double v) { return packUint2x32(unpackDouble2x32(v)); }

// A Scalar encoded for f64 (kernels/element_kind.h, encode_scalar): the
// double's bits, low word first.
double scalar_double(uvec2 s) { return packDouble2x32(s); }

// The double nearest to v (exact below 2^53).
double double_of_long(int64_t v) { return double_of_bits(f64_bits_of(v)); }

// The float nearest to v, ties to even: overflow to inf, f32 subnormals
// rounded on their own grid, NaN kept quiet with its sign and top payload
// bits (as x86's cvtsd2ss).
float float_of_double(double v) {
  const uint64_t bits = bits_of_double(v);
  const uint sign = uint(bits >> 32) & 0x80000000u;
  const int exponent = int(uint(bits >> 52) & 0x7ffu);
  const uint64_t mantissa = bits & 0xfffffffffffffUL;
  if (exponent == 0x7ff) {
    if (mantissa == 0UL) return uintBitsToFloat(sign | 0x7f800000u);
    return uintBitsToFloat(sign | 0x7fc00000u | uint(mantissa >> 29));
  }
  if (exponent == 0) return uintBitsToFloat(sign);  // f64 subnormals are far below f32's
  // f32's biased exponent; at 0 or below the result is subnormal (or 0).
  const int biased = exponent - 1023 + 127;
  if (biased >= 255) return uintBitsToFloat(sign | 0x7f800000u);
  const uint64_t significand = mantissa | (1UL << 52);
  const int shift = biased > 0 ? 29 : 30 - biased;
  if (shift > 54) return uintBitsToFloat(sign);  // below half the smallest subnormal
  uint64_t kept = significand >> shift;
  const uint64_t rest = significand & ((1UL << shift) - 1UL);
  const uint64_t halfway = 1UL << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1UL) != 0UL)) ++kept;
  // A normal's implicit bit (kept bit 23) adds 1 to the exponent field, so
  // the field holds biased - 1; a carry out of the mantissa moves the value
  // up a binade, to inf past the largest float, as rounding should.
  const uint field = biased > 0 ? uint(biased - 1) << 23 : 0u;
  return uintBitsToFloat(sign | (field + uint(kept)));
}

// Tests on the bits, as float_math.glsl's for f32 (a driver may compile
// comparisons as if NaN could not occur): nonzero (-0.0 is zero, NaN is
// not), NaN, infinite, and < 0 / > 0 (NaN and both zeros are neither).
bool double_is_nonzero(double v) { return (bits_of_double(v) & 0x7fffffffffffffffUL) != 0UL; }
bool double_is_nan(double v) { return (bits_of_double(v) & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL; }
bool double_is_inf(double v) { return (bits_of_double(v) & 0x7fffffffffffffffUL) == 0x7ff0000000000000UL; }
bool double_is_negative(double v) {
  const uint64_t u = bits_of_double(v);
  return u > 0x8000000000000000UL && u <= 0xfff0000000000000UL;
}
bool double_is_positive(double v) {
  const uint64_t u = bits_of_double(v);
  return u != 0UL && u <= 0x7ff0000000000000UL;
}

// max / min with NaN in either operand propagating (the CPU kernels'
// nan_max / nan_min; GLSL's max and min leave NaN undefined).
double double_nan_max(double x, double lo) {
  if (double_is_nan(x)) return x;
  if (double_is_nan(lo)) return lo;
  return x < lo ? lo : x;
}
double double_nan_min(double x, double hi) {
  if (double_is_nan(x)) return x;
  if (double_is_nan(hi)) return hi;
  return x > hi ? hi : x;
}

// ceil, trunc and round (half to even, as torch.round) from floor alone:
// llvmpipe's double roundEven gave 1 for 1.5 and lost -0.0's sign, so
// only floor is trusted; each step is exact below 2^52, and from there on
// every double is an integer. Zeros keep x's sign, as C's functions do.
double signed_zero_as(double x) { return double_of_bits(bits_of_double(x) & 0x8000000000000000UL); }
bool double_is_integral_range(double x) { return !(abs(x) < 4503599627370496.0LF); }  // NaN too
double double_ceil(double x) {
  if (double_is_integral_range(x)) return x;
  const double r = -floor(-x);
  return r == 0.0LF ? signed_zero_as(x) : r;
}
double double_trunc(double x) {
  if (double_is_integral_range(x)) return x;
  const double r = double_is_negative(x) ? -floor(-x) : floor(x);
  return r == 0.0LF ? signed_zero_as(x) : r;
}
double double_round_half_even(double x) {
  if (double_is_integral_range(x)) return x;
  precise double r = floor(x);
  precise double rest = x - r;  // exact, as every step here: kept from folding
  precise double half_r = floor(r * 0.5LF);
  precise double parity = r - 2.0LF * half_r;
  const bool odd = parity != 0.0LF;
  if (rest > 0.5LF || (rest == 0.5LF && odd)) r += 1.0LF;
  return r == 0.0LF ? signed_zero_as(x) : r;
}

// sqrt, NaN below zero (GLSL leaves it undefined there); -0.0 stays -0.0.
double double_sqrt(double x) {
  if (double_is_nan(x)) return x;
  if (double_is_negative(x)) return packDouble2x32(uvec2(0u, 0x7ff80000u));  // quiet NaN
  return sqrt(x);
}
#endif  // TESSERA_DOUBLES_GLSL
