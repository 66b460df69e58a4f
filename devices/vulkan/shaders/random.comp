#version 450
// Random ops on Philox4x32-10 (philox.glsl), bit-identical in their random
// bits to the CPU device: element i is the flat row-major index of out,
// mapped to memory through sizes and strides. One invocation per Philox
// block: 4 elements for uniform (lane i % 4 of block offset + i / 4), 2 for
// randint and bernoulli (lanes 2*(i%2), 2*(i%2)+1 of block offset + i / 2),
// 1 for normal (block offset + i with counter_hi 1). kOp (specialization
// constant 1): 0 uniform f32, 1 uniform f16, 2 normal f32, 3 normal f16,
// 4 randint (out any dtype, kOutDType), 5 bernoulli (out kOutDType, p
// kProbDType: f16, bf16, f32 or f64).
#include "buffers.glsl"
#include "dtype_access.glsl"
#include "float_math.glsl"
#include "philox.glsl"
#include "double_float.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kOutDType = 8;
layout(constant_id = 3) const uint kProbDType = 8;

const int kMaxRank = 5;  // kRandomMaxRank in kernels/random.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 p_addr;   // bernoulli's probabilities
  uvec2 seed;
  uvec2 offset;   // in blocks
  uvec2 low;      // randint: int64
  uvec2 range;    // randint: uint64
  uint numel;
  uint rank;
  float a;        // uniform: low; normal: mean
  float b;        // uniform: high - low; normal: std
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int p_strides[kMaxRank];
} p;

// Element offsets of flat row-major index i in out (.x) and p (.y).
ivec2 offsets_of(uint i) {
  uint rem = i;
  ivec2 o = ivec2(0);
  for (int d = int(p.rank) - 1; d > 0; --d) {
    const uint q = rem / p.sizes[d];
    const int k = int(rem - q * p.sizes[d]);
    rem = q;
    o += k * ivec2(p.out_strides[d], p.p_strides[d]);
  }
  if (p.rank > 0) o += int(rem) * ivec2(p.out_strides[0], p.p_strides[0]);
  return o;
}

const float kTwoToMinus53 = 1.1102230246251565e-16;  // 2^-53

// cos(2 pi u) for u in [0, 1): reduced to r in [-1/8, 1/8] turns around a
// quarter turn, then Taylor series (f32 accurate on [-pi/4, pi/4]).
float cos_turns(float u) {
  const float quarter = round(u * 4.0);
  const float a = 6.2831853071795865 * (u - quarter * 0.25);
  const float a2 = a * a;
  const float c = 1.0 + a2 * (-0.5 + a2 * (1.0 / 24.0 + a2 * (-1.0 / 720.0 + a2 * (1.0 / 40320.0 - a2 / 3628800.0))));
  const float s = a * (1.0 + a2 * (-1.0 / 6.0 + a2 * (1.0 / 120.0 + a2 * (-1.0 / 5040.0 + a2 / 362880.0))));
  switch (int(quarter) & 3) {
    case 0: return c;
    case 1: return -s;
    case 2: return -c;
    default: return s;
  }
}

// philox_normal in f32: Box-Muller on the two 53-bit uniforms of the block.
float standard_normal(uvec4 block) {
  // pack64 (GL_EXT_shader_explicit_arithmetic_types) puts .x low.
  const uint64_t b1 = pack64(block.yx) >> 11;  // (b[0] << 32 | b[1]) >> 11
  const uint64_t b2 = pack64(block.wz) >> 11;
  // u1 = (b1 + 1) 2^-53 in (0, 1]; near 1, log1p of the exact 1 - u1.
  const float u1 = float(b1 + 1ul) * kTwoToMinus53;
  const float log_u1 = u1 < 0.5 ? c_log(u1) : c_log1p(-float((1ul << 53) - 1ul - b1) * kTwoToMinus53);
  const float u2 = float(b2) * kTwoToMinus53;
  return c_sqrt(-2.0 * log_u1) * cos_turns(u2);
}

// a * b + c rounded once, from exact pieces (Vulkan does not promise that
// fma() is fused): the product and the first sum are exact double-floats,
// the small remainder is rounded to odd, so the last addition rounds as
// the exact sum would.
float fused_multiply_add(float a, float b, float c) {
  const DoubleFloat prod = df_two_prod(a, b);
  const DoubleFloat sum = df_two_sum(c, prod.hi);
  const DoubleFloat rest = df_two_sum(sum.lo, prod.lo);
  float tail = rest.hi;
  const uint bits = floatBitsToUint(tail);
  if (rest.lo != 0.0 && (bits & 1u) == 0u) {
    // Round to odd: one ulp away from zero when rest.lo adds to |tail|.
    tail = uintBitsToFloat((rest.lo > 0.0) == (tail > 0.0) ? bits + 1u : bits - 1u);
  }
  precise float result = sum.hi + tail;
  return result;
}

// ceil(prob * 2^53) for prob = m * 2^e, where prob * 2^53 = m * 2^shift.
uint64_t scaled_ceil(uint64_t m, int shift) {
  if (shift >= 0) return m << shift;
  if (shift <= -64) return m != 0ul ? 1ul : 0ul;
  return (m >> (-shift)) + ((m & ((1ul << (-shift)) - 1ul)) != 0ul ? 1ul : 0ul);
}

// T with (U < prob) == (bits53 < T) for U = bits53 * 2^-53: exact for
// every probability dtype, with no float64 arithmetic.
uint64_t bernoulli_threshold(int pi) {
  if (kProbDType == kDTypeF64) {
    const uvec2 w = DoubleWords(p.p_addr).v[pi];
    if ((w.y >> 31) != 0u) return 0ul;  // -0 (negative p never passes the front end)
    const int e = int((w.y >> 20) & 0x7FFu);
    const uint64_t mant = (uint64_t(w.y & 0xFFFFFu) << 32) | uint64_t(w.x);
    return e == 0 ? scaled_ceil(mant, 1 - 1022) : scaled_ceil(mant | (1ul << 52), e - 1022);
  }
  if (kProbDType == kDTypeF16) {
    const uint h = uint(Shorts(p.p_addr).v[pi]);
    if ((h >> 15) != 0u) return 0ul;
    const int e = int((h >> 10) & 0x1Fu);
    const uint64_t mant = uint64_t(h & 0x3FFu);
    return e == 0 ? scaled_ceil(mant, 1 + 28) : scaled_ceil(mant | 0x400ul, e + 28);
  }
  // f32, or bf16 as the upper half of an f32
  const uint x = kProbDType == kDTypeBF16 ? uint(Shorts(p.p_addr).v[pi]) << 16 : Words(p.p_addr).v[pi];
  if ((x >> 31) != 0u) return 0ul;
  const int e = int((x >> 23) & 0xFFu);
  const uint64_t mant = uint64_t(x & 0x7FFFFFu);
  return e == 0 ? scaled_ceil(mant, 1 - 97) : scaled_ceil(mant | 0x800000ul, e - 97);
}

void main() {
  const uint per_block = kOp <= 1 ? 4u : kOp <= 3 ? 1u : 2u;
  const uint blocks = (p.numel + per_block - 1u) / per_block;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < blocks; w += step) {
    const uvec2 counter_hi = kOp == 2 || kOp == 3 ? uvec2(1u, 0u) : uvec2(0u);
    const uvec4 block = philox4x32_10(p.seed, philox_counter(p.offset, w), counter_hi);
    for (uint lane = 0u; lane < per_block; ++lane) {
      const uint i = w * per_block + lane;
      if (i >= p.numel) break;
      const ivec2 o = offsets_of(i);
      if (kOp <= 1) {
        // As many random bits as the dtype's significand holds.
        const int bits = kOp == 0 ? 24 : 11;
        const float u = float(block[lane] >> (32 - bits)) * exp2(float(-bits));
        const float v = fused_multiply_add(p.b, u, p.a);
        if (kOp == 0) {
          Floats(p.out_addr).v[o.x] = v;
        } else {
          Shorts(p.out_addr).v[o.x] = uint16_t(f16_bits_of(v));
        }
      } else if (kOp <= 3) {
        const float v = p.a + p.b * standard_normal(block);
        if (kOp == 2) {
          Floats(p.out_addr).v[o.x] = v;
        } else {
          Shorts(p.out_addr).v[o.x] = uint16_t(f16_bits_of(v));
        }
      } else {
        const uint64_t r = (uint64_t(block[lane * 2u]) << 32) | uint64_t(block[lane * 2u + 1u]);
        if (kOp == 4) {
          store_integer(kOutDType, p.out_addr, o.x, int64_t(pack64(p.low) + r % pack64(p.range)));
        } else {
          store_integer(kOutDType, p.out_addr, o.x, (r >> 11) < bernoulli_threshold(o.y) ? 1l : 0l);
        }
      }
    }
  }
}
