// tanh and sigmoid of float vectors (the LSTM and GRU cells' hot loops),
// on the softmax kernels' vector exp (normalization_vec.h). glibc's scalar
// tanhf costs about 10 ns an element; these run 8 lanes at a time within a
// few ulp of the exact value. NaN passes through, signs of zero are kept.
#pragma once

#include <climits>
#include <cstdint>

#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/parallel.h"

namespace tessera::cpu::vec {

inline i32v splat_sign_mask() { return i32v{} + INT32_MIN; }
inline i32v bitsv(f32v v) { return reinterpret_cast<i32v>(v); }
inline f32v floatsv(i32v v) { return reinterpret_cast<f32v>(v); }

// tanh(x) = sign(x) t(|x|): below 0.35 the odd Taylor series to x^13
// (the next term is below 1e-9 of the value), above it (1 - e) / (1 + e)
// with e = exp(-2 |x|) <= 0.5, so the subtraction loses nothing.
inline f32v tanh_v(f32v x) {
  const i32v sign = bitsv(x) & splat_sign_mask();
  const f32v a = floatsv(bitsv(x) & ~splat_sign_mask());
  const f32v a2 = a * a;
  f32v poly = splatv(21844.0f / 6081075.0f);
  poly = poly * a2 - 1382.0f / 155925.0f;
  poly = poly * a2 + 62.0f / 2835.0f;
  poly = poly * a2 - 17.0f / 315.0f;
  poly = poly * a2 + 2.0f / 15.0f;
  poly = poly * a2 - 1.0f / 3.0f;
  poly = a + a * a2 * poly;
  const f32v e = exp_nonpositive(a * -2.0f);
  const f32v large = (1.0f - e) / (1.0f + e);
  const f32v t = a < 0.35f ? poly : large;
  const f32v signed_t = floatsv(bitsv(t) | sign);
  return x != x ? x : signed_t;
}

// sigmoid(x) = 1 / (1 + e^-x), as e / (1 + e) with e = e^x for negative x
// (no overflow, no cancellation).
inline f32v sigmoid_v(f32v x) {
  const f32v a = floatsv(bitsv(x) & ~splat_sign_mask());
  const f32v e = exp_nonpositive(-a);
  const f32v r = (x < 0.0f ? e : splatv(1.0f)) / (1.0f + e);
  return x != x ? x : r;
}

// y[i] = f(x[i]) over contiguous floats, vector by vector, on the calling
// thread; y may be x.
template <typename F>
void map_row(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kVec <= n; i += kVec) storev(y + i, f(loadv(x + i)));
  if (i < n) {
    float buf[kVec] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    const f32v r = f(loadv(buf));
    for (int64_t j = i; j < n; ++j) y[j] = r[j - i];
  }
}

// map_row over contiguous floats, in parallel above the elementwise grain.
template <typename F>
void map_contiguous(const float* x, float* y, int64_t n, F f) {
  parallel_for_range(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    map_row(x + begin, y + begin, end - begin, f);
  });
}

}  // namespace tessera::cpu::vec
