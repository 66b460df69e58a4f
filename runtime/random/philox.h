// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator. Value i of a random op is a pure
// function of (seed, offset, i), so every device, thread count and chunking
// produces the same numbers for one seed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace tessera {

struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // in 128-bit blocks already consumed
};

using PhiloxBlock = std::array<uint32_t, 4>;

// The round's multipliers and the key's Weyl increments, for every
// implementation of the rounds (this one, the CPU's vector lanes, CUDA's;
// the Vulkan shader's GLSL repeats them in philox.glsl).
inline constexpr uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;

inline PhiloxBlock philox4x32_10(uint64_t seed, uint64_t counter_lo, uint64_t counter_hi) {
  constexpr uint32_t kMul0 = kPhiloxMul0, kMul1 = kPhiloxMul1;
  constexpr uint32_t kWeyl0 = kPhiloxWeyl0, kWeyl1 = kPhiloxWeyl1;
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

// Element i of a random tensor uses block (state.offset + i / 4), lane i % 4.
inline uint32_t philox_uint32(const PhiloxState& s, uint64_t i) {
  return philox4x32_10(s.seed, s.offset + i / 4, 0)[i % 4];
}

// Uniform in [0, 1) with 24 random bits (every float in the grid is exact).
inline float philox_uniform_float(const PhiloxState& s, uint64_t i) {
  return static_cast<float>(philox_uint32(s, i) >> 8) * 0x1.0p-24f;
}

// Uniform in [0, 1) with `bits` (<= 24) random bits, so that the value is
// exact in a float type with a `bits`-bit significand and never rounds up
// to 1: 11 bits for float16, 8 for bfloat16.
inline float philox_uniform_float_bits(const PhiloxState& s, uint64_t i, int bits) {
  return static_cast<float>(philox_uint32(s, i) >> (32 - bits)) * std::ldexp(1.0f, -bits);
}

// Uniform in [0, 1) with 53 random bits, from two lanes of block i / 2.
inline double philox_uniform_double(const PhiloxState& s, uint64_t i) {
  PhiloxBlock b = philox4x32_10(s.seed, s.offset + i / 2, 0);
  uint32_t hi = b[(i % 2) * 2], lo = b[(i % 2) * 2 + 1];
  uint64_t bits = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

// Standard normal for element i: Box-Muller on two lanes of block
// (offset + i), using its own block so any element is computed alone.
inline double philox_normal(const PhiloxState& s, uint64_t i) {
  PhiloxBlock b = philox4x32_10(s.seed, s.offset + i, 1);
  double u1 = (static_cast<double>(((static_cast<uint64_t>(b[0]) << 32) | b[1]) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  double u2 = static_cast<double>(((static_cast<uint64_t>(b[2]) << 32) | b[3]) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Blocks a random op on n elements consumes (an upper bound for all three
// functions above), so the next op starts on fresh counters.
inline uint64_t philox_blocks_for(uint64_t n) { return n; }

}  // namespace tessera
