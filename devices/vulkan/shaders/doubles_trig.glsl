// Double sin, cos and tan for the *_f64 shaders (GLSL has none). The
// argument is reduced by pi/2 to |r| <= pi/4 carried in two parts, r_hi +
// r_lo: below 2^20 pi/2 by Cody-Waite with pi/2 in three 33-bit pieces
// (each product with the quadrant exact), above by Payne-Hanek: x's 53-bit
// integer significand times a 192-bit window of 2/pi's bits, in 32-bit
// limbs, from which the quadrant and 128 bits of fraction come (enough for
// the doubles closest to a multiple of pi/2, about 2^-61 away). Then
// Taylor series on the reduced argument: within a few ulp of glibc at
// every magnitude. Include after doubles_math.glsl.
#ifndef TESSERA_DOUBLES_TRIG_GLSL
#define TESSERA_DOUBLES_TRIG_GLSL

// 2/pi's bits after the binary point, 32 a word, most significant first:
// enough for the largest double's exponent plus the 192-bit window.
const uint kTwoOverPiWords[40] = uint[40](
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
    0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
    0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
    0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du);

const double kPio2Hi = 1.5707963267948966LF, kPio2Lo = 6.123233995736766e-17LF;
const double kPio2Part1 = 1.5707963267341256LF;     // 33 bits
const double kPio2Part2 = 6.077100506303966e-11LF;  // the next 33
const double kPio2Part3 = 2.0222662487111665e-21LF; // the next 33
const double kPio2Part4 = 8.4784276603689e-32LF;    // the rest

// 64 bits of the number in limbs (least significant first) from bit `low`
// up. The product has 8 limbs; two zero limbs above them keep every read
// in bounds (the binary point sits as high as bit 224).
uint64_t bits64_at(uint limbs[10], int low) {
  const int at = low >> 5, off = low & 31;
  const uint64_t word = uint64_t(limbs[at]) | (uint64_t(limbs[at + 1]) << 32);
  if (off == 0) return word;
  return (word >> uint(off)) | (uint64_t(limbs[at + 2]) << uint(64 - off));
}

// |x| = (n + f) pi/2 with f in [-1/2, 1/2), for |x| >= 2^20 pi/2; returns n
// mod 4 and r = f pi/2 as r_hi + r_lo.
int reduce_large(double ax, out double r_hi, out double r_lo) {
  const uint64_t bits = bits_of_double(ax);
  const int e = int(bits >> 52) - 1075;  // ax = m 2^e, m a 53-bit integer
  const uint64_t m = (bits & 0xfffffffffffffUL) | 0x10000000000000UL;
  // Bits of 2/pi from s0 (1-based) on; those before weigh multiples of 8
  // in ax 2/pi. The window's integer times m has the binary point at bit
  // `point`.
  const int s0 = e >= 3 ? e - 2 : 1;
  const int point = e >= 3 ? 189 : 192 - e;
  const int q = (s0 - 1) >> 5, r = (s0 - 1) & 31;
  uint v[6];  // the window, least significant limb first
  for (int j = 0; j < 6; ++j) {
    const uint hi = kTwoOverPiWords[q + j];
    const uint lo = kTwoOverPiWords[q + j + 1];
    v[5 - j] = r == 0 ? hi : (hi << uint(r)) | (lo >> uint(32 - r));
  }
  const uint u[2] = uint[2](uint(m), uint(m >> 32));
  uint p[10] = uint[10](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
  for (int k = 0; k < 6; ++k) {
    uint64_t carry = 0UL;
    for (int l = 0; l < 2; ++l) {
      const uint64_t t = uint64_t(v[k]) * uint64_t(u[l]) + uint64_t(p[k + l]) + carry;
      p[k + l] = uint(t);
      carry = t >> 32;
    }
    p[k + 2] = uint(carry);
  }
  int n = int(uint(bits64_at(p, point)) & 7u);
  const uint64_t a = bits64_at(p, point - 64);   // fraction bits 1..64
  const uint64_t b = bits64_at(p, point - 128);  // bits 65..128
  double f_hi = double(a >> 11) * double_pow2(-53);
  double f_lo = double(a & 0x7ffUL) * double_pow2(-64) + double(b) * double_pow2(-128);
  if (f_hi >= 0.5LF) {  // to [-1/2, 1/2): the next quadrant
    f_hi -= 1.0LF;  // exact
    ++n;
  }
  precise double s = f_hi + f_lo;
  precise double s_lo = f_lo - (s - f_hi);
  precise double rh = s * kPio2Hi;
  precise double rl = double_product_error(s, kPio2Hi, rh) + (s * kPio2Lo + s_lo * kPio2Hi);
  r_hi = rh + rl;
  r_lo = rl - (r_hi - rh);
  return n & 3;
}

// The same for |x| < 2^20 pi/2: the quadrant times each piece is exact.
int reduce_medium(double ax, out double r_hi, out double r_lo) {
  const double n = floor(ax * 0.6366197723675814LF + 0.5LF);
  precise double a = ax - n * kPio2Part1;  // exact
  precise double b = n * kPio2Part2;       // exact
  precise double s1 = a - b;
  precise double e1 = (a - s1) - b;
  precise double c = n * kPio2Part3;  // exact
  precise double s2 = s1 - c;
  precise double e2 = (s1 - s2) - c;
  precise double lo = (e1 + e2) - n * kPio2Part4;
  r_hi = s2 + lo;
  r_lo = lo - (r_hi - s2);
  return int(uint(n) & 3u);
}

int reduce_pio2(double ax, out double r_hi, out double r_lo) {
  if (ax <= 0.7853981633974483LF) {
    r_hi = ax;
    r_lo = 0.0LF;
    return 0;
  }
  if (ax < 1647099.3291652855LF) return reduce_medium(ax, r_hi, r_lo);
  return reduce_large(ax, r_hi, r_lo);
}

// 1/(2k+1)! and 1/(2k)! for k = 1..12: the series through r^25 leave
// below 2^-60 of sin and cos for |r| <= pi/4.
const double kInvOddFactorials[12] = double[12](
    0.16666666666666666LF, 0.008333333333333333LF, 0.0001984126984126984LF,
    2.7557319223985893e-06LF, 2.505210838544172e-08LF, 1.6059043836821613e-10LF,
    7.647163731819816e-13LF, 2.8114572543455206e-15LF, 8.22063524662433e-18LF,
    1.9572941063391263e-20LF, 3.868170170630684e-23LF, 6.446950284384474e-26LF);
const double kInvEvenFactorials[12] = double[12](
    0.5LF, 0.041666666666666664LF, 0.001388888888888889LF, 2.48015873015873e-05LF,
    2.755731922398589e-07LF, 2.08767569878681e-09LF, 1.1470745597729725e-11LF,
    4.779477332387385e-14LF, 1.5619206968586225e-16LF, 4.110317623312165e-19LF,
    8.896791392450574e-22LF, 1.6117375710961184e-24LF);

// sin(r_hi + r_lo) = r_hi + (r_hi t P(t) + r_lo (1 - t/2)), t = r_hi^2.
double sin_reduced(double r_hi, double r_lo) {
  const double t = r_hi * r_hi;
  double poly = 0.0LF;
  for (int k = 11; k >= 0; --k) poly = kInvOddFactorials[k] - t * poly;
  precise double tail = r_lo * (1.0LF - 0.5LF * t) - r_hi * t * poly;
  precise double s = r_hi + tail;
  return s;
}

// cos(r_hi + r_lo) = 1 + (t Q(t) - r_hi r_lo), t = r_hi^2.
double cos_reduced(double r_hi, double r_lo) {
  const double t = r_hi * r_hi;
  double poly = 0.0LF;
  for (int k = 11; k >= 0; --k) poly = kInvEvenFactorials[k] - t * poly;
  precise double tail = -t * poly - r_hi * r_lo;
  precise double c = 1.0LF + tail;
  return c;
}

double double_sin(double x) {
  if (double_is_nan(x) || double_is_inf(x)) return double_quiet_nan();
  if (!double_is_nonzero(x)) return x;
  double r_hi, r_lo;
  const int n = reduce_pio2(abs(x), r_hi, r_lo);
  double s;
  switch (n) {
    case 0: s = sin_reduced(r_hi, r_lo); break;
    case 1: s = cos_reduced(r_hi, r_lo); break;
    case 2: s = -sin_reduced(r_hi, r_lo); break;
    default: s = -cos_reduced(r_hi, r_lo); break;
  }
  return double_is_negative(x) ? -s : s;
}

double double_cos(double x) {
  if (double_is_nan(x) || double_is_inf(x)) return double_quiet_nan();
  double r_hi, r_lo;
  const int n = reduce_pio2(abs(x), r_hi, r_lo);
  switch (n) {
    case 0: return cos_reduced(r_hi, r_lo);
    case 1: return -sin_reduced(r_hi, r_lo);
    case 2: return -cos_reduced(r_hi, r_lo);
    default: return sin_reduced(r_hi, r_lo);
  }
}

double double_tan(double x) {
  if (double_is_nan(x) || double_is_inf(x)) return double_quiet_nan();
  if (!double_is_nonzero(x)) return x;
  double r_hi, r_lo;
  const int n = reduce_pio2(abs(x), r_hi, r_lo);
  const double s = sin_reduced(r_hi, r_lo), c = cos_reduced(r_hi, r_lo);
  const double t = (n & 1) == 0 ? s / c : -c / s;
  return double_is_negative(x) ? -t : t;
}
#endif  // TESSERA_DOUBLES_TRIG_GLSL
