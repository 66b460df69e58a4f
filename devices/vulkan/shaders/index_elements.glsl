// Element access for the indexing shaders (gather, scatter, index_put,
// masked_fill, triangle, embedding): moves copy raw 1, 2, 4 or 8-byte
// elements, so one pipeline per element size serves every dtype; the
// accumulating forms (scatter add, index_put accumulate) add per element
// kind, with the CPU kernels' rounding. Include after buffers.glsl.
//
// With INDEX_WORDS_ONLY defined (the *_words.comp shaders) only 4 and
// 8-byte elements and the f32 / 32 / 64-bit integer adds exist, read as
// 32-bit words, so the module needs no 8/16/64-bit shader types and runs
// on every device; the full set needs them (has_sized_shader_types).
#include "half_rounding.glsl"

// dst[d] = src[s] for elements of `size` bytes (a specialization constant
// at every call, so the switch folds away).
void move_element(uint size, uvec2 dst, int d, uvec2 src, int s) {
  switch (size) {
#ifndef INDEX_WORDS_ONLY
    case 1: Bytes(dst).v[d] = Bytes(src).v[s]; break;
    case 2: Shorts(dst).v[d] = Shorts(src).v[s]; break;
#endif
    case 4: Words(dst).v[d] = Words(src).v[s]; break;
    default: DoubleWords(dst).v[d] = DoubleWords(src).v[s]; break;
  }
}

// dst[d] = raw bits `value` (the low size bytes of it).
void store_bits(uint size, uvec2 dst, int d, uvec2 value) {
  switch (size) {
#ifndef INDEX_WORDS_ONLY
    case 1: Bytes(dst).v[d] = uint8_t(value.x); break;
    case 2: Shorts(dst).v[d] = uint16_t(value.x); break;
#endif
    case 4: Words(dst).v[d] = value.x; break;
    default: DoubleWords(dst).v[d] = value; break;
  }
}

// Element kinds of add_element (kernels/index_elements.h, AddKind).
// Integers add with wrap-around, which is the same for signed and unsigned
// operands of one width; bool adds as logical or.
const uint kAddF32 = 0, kAddF16 = 1, kAddBF16 = 2, kAddWrap8 = 3, kAddWrap16 = 4,
           kAddWrap32 = 5, kAddWrap64 = 6, kAddBool = 7;

// f32 -> bfloat16 bits, round to nearest even, NaN kept quiet (as
// BFloat16::from_float).
uint bf16_bits(float f) {
  const uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// dst[d] += src[s] as the CPU's scatter add: half types add in f32 and
// round once.
void add_element(uint kind, uvec2 dst, int d, uvec2 src, int s) {
  switch (kind) {
    case kAddF32: Floats(dst).v[d] = Floats(dst).v[d] + Floats(src).v[s]; break;
    case kAddWrap32: Words(dst).v[d] = Words(dst).v[d] + Words(src).v[s]; break;
    case kAddWrap64: {  // two words with carry: no 64-bit types needed
      const uvec2 a = DoubleWords(dst).v[d], b = DoubleWords(src).v[s];
      const uint low = a.x + b.x;
      DoubleWords(dst).v[d] = uvec2(low, a.y + b.y + (low < a.x ? 1u : 0u));
      break;
    }
#ifndef INDEX_WORDS_ONLY
    case kAddF16:
      Shorts(dst).v[d] = uint16_t(f16_bits_of(float(Halfs(dst).v[d]) + float(Halfs(src).v[s])));
      break;
    case kAddBF16: {
      const float a = uintBitsToFloat(uint(Shorts(dst).v[d]) << 16);
      const float b = uintBitsToFloat(uint(Shorts(src).v[s]) << 16);
      Shorts(dst).v[d] = uint16_t(bf16_bits(a + b));
      break;
    }
    case kAddWrap8: Bytes(dst).v[d] = uint8_t(uint(Bytes(dst).v[d]) + uint(Bytes(src).v[s])); break;
    case kAddWrap16:
      Shorts(dst).v[d] = uint16_t(uint(Shorts(dst).v[d]) + uint(Shorts(src).v[s]));
      break;
    case kAddBool: {
      const bool either = Bytes(dst).v[d] != uint8_t(0) || Bytes(src).v[s] != uint8_t(0);
      Bytes(dst).v[d] = uint8_t(either ? 1 : 0);
      break;
    }
#endif
    default: break;
  }
}

// An int64 index read as its low word: the front end has range-checked
// every index to [-size, size) with size < 2^31 (the kernels check), so
// the low word is the value; negative ones count from the end.
int wrapped_index(uvec2 addr, int at, int size) {
  const int k = int(DoubleWords(addr).v[at].x);
  return k < 0 ? k + size : k;
}

// Floating element kinds of load_float / store_float (kernels/
// index_elements.h, FloatKind): the dtypes embedding backward and nll_loss
// compute in f32.
const uint kFloatF32 = 0, kFloatF16 = 1, kFloatBF16 = 2;

#ifndef INDEX_WORDS_ONLY
float load_float(uint kind, uvec2 addr, int at) {
  switch (kind) {
    case kFloatF32: return Floats(addr).v[at];
    case kFloatF16: return float(Halfs(addr).v[at]);
    default: return uintBitsToFloat(uint(Shorts(addr).v[at]) << 16);
  }
}

void store_float(uint kind, uvec2 addr, int at, float v) {
  switch (kind) {
    case kFloatF32: Floats(addr).v[at] = v; break;
    case kFloatF16: Shorts(addr).v[at] = uint16_t(f16_bits_of(v)); break;
    default: Shorts(addr).v[at] = uint16_t(bf16_bits(v)); break;
  }
}
#endif
