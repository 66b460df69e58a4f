#version 450
// Fused attention, float32 (kernels/attention.cc), flash attention's
// tiling: a work group takes a block of kTile query rows (or, in mode 2,
// kTile key rows) and walks the other side kTile at a time. Its 256 lanes
// are the tile's kTile x kTile (row, column) pairs: each computes one
// score, with both operands staged through shared memory kChunk features
// at a time, so every key and value row a block reads serves kTile rows.
// No [L, S] score matrix exists; the forward keeps each row's logsumexp.
//   kMode 0, forward, per query block: s_ij = scale q_i.k_j + bias_ij; an
//     online softmax keeps each row's running max m and sum l, rescales
//     the output row by exp(m_old - m_new) and adds
//     sum_j exp(s_ij - m_new) v_j; at the end out_i /= l and
//     lse_i = m + log l (+inf and a zero row when no key is attended; NaN
//     for a row with a NaN score).
//   kMode 1, backward, per query block: delta_i = dO_i.O_i (stored for
//     mode 2) and dQ_i = scale sum_j dS_ij k_j, where
//     P_ij = exp(s_ij - lse_i) and dS_ij = P_ij (dO_i.v_j - delta_i).
//   kMode 2, backward, per key block of a query head (after mode 1):
//     dV_j = sum_i P_ij dO_i and dK_j = scale sum_i dS_ij q_i.
// With kCausal query i attends keys j <= i. Output rows are accumulated in
// place, each lane owning the features d = column, column + kTile, ... of
// its row.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "buffers.glsl"
#include "float_math.glsl"

layout(local_size_x_id = 0) in;  // 256: kTile x kTile (the host checks)
layout(constant_id = 1) const uint kMode = 0;
layout(constant_id = 2) const uint kCausal = 0;

const uint kTile = 16;
const uint kChunk = 32;  // features staged per step

layout(push_constant, std430) uniform Params {
  uvec2 q;         // [B, H, L, E]
  uvec2 k;         // [B, Hk, S, E]
  uvec2 v;         // [B, Hk, S, Ev]
  uvec2 bias;      // [B, H, L, S] through bias_strides; 0: none
  uvec2 result;    // mode 0: out; 1: grad_query; 2: grad_key [B, H, S, E]
  uvec2 lse;       // [B, H, L]: written by mode 0, read by 1 and 2
  uvec2 grad_out;  // [B, H, L, Ev] (modes 1, 2)
  uvec2 delta;     // [B, H, L] (written by mode 1, read by 2)
  uvec2 aux;       // mode 1: the forward's out; 2: grad_value [B, H, S, Ev]
  uint blocks;     // B H ceil(L / kTile) (modes 0, 1) or B H ceil(S / kTile)
  uint h;          // query heads H
  uint group;      // query heads per key/value head, H / Hk
  uint l, s, e, ev;
  uint bias_strides[4];
  float scale;
} p;

shared float a_tile[kTile * kChunk];
shared float b_tile[kTile * kChunk];
// [0]: the tile's scores, then probabilities; [1]: its dS.
shared float weights[2][kTile * kTile];

float at(uvec2 addr, uint i) { return Floats(addr).v[i]; }
void put(uvec2 addr, uint i, float x) { Floats(addr).v[i] = x; }

// Rows [first, first + kTile) of a [*, width] tensor, features
// [f0, f0 + kChunk), into a shared tile; zeros past `valid` rows and past
// the width (so padded lanes multiply finite values).
void stage(uvec2 addr, uint first, uint valid, uint width, uint f0, bool into_a) {
  for (uint x = gl_LocalInvocationID.x; x < kTile * kChunk; x += gl_WorkGroupSize.x) {
    const uint r = x / kChunk, f = f0 + x % kChunk;
    const float value = r < valid && f < width ? at(addr, (first + r) * width + f) : 0.0;
    if (into_a) {
      a_tile[x] = value;
    } else {
      b_tile[x] = value;
    }
  }
}

// A[first_a + r] . B[first_b + c] over `width` features (rows past their
// `valid` count read as zeros); the whole work group calls it.
float tile_dot(uvec2 a, uint first_a, uint valid_a, uvec2 b, uint first_b, uint valid_b,
               uint width, uint r, uint c) {
  float acc = 0.0;
  for (uint f0 = 0; f0 < width; f0 += kChunk) {
    stage(a, first_a, valid_a, width, f0, true);
    stage(b, first_b, valid_b, width, f0, false);
    barrier();
    const uint n = min(kChunk, width - f0);
    for (uint t = 0; t < n; ++t) acc += a_tile[r * kChunk + t] * b_tile[c * kChunk + t];
    barrier();
  }
  return acc;
}

// dst row (dst_first + r), if r < dst_valid: row * keep + sum over t of
// w(r, t) src[src_first + t], where w(r, t) = weights[which][r kTile + t],
// or weights[which][t kTile + r] when transposed; lane (r, c) owns the
// features c, c + kTile, ...; the whole work group calls it.
void tile_accumulate(uvec2 dst, uint dst_first, uint dst_valid, float keep, uvec2 src,
                     uint src_first, uint src_valid, uint width, uint which, bool transposed,
                     uint r, uint c) {
  for (uint f0 = 0; f0 < width; f0 += kChunk) {
    stage(src, src_first, src_valid, width, f0, false);
    barrier();
    if (r < dst_valid) {
      for (uint f = c; f < kChunk && f0 + f < width; f += kTile) {
        const uint at_dst = (dst_first + r) * width + f0 + f;
        float acc = at(dst, at_dst) * keep;
        for (uint t = 0; t < kTile; ++t) {
          const float w = weights[which][transposed ? t * kTile + r : r * kTile + t];
          acc += w * b_tile[t * kChunk + f];
        }
        put(dst, at_dst, acc);
      }
    }
    barrier();
  }
}

void fill_rows(uvec2 dst, uint first, uint valid, uint width, float x, uint r, uint c) {
  if (r >= valid) return;
  for (uint f = c; f < width; f += kTile) put(dst, (first + r) * width + f, x);
}

void scale_rows(uvec2 dst, uint first, uint valid, uint width, float x, uint r, uint c) {
  if (r >= valid) return;
  for (uint f = c; f < width; f += kTile) {
    const uint i = (first + r) * width + f;
    put(dst, i, at(dst, i) * x);
  }
}

// The key/value head that batch-head bh reads.
uint kv_head(uint bh) {
  const uint hk = p.h / p.group;
  return (bh / p.h) * hk + (bh % p.h) / p.group;
}

float bias_at(uint bh, uint i, uint j) {
  if (p.bias == uvec2(0)) return 0.0;
  return at(p.bias, (bh / p.h) * p.bias_strides[0] + (bh % p.h) * p.bias_strides[1] +
                        i * p.bias_strides[2] + j * p.bias_strides[3]);
}

bool attends(uint i, uint j) { return i < p.l && j < p.s && (kCausal == 0 || j <= i); }

// The tile's scores for query rows i0.. and keys j0.. (lane r, c: query
// i0 + r, key j0 + c); -inf where the query does not attend the key.
float tile_score(uint bh, uint i0, uint j0, uint r, uint c) {
  const uint kv = kv_head(bh);
  const float qk = tile_dot(p.q, bh * p.l + i0, p.l - min(i0, p.l), p.k, kv * p.s + j0,
                            p.s - min(j0, p.s), p.e, r, c);
  const uint i = i0 + r, j = j0 + c;
  return attends(i, j) ? p.scale * qk + bias_at(bh, i, j) : -kInf;
}

// dS of the tile (P into weights[0][lane], dS returned), for the rows'
// lse and delta.
float tile_grad_score(uint bh, uint i0, uint j0, uint r, uint c, float lse_i, float delta_i) {
  const float s = tile_score(bh, i0, j0, r, c);
  const float prob = s == -kInf ? 0.0 : c_exp(s - lse_i);
  const float dp = tile_dot(p.grad_out, bh * p.l + i0, p.l - min(i0, p.l), p.v,
                            kv_head(bh) * p.s + j0, p.s - min(j0, p.s), p.ev, r, c);
  weights[0][r * kTile + c] = prob;
  return prob * (dp - delta_i);
}

// The keys query rows [i0, i0 + kTile) read.
uint keys_end(uint i0) { return kCausal != 0 ? min(p.s, i0 + kTile) : p.s; }

void forward(uint bh, uint i0, uint r, uint c) {
  const uint lane = r * kTile + c, first = bh * p.l + i0, valid = min(kTile, p.l - i0);
  const uint kv_first = kv_head(bh) * p.s;
  float m = -kInf, l = 0.0;
  bool nan_seen = false;
  fill_rows(p.result, first, valid, p.ev, 0.0, r, c);
  for (uint j0 = 0; j0 < keys_end(i0); j0 += kTile) {
    const float s = tile_score(bh, i0, j0, r, c);
    weights[0][lane] = s;
    barrier();
    float block_max = -kInf;
    for (uint t = 0; t < kTile; ++t) {
      const float x = weights[0][r * kTile + t];
      if (is_nan(x)) {
        nan_seen = true;
      } else {
        block_max = max(block_max, x);
      }
    }
    const float m_new = max(m, block_max);
    // Nothing attended yet: no weight, nothing to rescale.
    const float keep = m_new == -kInf ? 1.0 : c_exp(m - m_new);
    const float prob = m_new == -kInf ? 0.0 : c_exp(s - m_new);
    barrier();
    weights[0][lane] = prob;
    barrier();
    float block_sum = 0.0;
    for (uint t = 0; t < kTile; ++t) block_sum += weights[0][r * kTile + t];
    l = l * keep + block_sum;
    m = m_new;
    tile_accumulate(p.result, first, valid, keep, p.v, kv_first + j0, p.s - j0, p.ev, 0, false,
                    r, c);
  }
  if (r >= valid) return;
  const bool empty_row = l == 0.0;
  for (uint f = c; f < p.ev; f += kTile) {
    const uint i = (first + r) * p.ev + f;
    put(p.result, i, nan_seen ? kNaN : (empty_row ? 0.0 : at(p.result, i) / l));
  }
  if (c == 0) put(p.lse, first + r, nan_seen ? kNaN : (empty_row ? kInf : m + c_log(l)));
}

void backward_query(uint bh, uint i0, uint r, uint c) {
  const uint lane = r * kTile + c, first = bh * p.l + i0, valid = min(kTile, p.l - i0);
  // delta of each row: its lanes' partial sums, added through the tile.
  float partial = 0.0;
  if (r < valid) {
    for (uint f = c; f < p.ev; f += kTile) {
      partial += at(p.grad_out, (first + r) * p.ev + f) * at(p.aux, (first + r) * p.ev + f);
    }
  }
  weights[1][lane] = partial;
  barrier();
  float delta_i = 0.0;
  for (uint t = 0; t < kTile; ++t) delta_i += weights[1][r * kTile + t];
  barrier();
  const float lse_i = r < valid ? at(p.lse, first + r) : kInf;
  if (r < valid && c == 0) put(p.delta, first + r, delta_i);
  fill_rows(p.result, first, valid, p.e, 0.0, r, c);
  for (uint j0 = 0; j0 < keys_end(i0); j0 += kTile) {
    const float ds = tile_grad_score(bh, i0, j0, r, c, lse_i, delta_i);
    weights[1][lane] = ds;
    barrier();
    tile_accumulate(p.result, first, valid, 1.0, p.k, kv_head(bh) * p.s + j0, p.s - j0, p.e, 1,
                    false, r, c);
  }
  scale_rows(p.result, first, valid, p.e, p.scale, r, c);
}

// Lanes (r, c) score query i0 + r against key j0 + c, then accumulate
// key row j0 + r.
void backward_key(uint bh, uint j0, uint r, uint c) {
  const uint lane = r * kTile + c, first = bh * p.s + j0, valid = min(kTile, p.s - j0);
  const uint q_first = bh * p.l;
  fill_rows(p.result, first, valid, p.e, 0.0, r, c);
  fill_rows(p.aux, first, valid, p.ev, 0.0, r, c);
  // Queries before j0 attend none of these keys under kCausal.
  for (uint i0 = kCausal != 0 ? j0 : 0; i0 < p.l; i0 += kTile) {
    const uint i = i0 + r;
    const float lse_i = i < p.l ? at(p.lse, q_first + i) : kInf;
    const float delta_i = i < p.l ? at(p.delta, q_first + i) : 0.0;
    const float ds = tile_grad_score(bh, i0, j0, r, c, lse_i, delta_i);
    weights[1][lane] = ds;
    barrier();
    tile_accumulate(p.aux, first, valid, 1.0, p.grad_out, q_first + i0, p.l - i0, p.ev, 0, true,
                    r, c);
    tile_accumulate(p.result, first, valid, 1.0, p.q, q_first + i0, p.l - i0, p.e, 1, true, r,
                    c);
  }
  scale_rows(p.result, first, valid, p.e, p.scale, r, c);
}

void main() {
  const uint lane = gl_LocalInvocationID.x, r = lane / kTile, c = lane % kTile;
  const uint side = kMode == 2 ? p.s : p.l;
  const uint per_head = (side + kTile - 1) / kTile;
  for (uint block = gl_WorkGroupID.x; block < p.blocks; block += gl_NumWorkGroups.x) {
    const uint bh = block / per_head, first = (block % per_head) * kTile;
    if (kMode == 0) {
      forward(bh, first, r, c);
    } else if (kMode == 1) {
      backward_query(bh, first, r, c);
    } else {
      backward_key(bh, first, r, c);
    }
    barrier();  // the next block's first writes to shared memory wait for this one's reads
  }
}
