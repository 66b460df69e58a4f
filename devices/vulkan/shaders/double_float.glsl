// Double-float arithmetic: a value as an unevaluated sum hi + lo of two
// floats (about 48 significant bits), for kernels whose CPU reference
// computes in double on a device without shaderFloat64. Every temporary is
// `precise` so the compiler neither fuses nor reassociates the error terms.

struct DoubleFloat {
  float hi;
  float lo;
};

DoubleFloat df_quick_two_sum(float a, float b) {  // |a| >= |b|
  precise float s = a + b;
  precise float e = b - (s - a);
  return DoubleFloat(s, e);
}

DoubleFloat df_two_sum(float a, float b) {
  precise float s = a + b;
  precise float bb = s - a;
  precise float e = (a - (s - bb)) + (b - bb);
  return DoubleFloat(s, e);
}

// Dekker's split of a into two 12-bit halves (|a| < 2^100).
DoubleFloat df_split(float a) {
  precise float c = 4097.0 * a;
  precise float hi = c - (c - a);
  precise float lo = a - hi;
  return DoubleFloat(hi, lo);
}

DoubleFloat df_two_prod(float a, float b) {
  precise float p = a * b;
  const DoubleFloat as = df_split(a), bs = df_split(b);
  precise float e = ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo;
  return DoubleFloat(p, e);
}

DoubleFloat df_add(DoubleFloat a, DoubleFloat b) {
  const DoubleFloat s = df_two_sum(a.hi, b.hi);
  precise float e = s.lo + (a.lo + b.lo);
  return df_quick_two_sum(s.hi, e);
}

DoubleFloat df_neg(DoubleFloat a) { return DoubleFloat(-a.hi, -a.lo); }

DoubleFloat df_mul_float(DoubleFloat a, float b) {
  const DoubleFloat p = df_two_prod(a.hi, b);
  precise float e = p.lo + a.lo * b;
  return df_quick_two_sum(p.hi, e);
}

// a * n for an unsigned integer n < 2^32 (split so each part is exact in
// a float).
DoubleFloat df_mul_uint(DoubleFloat a, uint n) {
  const DoubleFloat high = df_mul_float(a, float(n & 0xFFFFF000u));
  const DoubleFloat low = df_mul_float(a, float(n & 0xFFFu));
  return df_add(high, low);
}

// trunc(hi + lo) as an int64 (|hi + lo| < 2^62).
int64_t df_trunc(DoubleFloat a) {
  const float whole = trunc(a.hi);
  precise float rest = (a.hi - whole) + a.lo;  // in (-1, 1)
  const int64_t base = int64_t(whole);
  if (a.hi > 0.0) return base + int64_t(floor(rest));
  if (a.hi < 0.0) return base + int64_t(ceil(rest));
  return 0l;
}
