// Runs of consecutive Philox4x32-10 blocks computed in vector lanes, the
// same bits as runtime/random/philox.h's philox4x32_10 one block at a
// time. Dropout draws one block for every two elements; scalar, its 10
// rounds of 32-bit multiplies took most of a T5 training step's dropout
// (60 ms a step for 34 dropout masks).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/random/philox.h"

namespace tessera::cpu {

// Blocks per vector of lanes (AVX2: 8 32-bit lanes).
inline constexpr int kPhiloxLanes = 8;

namespace philox_detail {

// The 64-bit products a[l] * k, their high and low words, per lane:
// vpmuludq multiplies the even lanes, so the odd ones go shifted down.
inline void mul_hi_lo(__m256i a, __m256i k, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, k);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), k);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

}  // namespace philox_detail

// out[4 j + w] = word w of philox4x32_10(seed, first + j, 0), j < count.
inline void philox_blocks(uint64_t seed, uint64_t first, int64_t count, uint32_t* out) {
  using philox_detail::mul_hi_lo;
  const __m256i mul0 = _mm256_set1_epi32(static_cast<int>(kPhiloxMul0));
  const __m256i mul1 = _mm256_set1_epi32(static_cast<int>(kPhiloxMul1));
  int64_t j = 0;
  for (; j + kPhiloxLanes <= count; j += kPhiloxLanes) {
    alignas(32) uint32_t lo_words[kPhiloxLanes], hi_words[kPhiloxLanes];
    for (int l = 0; l < kPhiloxLanes; ++l) {
      const uint64_t counter = first + static_cast<uint64_t>(j + l);
      lo_words[l] = static_cast<uint32_t>(counter);
      hi_words[l] = static_cast<uint32_t>(counter >> 32);
    }
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_words));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_words));
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      __m256i hi0, lo0, hi1, lo1;
      mul_hi_lo(c0, mul0, hi0, lo0);
      mul_hi_lo(c2, mul1, hi1, lo1);
      const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1),
                                          _mm256_set1_epi32(static_cast<int>(k0)));
      const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3),
                                          _mm256_set1_epi32(static_cast<int>(k1)));
      c1 = lo1;
      c3 = lo0;
      c0 = n0;
      c2 = n2;
      k0 += kPhiloxWeyl0;
      k1 += kPhiloxWeyl1;
    }
    alignas(32) uint32_t words[4][kPhiloxLanes];
    _mm256_store_si256(reinterpret_cast<__m256i*>(words[0]), c0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(words[1]), c1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(words[2]), c2);
    _mm256_store_si256(reinterpret_cast<__m256i*>(words[3]), c3);
    for (int l = 0; l < kPhiloxLanes; ++l) {
      uint32_t* block = out + 4 * (j + l);
      for (int w = 0; w < 4; ++w) block[w] = words[w][l];
    }
  }
  for (; j < count; ++j) {
    const PhiloxBlock b = philox4x32_10(seed, first + static_cast<uint64_t>(j), 0);
    for (int w = 0; w < 4; ++w) out[4 * j + w] = b[w];
  }
}

}  // namespace tessera::cpu
