// Philox4x32-10 on the GPU: the same function as the runtime's host
// generator (runtime/random/philox.h), so that element i of a random op
// has the same value on every device for one seed. The two must stay
// identical; tests compare the CUDA device's draws with the CPU's bit for
// bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/random/philox.h"

namespace tessera::cuda {

struct Block4 {
  uint32_t v[4];
};

__device__ __forceinline__ Block4 philox(uint64_t seed, uint64_t counter_lo, uint64_t counter_hi) {
  constexpr uint32_t kMul0 = kPhiloxMul0, kMul1 = kPhiloxMul1;
  constexpr uint32_t kWeyl0 = kPhiloxWeyl0, kWeyl1 = kPhiloxWeyl1;
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kMul0, c0), lo0 = kMul0 * c0;
    const uint32_t hi1 = __umulhi(kMul1, c2), lo1 = kMul1 * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0;
    const uint32_t n2 = hi0 ^ c3 ^ k1;
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {{c0, c1, c2, c3}};
}

// The 64-bit value of lanes (2*(i%2), 2*(i%2)+1) of block offset + i/2
// (randint, bernoulli, uniform f64).
__device__ __forceinline__ uint64_t philox_bits64(const PhiloxState& s, uint64_t i) {
  const Block4 b = philox(s.seed, s.offset + i / 2, 0);
  const int lane = static_cast<int>(i % 2) * 2;
  return (static_cast<uint64_t>(b.v[lane]) << 32) | b.v[lane + 1];
}

// philox_normal: Box-Muller on element i's own block (counter high word 1).
__device__ __forceinline__ double philox_normal_d(const PhiloxState& s, uint64_t i) {
  const Block4 b = philox(s.seed, s.offset + i, 1);
  const double u1 = (static_cast<double>(((static_cast<uint64_t>(b.v[0]) << 32) | b.v[1]) >> 11) + 1.0) *
                    0x1.0p-53;
  const double u2 = static_cast<double>(((static_cast<uint64_t>(b.v[2]) << 32) | b.v[3]) >> 11) * 0x1.0p-53;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
}

}  // namespace tessera::cuda
