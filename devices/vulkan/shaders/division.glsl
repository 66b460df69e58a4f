// f32 division rounded correctly, as IEEE (and so the CPU) gives it.
// Vulkan lets a driver's a / b be 2.5 ulp off (NVIDIA's is a reciprocal
// and a product), which is enough to move floor(a / b) and trunc(a / b)
// across an integer, and the f16 rounding of a quotient across a midpoint.
// Only f32 addition, subtraction and multiplication are exact here (Vulkan
// rounds them correctly); fma may be unfused, so products are split by
// Dekker (double_float.glsl) and every step is `precise`, which forbids
// fusing and re-associating. Needs float_math.glsl and double_float.glsl.

// x - c * y exactly, as hi + lo, for c * y within a factor 2 of x (the
// subtraction of the rounded product is then exact, Sterbenz).
DoubleFloat division_residual(float x, float y, float c) {
  const DoubleFloat product = df_two_prod(c, y);
  precise float d = x - product.hi;
  return df_two_sum(d, -product.lo);
}

// hi + lo > t and hi + lo < t, exactly (|lo| is at most half an ulp of hi).
bool df_above(DoubleFloat v, float t) { return v.hi > t || (v.hi == t && v.lo > 0.0); }
bool df_below(DoubleFloat v, float t) { return v.hi < t || (v.hi == t && v.lo < 0.0); }

bool is_normal(float x) {
  const uint e = floatBitsToUint(x) & 0x7f800000u;
  return e != 0u && e != 0x7f800000u;
}

// a / b correctly rounded to nearest. The mantissas' quotient x / y (both
// in [0.5, 1), so every step stays far from overflow and subnormals) gets
// one Newton step from its exact residual, which leaves it within an ulp;
// the residual then tells whether the true quotient lies beyond the
// midpoint to either neighbour (it never lies on one: a quotient of floats
// is no midpoint). The exponent goes back on exactly. Zero, infinite, NaN
// and subnormal operands, and quotients outside the normal range, keep the
// driver's a / b.
float c_div(float a, float b) {
  precise float q = a / b;
  if (!is_normal(a) || !is_normal(b)) return q;
  int ea, eb;
  const float x = abs(frexp(a, ea));
  const float y = abs(frexp(b, eb));
  const int k = ea - eb;  // the result is x / y * 2^k, x / y in (0.5, 2)
  if (k < -125 || k > 126) return q;
  precise float c = x / y;
  precise float step = division_residual(x, y, c).hi / y;
  c = c + step;
  const DoubleFloat r = division_residual(x, y, c);
  const float up = uintBitsToFloat(floatBitsToUint(c) + 1u);
  const float down = uintBitsToFloat(floatBitsToUint(c) - 1u);
  // Half the gap to each neighbour, times y: exact (powers of two times y).
  precise float half_up = (up - c) * 0.5 * y;
  precise float half_down = (c - down) * 0.5 * y;
  if (df_above(r, half_up)) c = up;
  else if (df_below(r, -half_down)) c = down;
  const float result = ldexp(c, k);
  return ((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u) != 0u ? -result : result;
}
