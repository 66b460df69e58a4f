// Typed element access for the elementwise shaders that take an element
// kind as a specialization constant (kernels/element_kind.h, ElementKind):
// 0 f32, 1 f16, 2 i32, 3 i64, 4 bool, 5 u8, 6 i8, 7 i16, 8 bf16. Each kind
// computes in one of three domains: float (f32, f16, bf16: loaded as float,
// rounded once at the store), int (i32 and the narrower integers and bool: loaded as a
// sign- or zero-extended int, stored truncated, which wraps exactly as C++
// conversions do) and long (i64). The kind is a constant at pipeline
// creation, so every switch below folds away. Needs 8/16/64-bit types.
#include "buffers.glsl"
#include "half_rounding.glsl"

const uint kF32 = 0, kF16 = 1, kI32 = 2, kI64 = 3, kBool = 4, kU8 = 5, kI8 = 6, kI16 = 7,
    kBF16 = 8;
const uint kFloatDomain = 0, kIntDomain = 1, kLongDomain = 2;

uint domain_of(uint kind) {
  if (kind == kF32 || kind == kF16 || kind == kBF16) return kFloatDomain;
  return kind == kI64 ? kLongDomain : kIntDomain;
}

// Integer kinds' width in bits (shifts of a narrow kind saturate at its width).
int bits_of(uint kind) {
  switch (kind) {
    case kBool:
    case kU8:
    case kI8: return 8;
    case kI16: return 16;
    case kI64: return 64;
    default: return 32;
  }
}

// bf16 is the top half of an f32; rounding to it is to nearest even, NaN
// kept quiet (BFloat16::from_float).
float bf16_to_float(uint16_t b) { return uintBitsToFloat(uint(b) << 16); }
uint16_t float_to_bf16(float v) {
  const uint x = floatBitsToUint(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float load_float(uint kind, uvec2 addr, int at) {
  if (kind == kF16) return float(Halfs(addr).v[at]);
  if (kind == kBF16) return bf16_to_float(Shorts(addr).v[at]);
  return Floats(addr).v[at];
}

int load_int(uint kind, uvec2 addr, int at) {
  switch (kind) {
    case kBool:
    case kU8: return int(Bytes(addr).v[at]);
    case kI8: return int(SignedBytes(addr).v[at]);
    case kI16: return int(Int16s(addr).v[at]);
    default: return Ints(addr).v[at];
  }
}

int64_t load_long(uvec2 addr, int at) { return Int64s(addr).v[at]; }

bool load_bool(uvec2 addr, int at) { return Bytes(addr).v[at] != uint8_t(0); }

void store_float(uint kind, uvec2 addr, int at, float v) {
  if (kind == kF16) Shorts(addr).v[at] = uint16_t(f16_bits_of(v));
  else if (kind == kBF16) Shorts(addr).v[at] = float_to_bf16(v);
  else Floats(addr).v[at] = v;
}

// Truncates to the kind's width; bool stores v != 0.
void store_int(uint kind, uvec2 addr, int at, int v) {
  switch (kind) {
    case kBool: Bytes(addr).v[at] = uint8_t(v != 0 ? 1 : 0); break;
    case kU8: Bytes(addr).v[at] = uint8_t(v); break;
    case kI8: SignedBytes(addr).v[at] = int8_t(v); break;
    case kI16: Int16s(addr).v[at] = int16_t(v); break;
    default: Ints(addr).v[at] = v; break;
  }
}

void store_long(uvec2 addr, int at, int64_t v) { Int64s(addr).v[at] = v; }

void store_bool(uvec2 addr, int at, bool v) { Bytes(addr).v[at] = uint8_t(v ? 1 : 0); }

// A Scalar argument as the kernel encodes it (kernels/element_kind.h,
// encode_scalar): f32 bits in .x for the float domain, else the value
// converted to the kind and sign-extended to 64 bits (.x low, .y high).
float scalar_float(uvec2 s) { return uintBitsToFloat(s.x); }
int scalar_int(uvec2 s) { return int(s.x); }
int64_t scalar_long(uvec2 s) { return int64_t(packUint2x32(s)); }

// A float rounded to the kind's storage precision (f16, bf16), for the
// ops whose CPU kernel rounds intermediate steps.
float in_storage_precision(uint kind, float v) {
  if (kind == kF16) return rounded_to_f16(v);
  if (kind == kBF16) return bf16_to_float(float_to_bf16(v));
  return v;
}
