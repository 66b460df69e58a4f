// The body of the scan shaders (scan.comp, and scan_f64.comp, which defines
// SCAN_F64). Inclusive scans (kOp 0 sum, 1 prod) along one dim, in and out
// of kDType (DType's value: f32, f16, bf16 accumulate in double-float,
// close to the CPU's double for f32 and better than its float for halves;
// i32 and i64 in wrapping int64; f64, in scan_f64.comp, in double). A line is one position of the other dims
// (outer sizes and strides, coalesced) walked with in_step / out_step.
// kMode 0: one work group per line, for long contiguous lines: each
// invocation scans its run of the line, the run totals are scanned across
// the group in shared memory (Hillis-Steele), then each run is rescanned
// from its prefix. kMode 1: one invocation per line with a serial loop,
// for short or strided lines (neighbouring invocations read neighbouring
// lines, so loads stay coalesced along the inner dims). llvmpipe ends a
// loop nest after 65535 iterations in all (a hang guard), so
// kernels/scan.cc picks the mode whose loops stay below that.
#include "buffers.glsl"
#include "dtype_access.glsl"
#include "double_float.glsl"
#ifdef SCAN_F64
#include "doubles.glsl"
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kDType = 8;
layout(constant_id = 3) const uint kMode = 0;

const int kMaxRank = 6;  // kScanMaxRank in kernels/scan.cc
layout(push_constant, std430) uniform Params {
  uvec2 in_addr;
  uvec2 out_addr;
  uint len;
  uint lines;
  int in_step;   // element strides along the scanned dim
  int out_step;
  uint rank;     // of the outer (line) layout
  uint sizes[kMaxRank];
  int in_strides[kMaxRank];
  int out_strides[kMaxRank];
} p;

#ifdef SCAN_F64
// f64: a double, combined as the CPU kernel's double arithmetic.
struct Acc {
  double d;
};

Acc identity() { return Acc(kOp == 0 ? 0.0LF : 1.0LF); }
Acc combine(Acc a, Acc b) { return Acc(kOp == 0 ? a.d + b.d : a.d * b.d); }
Acc load(int o) { return Acc(Doubles(p.in_addr).v[o]); }
void store(int o, Acc a) { Doubles(p.out_addr).v[o] = a.d; }

shared double sh_double[gl_WorkGroupSize.x];
void put_shared(uint t, Acc a) { sh_double[t] = a.d; }
Acc get_shared(uint t) { return Acc(sh_double[t]); }
#else
const bool kInteger = kDType == kDTypeI32 || kDType == kDTypeI64;

// The accumulator: a double-float for floating dtypes, an int64 otherwise.
struct Acc {
  DoubleFloat f;
  int64_t i;
};

Acc identity() {
  const bool sum = kOp == 0;
  return Acc(DoubleFloat(sum ? 0.0 : 1.0, 0.0), sum ? 0l : 1l);
}

DoubleFloat df_mul(DoubleFloat a, DoubleFloat b) {
  const DoubleFloat prod = df_two_prod(a.hi, b.hi);
  precise float e = prod.lo + (a.hi * b.lo + a.lo * b.hi);
  return df_quick_two_sum(prod.hi, e);
}

bool is_finite(float x) { return (floatBitsToUint(x) & 0x7f800000u) != 0x7f800000u; }

Acc combine(Acc a, Acc b) {
  if (kInteger) return Acc(a.f, kOp == 0 ? a.i + b.i : a.i * b.i);
  // Infinities and NaN (and products beyond the split's range) make the
  // error terms NaN: those results are plain float arithmetic.
  const float plain = kOp == 0 ? a.f.hi + b.f.hi : a.f.hi * b.f.hi;
  if (!is_finite(plain)) return Acc(DoubleFloat(plain, 0.0), 0l);
  const DoubleFloat r = kOp == 0 ? df_add(a.f, b.f) : df_mul(a.f, b.f);
  return Acc(is_finite(r.hi) && is_finite(r.lo) ? r : DoubleFloat(plain, 0.0), 0l);
}

Acc load(int o) {
  switch (kDType) {
    case kDTypeI32: return Acc(DoubleFloat(0.0, 0.0), int64_t(Ints(p.in_addr).v[o]));
    case kDTypeI64: return Acc(DoubleFloat(0.0, 0.0), Int64s(p.in_addr).v[o]);
    case kDTypeF16: return Acc(DoubleFloat(float(Halfs(p.in_addr).v[o]), 0.0), 0l);
    case kDTypeBF16:
      return Acc(DoubleFloat(uintBitsToFloat(uint(Shorts(p.in_addr).v[o]) << 16), 0.0), 0l);
    default: return Acc(DoubleFloat(Floats(p.in_addr).v[o], 0.0), 0l);  // f32
  }
}

void store(int o, Acc a) {
  const float f = a.f.hi + a.f.lo;
  switch (kDType) {
    case kDTypeI32: Ints(p.out_addr).v[o] = int(a.i); break;
    case kDTypeI64: Int64s(p.out_addr).v[o] = a.i; break;
    case kDTypeF16: Shorts(p.out_addr).v[o] = uint16_t(f16_bits_of(f)); break;
    case kDTypeBF16: Shorts(p.out_addr).v[o] = uint16_t(bf16_bits_of(f)); break;
    default: Floats(p.out_addr).v[o] = f; break;
  }
}

#endif  // SCAN_F64

// Start offsets of line `line` in in (.x) and out (.y).
ivec2 line_start(uint line) {
  uint rem = line;
  ivec2 o = ivec2(0);
  for (int d = int(p.rank) - 1; d > 0; --d) {
    const uint q = rem / p.sizes[d];
    const int k = int(rem - q * p.sizes[d]);
    rem = q;
    o += k * ivec2(p.in_strides[d], p.out_strides[d]);
  }
  if (p.rank > 0) o += int(rem) * ivec2(p.in_strides[0], p.out_strides[0]);
  return o;
}

#ifndef SCAN_F64
shared float sh_hi[gl_WorkGroupSize.x];
shared float sh_lo[gl_WorkGroupSize.x];
shared int64_t sh_int[gl_WorkGroupSize.x];

void put_shared(uint t, Acc a) {
  if (kInteger) {
    sh_int[t] = a.i;
  } else {
    sh_hi[t] = a.f.hi;
    sh_lo[t] = a.f.lo;
  }
}

Acc get_shared(uint t) {
  if (kInteger) return Acc(DoubleFloat(0.0, 0.0), sh_int[t]);
  return Acc(DoubleFloat(sh_hi[t], sh_lo[t]), 0l);
}
#endif

void scan_lines_by_group() {
  const uint t = gl_LocalInvocationID.x;
  const uint size = gl_WorkGroupSize.x;
  const uint run = (p.len + size - 1u) / size;
  const uint begin = min(p.len, t * run), end = min(p.len, begin + run);
  for (uint line = gl_WorkGroupID.x; line < p.lines; line += gl_NumWorkGroups.x) {
    const ivec2 base = line_start(line);
    Acc total = identity();
    for (uint j = begin; j < end; ++j) total = combine(total, load(base.x + int(j) * p.in_step));
    put_shared(t, total);
    barrier();
    // Inclusive scan of the run totals: after the step with offset d,
    // slot t holds the combination of slots t - 2d + 1 .. t.
    for (uint d = 1u; d < size; d <<= 1) {
      const Acc other = t >= d ? get_shared(t - d) : identity();
      barrier();
      if (t >= d) put_shared(t, combine(other, get_shared(t)));
      barrier();
    }
    Acc acc = t > 0u ? get_shared(t - 1u) : identity();
    for (uint j = begin; j < end; ++j) {
      acc = combine(acc, load(base.x + int(j) * p.in_step));
      store(base.y + int(j) * p.out_step, acc);
    }
    barrier();  // shared memory is reused by the next line
  }
}

void scan_line_per_invocation() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint line = gl_GlobalInvocationID.x; line < p.lines; line += step) {
    const ivec2 base = line_start(line);
    Acc acc = identity();
    for (uint j = 0u; j < p.len; ++j) {
      acc = combine(acc, load(base.x + int(j) * p.in_step));
      store(base.y + int(j) * p.out_step, acc);
    }
  }
}

void main() {
  if (kMode == 0) {
    scan_lines_by_group();
  } else {
    scan_line_per_invocation();
  }
}
