// Loads and stores of any tensor dtype through buffers.glsl's views, the
// dtype given as runtime DType's value (a specialization constant in the
// callers, so each switch folds away). Conversions round as the CPU
// device's convert<T> does: f16 and bf16 through float, their bits and
// f64's built by hand (half_rounding.glsl for f16: rounding independent of
// the driver; no bfloat16 or float64 arithmetic needed).
// Include after buffers.glsl.
#ifndef TESSERA_DTYPE_ACCESS_GLSL
#define TESSERA_DTYPE_ACCESS_GLSL
#include "half_rounding.glsl"

const uint kDTypeBool = 0, kDTypeU8 = 1, kDTypeI8 = 2, kDTypeI16 = 3, kDTypeI32 = 4,
           kDTypeI64 = 5, kDTypeF16 = 6, kDTypeBF16 = 7, kDTypeF32 = 8, kDTypeF64 = 9;

// BFloat16::from_float: round to nearest even, NaN kept quiet.
uint bf16_bits_of(float f) {
  const uint x = floatBitsToUint(f);
  const uint rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return (x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : rounded;
}

// The IEEE double nearest to v (ties to even), as bits.
uint64_t f64_bits_of(int64_t v) {
  if (v == 0) return 0ul;
  const uint64_t sign = v < 0 ? (1ul << 63) : 0ul;
  uint64_t m = v < 0 ? uint64_t(-v) : uint64_t(v);
  const uint hi = uint(m >> 32);
  int top = hi != 0u ? 32 + findMSB(hi) : findMSB(uint(m));
  uint64_t mant;
  if (top <= 52) {
    mant = m << (52 - top);
  } else {
    const int shift = top - 52;
    mant = m >> shift;
    const uint64_t rem = m & ((1ul << shift) - 1ul);
    const uint64_t half_ulp = 1ul << (shift - 1);
    if (rem > half_ulp || (rem == half_ulp && (mant & 1ul) != 0ul)) ++mant;
    if (mant == (1ul << 53)) {
      mant >>= 1;
      ++top;
    }
  }
  return sign | (uint64_t(top + 1023) << 52) | (mant & ((1ul << 52) - 1ul));
}

// Element i of `kind` at addr = v, converted as convert<T>(int64_t) does.
void store_integer(uint kind, uvec2 addr, int i, int64_t v) {
  switch (kind) {
    case kDTypeBool: Bytes(addr).v[i] = uint8_t(v != 0l ? 1u : 0u); break;
    case kDTypeU8:
    case kDTypeI8: Bytes(addr).v[i] = uint8_t(uint(v) & 0xFFu); break;
    case kDTypeI16: Shorts(addr).v[i] = uint16_t(uint(v) & 0xFFFFu); break;
    case kDTypeI32: Ints(addr).v[i] = int(v); break;
    case kDTypeI64: Int64s(addr).v[i] = v; break;
    case kDTypeF16: Shorts(addr).v[i] = uint16_t(f16_bits_of(float(v))); break;
    case kDTypeBF16: Shorts(addr).v[i] = uint16_t(bf16_bits_of(float(v))); break;
    case kDTypeF32: Floats(addr).v[i] = float(v); break;
    default: Int64s(addr).v[i] = int64_t(f64_bits_of(v)); break;  // f64
  }
}

// The raw bits of element i (zero-extended).
uint64_t load_bits(uint kind, uvec2 addr, int i) {
  switch (kind) {
    case kDTypeBool:
    case kDTypeU8:
    case kDTypeI8: return uint64_t(uint(Bytes(addr).v[i]));
    case kDTypeI16:
    case kDTypeF16:
    case kDTypeBF16: return uint64_t(uint(Shorts(addr).v[i]));
    case kDTypeI32:
    case kDTypeF32: return uint64_t(Words(addr).v[i]);
    default: return uint64_t(Int64s(addr).v[i]);  // i64, f64
  }
}

// Whether element i is nonzero (-0.0 is zero, NaN is not), from its bits.
bool is_nonzero(uint kind, uvec2 addr, int i) {
  const uint64_t bits = load_bits(kind, addr, i);
  switch (kind) {
    case kDTypeF16:
    case kDTypeBF16: return (bits & 0x7FFFul) != 0ul;
    case kDTypeF32: return (bits & 0x7FFFFFFFul) != 0ul;
    case kDTypeF64: return (bits & 0x7FFFFFFFFFFFFFFFul) != 0ul;
    default: return bits != 0ul;
  }
}
#endif  // TESSERA_DTYPE_ACCESS_GLSL
