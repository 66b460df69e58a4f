// Element access for the indexing shaders (gather, scatter, index_put,
// masked_fill, triangle, embedding): moves copy raw 1, 2, 4 or 8-byte
// elements, so one pipeline per element size serves every dtype; the
// accumulating forms (scatter add and its other reductions, index_put
// accumulate) add or fold per element kind, with the CPU kernels' rounding. Include after buffers.glsl.
//
// With INDEX_WORDS_ONLY defined (the *_words.comp shaders) only 4 and
// 8-byte elements and the f32 / 32 / 64-bit integer adds exist, read as
// 32-bit words, so the module needs no 8/16/64-bit shader types and runs
// on every device; the full set needs them (has_sized_shader_types).
// With INDEX_F64 defined (the *_f64.comp shaders) f64 adds and folds exist
// too, in double, and the module needs shaderFloat64.
#include "half_rounding.glsl"
#ifdef INDEX_F64
#include "doubles.glsl"
#endif

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
           kAddWrap32 = 5, kAddWrap64 = 6, kAddBool = 7, kAddF64 = 8;

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
#ifdef INDEX_F64
    case kAddF64: Doubles(dst).v[d] = Doubles(dst).v[d] + Doubles(src).v[s]; break;
#endif
    default: break;
  }
}

// Fold ops of fold_element, numbered as kernels::ScatterReduce (0, kNone,
// is a move and never reaches it).
const uint kFoldAdd = 1, kFoldMul = 2, kFoldMax = 3, kFoldMin = 4;

// Whether b replaces a in a max (min) fold: b larger (smaller), or b NaN.
// A NaN a stays, since comparisons with NaN are false: NaN wins from
// either side, as in the CPU kernel.
bool float_fold_takes(uint op, float a, float b) {
  return isnan(b) || (op == kFoldMax ? a < b : b < a);
}

// The same for int64 elements held as (low, high) words.
bool int64_fold_takes(uint op, uvec2 a, uvec2 b) {
  const uvec2 x = op == kFoldMax ? a : b, y = op == kFoldMax ? b : a;  // takes when x < y
  return int(x.y) < int(y.y) || (x.y == y.y && x.x < y.x);
}

// An 8 or 16-bit integer's value from its low `bits` bits, sign-extended
// when is_signed.
int small_int_value(uint bits_value, uint bits, bool is_signed) {
  const uint shift = 32u - bits;
  return is_signed ? int(bits_value << shift) >> shift : int(bits_value);
}

// Whether b replaces a in a max (min) fold of 8 or 16-bit integers.
bool small_int_fold_takes(uint op, uint a, uint b, uint bits, bool is_signed) {
  const int x = small_int_value(a, bits, is_signed), y = small_int_value(b, bits, is_signed);
  return op == kFoldMax ? x < y : y < x;
}

// dst[d] (op)= src[s] as the CPU's scatter reductions, rounding to the
// element kind after the step. Max and min pick one of the two elements,
// so they copy bits; integers multiply with wrap-around. is_signed tells
// max and min how to read the 8 and 16-bit integer kinds (int8/int16 or
// uint8), which add and multiply alike either way.
void fold_element(uint kind, uint op, bool is_signed, uvec2 dst, int d, uvec2 src, int s) {
  if (op == kFoldAdd) {
    add_element(kind, dst, d, src, s);
    return;
  }
  switch (kind) {
    case kAddF32: {
      const float a = Floats(dst).v[d], b = Floats(src).v[s];
      if (op == kFoldMul) {
        Floats(dst).v[d] = a * b;
      } else if (float_fold_takes(op, a, b)) {
        Floats(dst).v[d] = b;
      }
      break;
    }
    case kAddWrap32: {  // int32
      const uint a = Words(dst).v[d], b = Words(src).v[s];
      if (op == kFoldMul) {
        Words(dst).v[d] = a * b;
      } else if (op == kFoldMax ? int(a) < int(b) : int(b) < int(a)) {
        Words(dst).v[d] = b;
      }
      break;
    }
    case kAddWrap64: {  // int64, as two words
      const uvec2 a = DoubleWords(dst).v[d], b = DoubleWords(src).v[s];
      if (op == kFoldMul) {
        uint high, low;
        umulExtended(a.x, b.x, high, low);
        DoubleWords(dst).v[d] = uvec2(low, high + a.x * b.y + a.y * b.x);
      } else if (int64_fold_takes(op, a, b)) {
        DoubleWords(dst).v[d] = b;
      }
      break;
    }
#ifndef INDEX_WORDS_ONLY
    case kAddF16: {
      const float a = float(Halfs(dst).v[d]), b = float(Halfs(src).v[s]);
      if (op == kFoldMul) {
        Shorts(dst).v[d] = uint16_t(f16_bits_of(a * b));
      } else if (float_fold_takes(op, a, b)) {
        Shorts(dst).v[d] = Shorts(src).v[s];
      }
      break;
    }
    case kAddBF16: {
      const float a = uintBitsToFloat(uint(Shorts(dst).v[d]) << 16);
      const float b = uintBitsToFloat(uint(Shorts(src).v[s]) << 16);
      if (op == kFoldMul) {
        Shorts(dst).v[d] = uint16_t(bf16_bits(a * b));
      } else if (float_fold_takes(op, a, b)) {
        Shorts(dst).v[d] = Shorts(src).v[s];
      }
      break;
    }
    case kAddWrap8: {
      const uint a = uint(Bytes(dst).v[d]), b = uint(Bytes(src).v[s]);
      if (op == kFoldMul) {
        Bytes(dst).v[d] = uint8_t(a * b);
      } else if (small_int_fold_takes(op, a, b, 8u, is_signed)) {
        Bytes(dst).v[d] = uint8_t(b);
      }
      break;
    }
    case kAddWrap16: {
      const uint a = uint(Shorts(dst).v[d]), b = uint(Shorts(src).v[s]);
      if (op == kFoldMul) {
        Shorts(dst).v[d] = uint16_t(a * b);
      } else if (small_int_fold_takes(op, a, b, 16u, is_signed)) {
        Shorts(dst).v[d] = uint16_t(b);
      }
      break;
    }
    case kAddBool: {
      const bool a = Bytes(dst).v[d] != uint8_t(0), b = Bytes(src).v[s] != uint8_t(0);
      Bytes(dst).v[d] = uint8_t((op == kFoldMax ? a || b : a && b) ? 1 : 0);
      break;
    }
#endif
#ifdef INDEX_F64
    case kAddF64: {
      const double a = Doubles(dst).v[d], b = Doubles(src).v[s];
      // NaN is tested on the bits (a driver may compile comparisons as if
      // NaN could not occur): a NaN a stays, a NaN b wins.
      if (op == kFoldMul) {
        Doubles(dst).v[d] = a * b;
      } else if (!double_is_nan(a) &&
                 (double_is_nan(b) || (op == kFoldMax ? a < b : b < a))) {
        Doubles(dst).v[d] = b;
      }
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
