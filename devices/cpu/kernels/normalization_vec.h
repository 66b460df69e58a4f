// Small vectorizable building blocks of the normalization kernels (softmax,
// layer norm): an exp for non-positive float arguments and multi-lane
// reductions. Written as plain loops over fixed-size lane arrays so that
// GCC vectorizes them at -O3 -march=native without -ffast-math (which would
// change the rounding of every other kernel).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <immintrin.h>

// The vector width. Every source compiles for x86-64-v3 (AVX2): 8 floats.
// The sources built for AVX-512 as well (their names end in _avx512, see
// unary_rows_avx512.cc; called only where CPUID says so) define
// TESSERA_CPU_VEC_512 and get 16. Each width lives in its own inline
// namespace, so that the two builds of an inline function are two
// symbols: the linker can never hand AVX-512 code to an AVX2 caller.
#if defined(TESSERA_CPU_VEC_512)
#define TESSERA_CPU_VEC_ABI avx512
#define TESSERA_CPU_VEC_BYTES 64
#else
#define TESSERA_CPU_VEC_ABI avx2
#define TESSERA_CPU_VEC_BYTES 32
#endif

namespace tessera::cpu::vec {
inline namespace TESSERA_CPU_VEC_ABI {

inline constexpr int kLanes = 16;  // partial sums of the scalar-typed loops
inline constexpr int kVec = TESSERA_CPU_VEC_BYTES / 4;  // floats per vector below

// GCC / Clang vector extensions: plain loops over lane arrays do not
// vectorize reliably (the exp below stayed scalar), these always do. 32
// bytes unless built for AVX-512: wider types are split badly on AVX2
// machines (compares went scalar).
typedef float f32v __attribute__((vector_size(TESSERA_CPU_VEC_BYTES)));
typedef int32_t i32v __attribute__((vector_size(TESSERA_CPU_VEC_BYTES)));

inline f32v loadv(const float* p) {
  f32v v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(float* p, f32v v) { std::memcpy(p, &v, sizeof v); }
inline f32v splatv(float x) { return f32v{} + x; }

// e^r for x = k ln2 + r, |r| <= ln2 / 2, k = round(x / ln2) (returned in
// k; |x| below 2^22 ln2). ln2 is split in a short high part (k * hi is
// exact) and a low correction; e^r from its Taylor series to degree 7
// (truncation error r^8 / 8! < 5e-9).
inline f32v exp_reduced(f32v x, i32v& k) {
  // Round to nearest integer by adding and subtracting 1.5 * 2^23.
  const f32v shifter = splatv(12582912.0f);
  const f32v kf = (x * 1.4426950408889634f + shifter) - shifter;
  const f32v r = (x - kf * 0.693359375f) - kf * -2.12194440e-4f;
  f32v p = splatv(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  k = __builtin_convertvector(kf, i32v);
  return p;
}

// e^x for x <= 0 (softmax arguments x - max), relative error below 1e-7:
// 2^k e^r (exp_reduced). Arguments below -87 would need a denormal 2^k:
// they give 0, which is below f32's resolution of any softmax row (whose
// max element contributes 1). Positive x are not clamped (callers never
// pass them; up to 88 they would still come out right). NaN arguments
// give garbage: callers check for NaN first.
// e^x for -87 <= x <= 88, where 2^k is a normal float: exp_reduced and its
// power of two, with no range checks (callers that know their range, such
// as gelu's |x| <= 2 sqrt 2 path, skip exp_nonpositive's).
inline f32v exp_normal_range(f32v x) {
  i32v k;
  const f32v p = exp_reduced(x, k);
  return p * reinterpret_cast<f32v>((k + 127) << 23);
}

inline f32v exp_nonpositive(f32v x) {
  const f32v lo = splatv(-87.0f), zero = splatv(0.0f);
  const f32v xc = x < lo ? lo : x;
  return x < lo ? zero : exp_normal_range(xc);
}

inline float exp_nonpositive(float x) {
  float buf[kLanes] = {x};
  storev(buf, exp_nonpositive(loadv(buf)));
  return buf[0];
}

// The lanes of mask (each all ones or all zeros, as vector compares give)
// that are set, one bit each: one instruction where the width has one.
inline unsigned lane_bits(i32v mask) {
#if TESSERA_CPU_VEC_BYTES == 64
  return _mm512_movepi32_mask(reinterpret_cast<__m512i>(mask));
#else
  return static_cast<unsigned>(_mm256_movemask_ps(reinterpret_cast<__m256>(mask)));
#endif
}
inline bool all_lanes(i32v mask) { return lane_bits(mask) == (1u << kVec) - 1; }
inline bool any_lane(i32v mask) { return lane_bits(mask) != 0; }

// The sum of a vector's lanes as a tree of halvings: a short row's sums
// (a layer norm over 32 channels) spent more time in a lane-by-lane chain
// of adds than in their loops.
inline float hsumv(f32v v) {
#if TESSERA_CPU_VEC_BYTES == 64
  const __m512 x = reinterpret_cast<__m512>(v);
  __m256 h = _mm256_add_ps(_mm512_castps512_ps256(x),
                           _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
#else
  __m256 h = reinterpret_cast<__m256>(v);
#endif
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}

// Max of x[0..n) (n >= 1) and whether any element is NaN.
inline float max_and_nan(const float* __restrict x, int64_t n, bool& has_nan) {
  f32v m = splatv(x[0]);
  i32v nan_seen = {};
  int64_t i = 0;
  for (; i + kVec <= n; i += kVec) {
    const f32v v = loadv(x + i);
    m = v > m ? v : m;
    nan_seen |= v != v;
  }
  float best = m[0];
  bool any_nan = false;
  for (int j = 0; j < kVec; ++j) {
    best = m[j] > best ? m[j] : best;
    any_nan |= nan_seen[j] != 0;
  }
  for (; i < n; ++i) {
    best = x[i] > best ? x[i] : best;
    any_nan |= x[i] != x[i];
  }
  has_nan = any_nan;
  return best;
}

// Sum of x[0..n) with partial sums per lane (kVec for float, kLanes
// otherwise): vectorizes, and the error grows like n / lanes rather than n.
template <typename C>
inline C lane_sum(const C* __restrict x, int64_t n) {
  if constexpr (std::is_same_v<C, float>) {
    // Four vector accumulators: one would wait on the previous add's
    // latency every vector (a layer norm row's sums ran at a third of
    // the core's add rate).
    f32v p0 = {}, p1 = {}, p2 = {}, p3 = {};
    int64_t i = 0;
    for (; i + 4 * kVec <= n; i += 4 * kVec) {
      p0 += loadv(x + i);
      p1 += loadv(x + i + kVec);
      p2 += loadv(x + i + 2 * kVec);
      p3 += loadv(x + i + 3 * kVec);
    }
    for (; i + kVec <= n; i += kVec) p0 += loadv(x + i);
    float s = 0;
    for (; i < n; ++i) s += x[i];
    return s + hsumv((p0 + p1) + (p2 + p3));
  } else {
    C part[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) part[j] += x[i + j];
    }
    C s = 0;
    for (; i < n; ++i) s += x[i];
    for (int j = 0; j < kLanes; ++j) s += part[j];
    return s;
  }
}

// Sum of (x[i] - c)^2.
template <typename C>
inline C lane_sum_sq_dev(const C* __restrict x, int64_t n, C c) {
  if constexpr (std::is_same_v<C, float>) {
    f32v p0 = {}, p1 = {}, p2 = {}, p3 = {};  // as lane_sum
    int64_t i = 0;
    for (; i + 4 * kVec <= n; i += 4 * kVec) {
      const f32v d0 = loadv(x + i) - c, d1 = loadv(x + i + kVec) - c;
      const f32v d2 = loadv(x + i + 2 * kVec) - c, d3 = loadv(x + i + 3 * kVec) - c;
      p0 += d0 * d0;
      p1 += d1 * d1;
      p2 += d2 * d2;
      p3 += d3 * d3;
    }
    for (; i + kVec <= n; i += kVec) {
      const f32v d = loadv(x + i) - c;
      p0 += d * d;
    }
    float s = 0;
    for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
    return s + hsumv((p0 + p1) + (p2 + p3));
  } else {
    C part[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const C d = x[i + j] - c;
        part[j] += d * d;
      }
    }
    C s = 0;
    for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
    for (int j = 0; j < kLanes; ++j) s += part[j];
    return s;
  }
}

}  // namespace TESSERA_CPU_VEC_ABI
}  // namespace tessera::cpu::vec
