// The body of the reduction shaders (kernels/reduce.cc): one output element
// = an op over the reduced elements of the input. reduce_f32acc.comp
// accumulates in float (f32 / f16 / bf16 input), reduce_i64acc.comp in int64
// (integer and bool input), reduce_f64acc.comp in double (f64 input, where
// the device has shaderFloat64; exp and log from doubles_math.glsl);
// each defines ACC_T and one of ACC_FLOAT, ACC_INT, ACC_DOUBLE and includes
// this file (the _sg variants also USE_SUBGROUPS).
//
// The input's kept dims (one output each, up to 3 after coalescing) and
// reduced dims (up to 3) come as sizes and element strides; the output is
// addressed through the kept dims' own strides, plus `out_chunk_stride`
// times the chunk (partial results of a split reduction). Modes (constant
// 4):
//  0 one invocation per output, a serial loop (short reductions, or
//    columns whose kept dim is innermost so neighbouring invocations read
//    neighbouring elements); work-group x covers outputs, y is the chunk;
//  1 one work group per (chunk, output): the invocations stride over the
//    chunk's reduced elements and combine through a shared-memory tree;
//    work-group x is the chunk, y loops over outputs (> 65535 outputs);
//  2 as 1, but f32 sums combine with subgroupAdd first;
//  3 (the _sg variants) one subgroup per output: lanes stride over the
//    reduced elements and combine through subgroupAdd or shuffles.
#include "buffers.glsl"
#ifdef ACC_DOUBLE
#include "doubles.glsl"
#include "doubles_math.glsl"
#endif
#include "float_math.glsl"
#include "half_rounding.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kInType = 0;
layout(constant_id = 3) const uint kOutType = 0;
layout(constant_id = 4) const uint kMode = 0;
layout(constant_id = 5) const uint kFinal = 0;
// 1: the argument's index comes from aux (the partial indices of a split
// argmax / argmin), not from the position in the reduction.
layout(constant_id = 6) const uint kIndexFromAux = 0;

// kernels/reduce.cc: ShaderOp, ElemType, FinalStep.
const uint kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAll = 4, kAny = 5, kAbsSum = 6,
           kSquaredDevSum = 7, kAbsMax = 8, kExpSum = 9, kArgMax = 10, kArgMin = 11;
const uint kF32 = 0, kF16 = 1, kI32 = 2, kI64 = 3, kU8 = 4, kBool = 5, kI8 = 6, kI16 = 7,
           kBF16 = 8, kF64 = 9;
// kRaw: the accumulator as is; kDivide: / scale (mean); kSqrt (norm 2);
// kLogShift: log(acc) + shift (logsumexp); kVar: / scale, NaN for zero
// elements; kStd: sqrt of kVar.
const uint kRaw = 0, kDivide = 1, kSqrt = 2, kLogShift = 3, kVar = 4, kStd = 5;

const int kMaxRank = 3;  // kReduceMaxRank in kernels/reduce.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;    // values (0: none, argmax / argmin without values)
  uvec2 in_addr;
  uvec2 aux_addr;    // per-output f32 centre (kSquaredDevSum, kExpSum) or partial indices
  uvec2 index_addr;  // argmax / argmin: int64 indices, laid out like out
  uint numel_out;
  uint numel_red;
  uint chunk_len;        // reduced elements per chunk (modes 0 to 2)
  uint out_chunk_stride;
  float scale;           // divisor of kDivide, kVar, kStd
  float scale_lo;        // the divisor's rest: scale + scale_lo is it to 48 bits (f64)
  uint ranks;            // kept rank | reduced rank << 8
  uint kept_sizes[kMaxRank];
  int kept_in[kMaxRank];
  int kept_out[kMaxRank];
  uint red_sizes[kMaxRank];
  int red_in[kMaxRank];
} p;

const bool kIsArg = kOp == kArgMax || kOp == kArgMin;
const uint kNoIndex = 0xffffffffu;

// -- Loads and stores ---------------------------------------------------------

ACC_T load_in(int at) {
#if defined(ACC_DOUBLE)
  return Doubles(p.in_addr).v[at];
#elif defined(ACC_FLOAT)
  if (kInType == kF16) return float(Halfs(p.in_addr).v[at]);
  if (kInType == kBF16) return uintBitsToFloat(uint(Shorts(p.in_addr).v[at]) << 16);
  return Floats(p.in_addr).v[at];
#else
  switch (kInType) {
    case kI32: return int64_t(Ints(p.in_addr).v[at]);
    case kI64: return Int64s(p.in_addr).v[at];
    case kI8: {
      const int b = int(Bytes(p.in_addr).v[at]);
      return int64_t(b >= 128 ? b - 256 : b);
    }
    case kI16: {
      const int s = int(Shorts(p.in_addr).v[at]);
      return int64_t(s >= 32768 ? s - 65536 : s);
    }
    default: return int64_t(Bytes(p.in_addr).v[at]);  // u8, bool
  }
#endif
}

void store_out(int at, ACC_T v) {
  switch (kOutType) {
#if defined(ACC_DOUBLE)
    case kF64: Doubles(p.out_addr).v[at] = v; break;
    case kBool: Bytes(p.out_addr).v[at] = uint8_t(double_is_nonzero(v) ? 1 : 0); break;
#elif defined(ACC_FLOAT)
    case kF32: Floats(p.out_addr).v[at] = v; break;
    case kF16: Shorts(p.out_addr).v[at] = uint16_t(f16_bits_of(v)); break;
    case kBF16: {  // the top half, rounded to nearest even (runtime/core/half.h)
      const uint x = floatBitsToUint(v);
      const uint b = (x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u
                                                     : (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
      Shorts(p.out_addr).v[at] = uint16_t(b);
      break;
    }
    case kBool: Bytes(p.out_addr).v[at] = uint8_t(v != 0.0 ? 1 : 0); break;
#else
    case kI64: Int64s(p.out_addr).v[at] = v; break;
    case kI32: Ints(p.out_addr).v[at] = int(v); break;
    case kI16: Shorts(p.out_addr).v[at] = uint16_t(int(v) & 0xffff); break;
    case kBool: Bytes(p.out_addr).v[at] = uint8_t(v != 0 ? 1 : 0); break;
    default: Bytes(p.out_addr).v[at] = uint8_t(int(v) & 0xff); break;  // u8, i8
#endif
  }
}

// -- The op -------------------------------------------------------------------

#if defined(ACC_DOUBLE)
bool acc_is_nan(double v) { return double_is_nan(v); }
bool acc_is_zero(double v) { return !double_is_nonzero(v); }  // NaN is non-zero
#define ACC_LOWEST double_of_bits(0xfff0000000000000UL)
#define ACC_HIGHEST double_of_bits(0x7ff0000000000000UL)
#define ACC_ZERO 0.0LF
#define ACC_ONE 1.0LF
#elif defined(ACC_FLOAT)
bool acc_is_nan(float v) { return is_nan(v); }
bool acc_is_zero(float v) { return is_zero(v); }  // on the bits: NaN is non-zero
#define ACC_LOWEST (-kInf)
#define ACC_HIGHEST kInf
#define ACC_ZERO 0.0
#define ACC_ONE 1.0
#else
bool acc_is_nan(int64_t v) { return false; }
bool acc_is_zero(int64_t v) { return v == 0; }
#define ACC_LOWEST int64_t(0x8000000000000000ul)
#define ACC_HIGHEST int64_t(0x7ffffffffffffffful)
#define ACC_ZERO int64_t(0)
#define ACC_ONE int64_t(1)
#endif

ACC_T identity() {
  switch (kOp) {
    case kProd:
    case kAll: return ACC_ONE;
    case kMax:
    case kArgMax: return ACC_LOWEST;
    case kMin:
    case kArgMin: return ACC_HIGHEST;
    default: return ACC_ZERO;
  }
}

// The value an element contributes (centre: the output's mean or max).
ACC_T map_value(ACC_T x, ACC_T centre) {
  switch (kOp) {
    case kAll:
    case kAny: return acc_is_zero(x) ? ACC_ZERO : ACC_ONE;
    case kAbsSum:
    case kAbsMax: return abs(x);
#if defined(ACC_FLOAT) || defined(ACC_DOUBLE)
    case kSquaredDevSum: {
      const ACC_T d = x - centre;
      return d * d;
    }
#endif
#if defined(ACC_FLOAT)
    case kExpSum: return c_exp(x - centre);
#elif defined(ACC_DOUBLE)
    case kExpSum: return double_exp(x - centre);
#endif
    default: return x;
  }
}

// NaN propagates through max and min (the first NaN of a and b), tested
// before the comparison (GLSL's max and min leave NaN undefined, and a
// driver may rewrite a comparison as if there were none).
ACC_T combine(ACC_T a, ACC_T b) {
  switch (kOp) {
    case kProd: return a * b;
    case kMax:
    case kAbsMax:
      if (acc_is_nan(a)) return a;
      if (acc_is_nan(b)) return b;
      return b > a ? b : a;
    case kMin:
      if (acc_is_nan(a)) return a;
      if (acc_is_nan(b)) return b;
      return b < a ? b : a;
    case kAll: return min(a, b);  // of 0 and 1 (map_value), never NaN
    case kAny: return max(a, b);
    default: return a + b;
  }
}

// argmax / argmin: (a, ia) is preferred over (b, ib). The first NaN wins
// over everything, then the extreme value, then the smaller index; so the
// combination order does not change the result.
bool arg_prefers(ACC_T a, uint ia, ACC_T b, uint ib) {
  const bool na = acc_is_nan(a), nb = acc_is_nan(b);
  if (na || nb) return na && (!nb || ia < ib);
  if (a == b) return ia < ib;
  return kOp == kArgMax ? a > b : a < b;
}

// -- Coordinates --------------------------------------------------------------

uint kept_rank() { return p.ranks & 0xffu; }
uint red_rank() { return p.ranks >> 8; }

// Input and output element offsets of output o (row-major over the kept dims).
void output_offsets(uint o, out int in_at, out int out_at) {
  in_at = 0;
  out_at = 0;
  for (int d = int(kept_rank()) - 1; d >= 0; --d) {
    const uint q = d > 0 ? o / p.kept_sizes[d] : 0u;
    const int k = int(o - q * p.kept_sizes[d]);
    o = q;
    in_at += k * p.kept_in[d];
    out_at += k * p.kept_out[d];
  }
}

// Input element offset of reduced element r (row-major over the reduced dims).
int reduced_offset(uint r) {
  if (red_rank() == 1) return int(r) * p.red_in[0];  // the common case, no division
  int at = 0;
  for (int d = int(red_rank()) - 1; d >= 0; --d) {
    const uint q = d > 0 ? r / p.red_sizes[d] : 0u;
    at += int(r - q * p.red_sizes[d]) * p.red_in[d];
    r = q;
  }
  return at;
}

// -- Results ------------------------------------------------------------------

ACC_T finish(ACC_T acc, ACC_T centre) {
#if defined(ACC_DOUBLE)
  const double scale = double(p.scale) + double(p.scale_lo);
  switch (kFinal) {
    case kDivide: return acc / scale;
    case kSqrt: return double_sqrt(acc);
    case kLogShift: return double_log(acc) + centre;
    case kVar:
    case kStd: {
      double v;
      if (p.numel_red == 0 || double_is_nan(acc)) v = double_of_bits(0x7ff8000000000000UL);
      else if (scale == 0.0LF) v = acc > 0.0LF ? ACC_HIGHEST : double_of_bits(0x7ff8000000000000UL);
      else v = acc / scale;
      return kFinal == kStd ? double_sqrt(v) : v;
    }
    default: return acc;
  }
#elif defined(ACC_FLOAT)
  switch (kFinal) {
    case kDivide: return acc / p.scale;
    case kSqrt: return c_sqrt(acc);
    case kLogShift: return c_log(acc) + centre;
    case kVar:
    case kStd: {
      float v;
      if (p.numel_red == 0 || is_nan(acc)) v = kNaN;
      else if (p.scale == 0.0) v = acc > 0.0 ? kInf : kNaN;  // q / 0, as C
      else v = acc / p.scale;
      return kFinal == kStd ? c_sqrt(v) : v;
    }
    default: return acc;
  }
#else
  return acc;
#endif
}

void write_result(int out_at, ACC_T acc, uint index, ACC_T centre) {
  if (kIsArg) {
    if (any(notEqual(p.out_addr, uvec2(0)))) store_out(out_at, acc);
    // int64 indices as two words (the index is below 2^31).
    Words(p.index_addr).v[2 * out_at] = index;
    Words(p.index_addr).v[2 * out_at + 1] = 0u;
  } else {
    store_out(out_at, finish(acc, centre));
  }
}

// The centre an output's elements are shifted by: the mean for the squared
// deviations (none, 0, for norm 2); the max for exp sums, 0 when it is not
// finite (nothing to shift; a NaN input makes the sum NaN by itself).
ACC_T centre_of(uint o) {
#ifdef ACC_DOUBLE
  if ((kOp == kSquaredDevSum || kOp == kExpSum || kFinal == kLogShift) &&
      any(notEqual(p.aux_addr, uvec2(0)))) {
    const double c = Doubles(p.aux_addr).v[o];
    if (kOp == kSquaredDevSum) return c;
    return double_is_nan(c) || double_is_inf(c) ? 0.0LF : c;
  }
#endif
#ifdef ACC_FLOAT
  if ((kOp == kSquaredDevSum || kOp == kExpSum || kFinal == kLogShift) &&
      any(notEqual(p.aux_addr, uvec2(0)))) {
    const float c = Floats(p.aux_addr).v[o];
    if (kOp == kSquaredDevSum) return c;
    return is_nan(c) || is_inf(c) ? 0.0 : c;
  }
#endif
  return ACC_ZERO;
}

uint element_index(int at, uint r) {
  return kIndexFromAux != 0 ? Words(p.aux_addr).v[2 * at] : r;
}

// -- Mode 0: one invocation per output ----------------------------------------

// Reduced elements in blocks of this many, each block combined into the
// total: a serial f32 sum's error then grows like n / kBlock + kBlock.
const uint kBlock = 32;

// Folds reduced elements first, first + step, ... (< end) of the output
// whose input starts at in_base into (acc, index): what one invocation of
// a work group or subgroup contributes before they are combined.
void fold_strided(int in_base, ACC_T centre, uint first, uint end, uint step, inout ACC_T acc,
                  inout uint index) {
  for (uint r = first; r < end; r += step) {
    const int at = in_base + reduced_offset(r);
    const ACC_T x = load_in(at);
    if (kIsArg) {
      const uint i = element_index(at, r);
      if (arg_prefers(x, i, acc, index)) {
        acc = x;
        index = i;
      }
    } else {
      acc = combine(acc, map_value(x, centre));
    }
  }
}

// Folds the reduced elements begin + first, begin + first + step, ... (<
// end) of the output whose input starts at in_base, as fold_strided does,
// except that f32 elements lying contiguous and 16-byte aligned are read
// as vec4s: a quarter of the loads, each four times as wide, which is what
// keeps enough bytes in flight for a GPU's memory (scalar loads left a
// full sum at about half of torch's bandwidth on an H200). Each invocation
// then folds 4 interleaved partials and combines them at the end: a fixed
// order, so the result is the same every run.
#ifdef ACC_FLOAT
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Float4s { vec4 v[]; };

bool dense_vec4(int in_base, uint begin) {
  return kInType == kF32 && !kIsArg && red_rank() == 1 && p.red_in[0] == 1 &&
         p.in_addr.x % 16u == 0u && (uint(in_base) + begin) % 4u == 0u;
}
#endif

void fold_range(int in_base, ACC_T centre, uint begin, uint end, uint first, uint step,
                inout ACC_T acc, inout uint index) {
#ifdef ACC_FLOAT
  if (begin < end && dense_vec4(in_base, begin)) {
    const uint vectors = (end - begin) / 4u;
    const uint q0 = (uint(in_base) + begin) / 4u;
    vec4 part = vec4(identity());
    for (uint k = first; k < vectors; k += step) {
      const vec4 x = Float4s(p.in_addr).v[q0 + k];
      for (int j = 0; j < 4; ++j) part[j] = combine(part[j], map_value(x[j], centre));
    }
    acc = combine(acc, combine(combine(part[0], part[1]), combine(part[2], part[3])));
    begin += vectors * 4u;  // what is left: fewer than 4 elements
  }
#endif
  fold_strided(in_base, centre, begin + first, end, step, acc, index);
}

void serial_main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint rr = red_rank();
  // The innermost reduced dim is a plain loop; the outer ones divide once
  // per row. Work-group y is the chunk of a split column reduction.
  const uint inner = rr > 0 ? p.red_sizes[rr - 1] : 1u;
  const int inner_stride = rr > 0 ? p.red_in[rr - 1] : 0;
  const uint begin = gl_WorkGroupID.y * p.chunk_len;
  const uint end = min(p.numel_red, begin + p.chunk_len);
  for (uint o = gl_GlobalInvocationID.x; o < p.numel_out; o += step) {
    int in_base, out_at;
    output_offsets(o, in_base, out_at);
    const ACC_T centre = centre_of(o);
    ACC_T acc = identity();
    uint index = kNoIndex;
    uint r = begin;
    while (r < end) {
      const uint row = r / inner;
      const uint row_end = min(end, (row + 1) * inner);
      const uint row_begin = row * inner;
      const int row_at = in_base + reduced_offset(row_begin);
      for (; r < row_end; r += kBlock) {
        const uint block_end = min(row_end, r + kBlock);
        ACC_T block = identity();
        for (uint i = r; i < block_end; ++i) {
          const int at = row_at + int(i - row_begin) * inner_stride;
          const ACC_T x = load_in(at);
          if (kIsArg) {
            const uint ix = element_index(at, i);
            if (arg_prefers(x, ix, acc, index)) {
              acc = x;
              index = ix;
            }
          } else {
            block = combine(block, map_value(x, centre));
          }
        }
        if (!kIsArg) acc = combine(acc, block);
      }
      r = row_end;
    }
    write_result(out_at + int(gl_WorkGroupID.y * p.out_chunk_stride), acc, index, centre);
  }
}

// -- Modes 1 and 2: one work group per (chunk, output) ------------------------

shared ACC_T s_acc[gl_WorkGroupSize.x];
shared uint s_index[gl_WorkGroupSize.x];

void group_main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group_size = gl_WorkGroupSize.x;
  const uint begin = gl_WorkGroupID.x * p.chunk_len;
  const uint end = min(p.numel_red, begin + p.chunk_len);
  for (uint o = gl_WorkGroupID.y; o < p.numel_out; o += gl_NumWorkGroups.y) {
    int in_base, out_at;
    output_offsets(o, in_base, out_at);
    const ACC_T centre = centre_of(o);
    ACC_T acc = identity();
    uint index = kNoIndex;
    fold_range(in_base, centre, begin, end, tid, group_size, acc, index);
    uint width = group_size;
#if defined(USE_SUBGROUPS) && defined(ACC_FLOAT)
    if (kMode == 2) {  // sums: the host picks mode 2 only for them
      acc = subgroupAdd(acc);
      if (subgroupElect()) s_acc[gl_SubgroupID] = acc;
      width = gl_NumSubgroups;
    } else {
      s_acc[tid] = acc;
      s_index[tid] = index;
    }
#else
    s_acc[tid] = acc;
    s_index[tid] = index;
#endif
    barrier();
    // A tree over the first `width` slots, any width, in a fixed order.
    while (width > 1) {
      const uint half_width = (width + 1) / 2;
      if (tid < width - half_width) {
        const uint other = tid + half_width;
        if (kIsArg) {
          if (arg_prefers(s_acc[other], s_index[other], s_acc[tid], s_index[tid])) {
            s_acc[tid] = s_acc[other];
            s_index[tid] = s_index[other];
          }
        } else {
          s_acc[tid] = combine(s_acc[tid], s_acc[other]);
        }
      }
      barrier();
      width = half_width;
    }
    if (tid == 0) {
      write_result(out_at + int(gl_WorkGroupID.x * p.out_chunk_stride), s_acc[0], s_index[0],
                   centre);
    }
    barrier();  // the next output reuses the shared slots
  }
}

// -- Mode 3: one subgroup per output ----------------------------------------

#ifdef USE_SUBGROUPS
#if defined(ACC_FLOAT)
ACC_T shuffle_xor(ACC_T v, uint offset) { return subgroupShuffleXor(v, offset); }
#elif defined(ACC_DOUBLE)
// As two words, as int64 below.
ACC_T shuffle_xor(ACC_T v, uint offset) {
  return packDouble2x32(subgroupShuffleXor(unpackDouble2x32(v), offset));
}
#else
// int64 as two words: 64-bit subgroup ops need an extension lavapipe lacks.
ACC_T shuffle_xor(ACC_T v, uint offset) {
  return int64_t(packUint2x32(subgroupShuffleXor(unpackUint2x32(uint64_t(v)), offset)));
}
#endif

// Combines acc (and index) across the subgroup: subgroupAdd for f32 sums,
// else a butterfly of shuffles (the combine is symmetric, so every lane
// ends with the same value whatever the order).
ACC_T subgroup_combine(ACC_T acc, inout uint index) {
#ifdef ACC_FLOAT
  if (kOp == kSum || kOp == kAbsSum || kOp == kSquaredDevSum || kOp == kExpSum) {
    return subgroupAdd(acc);
  }
#endif
  for (uint offset = gl_SubgroupSize / 2; offset > 0; offset /= 2) {
    const ACC_T other = shuffle_xor(acc, offset);
    if (kIsArg) {
      const uint other_index = subgroupShuffleXor(index, offset);
      if (arg_prefers(other, other_index, acc, index)) {
        acc = other;
        index = other_index;
      }
    } else {
      acc = combine(acc, other);
    }
  }
  return acc;
}

// Rows of moderate length: no barriers, and a work group serves
// gl_NumSubgroups outputs at a time.
void subgroup_main() {
  const uint lane = gl_SubgroupInvocationID;
  const uint step = gl_NumWorkGroups.x * gl_NumSubgroups;
  for (uint o = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; o < p.numel_out; o += step) {
    int in_base, out_at;
    output_offsets(o, in_base, out_at);
    const ACC_T centre = centre_of(o);
    ACC_T acc = identity();
    uint index = kNoIndex;
    fold_range(in_base, centre, 0, p.numel_red, lane, gl_SubgroupSize, acc, index);
    acc = subgroup_combine(acc, index);
    if (subgroupElect()) write_result(out_at, acc, index, centre);
  }
}
#endif

void main() {
#ifdef USE_SUBGROUPS
  if (kMode == 3) {
    subgroup_main();
    return;
  }
#endif
  if (kMode == 0) {
    serial_main();
  } else {
    group_main();
  }
}
