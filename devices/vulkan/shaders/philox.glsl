// Philox4x32-10 as runtime/random/philox.h specifies it, bit for bit: the
// 32x32->64 products come from umulExtended, the 64-bit key and counter
// travel as uvec2 (low word first), so value i of a random op matches the
// CPU device for one (seed, offset).

const uint kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
const uint kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;

// philox4x32_10(seed, counter_lo, counter_hi): 64-bit values as (lo, hi).
uvec4 philox4x32_10(uvec2 seed, uvec2 counter_lo, uvec2 counter_hi) {
  uint c0 = counter_lo.x, c1 = counter_lo.y, c2 = counter_hi.x, c3 = counter_hi.y;
  uint k0 = seed.x, k1 = seed.y;
  for (int round = 0; round < 10; ++round) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(kPhiloxMul0, c0, hi0, lo0);
    umulExtended(kPhiloxMul1, c2, hi1, lo1);
    const uint n0 = hi1 ^ c1 ^ k0;
    const uint n2 = hi0 ^ c3 ^ k1;
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  return uvec4(c0, c1, c2, c3);
}

// offset + block as a 64-bit counter (offset as (lo, hi)).
uvec2 philox_counter(uvec2 offset, uint block) {
  uint carry;
  const uint lo = uaddCarry(offset.x, block, carry);
  return uvec2(lo, offset.y + carry);
}
