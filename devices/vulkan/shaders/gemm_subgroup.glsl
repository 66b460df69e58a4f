// The body of the subgroup GEMM shaders (gemm_subgroup_f32.comp,
// gemm_subgroup_f16.comp: f16 storage, f32 sums), the variant for devices
// with 8-wide subgroups that run shared and global accesses lane by lane
// (llvmpipe: each non-uniform load there is a loop over the lanes, so
// loads, not multiply-adds, bound a GEMM). Same parameters and result as
// gemm_tiled.glsl. The includer defines ELEM and ELEM_BUFFER (and may
// define STORE_C and LOAD_F) as for gemm_tiled.glsl, and may define ACC / ACC4
// (default float / vec4), the sum's type: int / ivec4 for the integer
// shaders (which also define ACC_IS_INT for the signed 8/16-bit views),
// whose 32-bit sums wrap and so give the low bits of the CPU's int64 sums
// exactly.
//
// A subgroup (8 lanes) owns a (8 kSets)-row x 32-column block of C: per k,
// lane l loads B[k][4 l .. 4 l + 3] and A[row l + 8 s][k] for each row set
// s (4 + kSets loads), and the A values reach every lane by subgroupShuffle
// (a register move), for 32 kSets multiply-adds per lane; the tiled shader
// does 16 per 8 loads. No shared memory, no barriers. A work group is 8
// subgroups stacked along the rows.
#include "buffers.glsl"
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

#ifndef ACC
#define ACC float
#define ACC4 vec4
#endif

#ifndef STORE_C
#define STORE_C(index, value) ELEM_BUFFER(p.c_addr).v[index] = ELEM(value)
#endif
#ifndef LOAD_F
#define LOAD_F(addr, index) ELEM_BUFFER(addr).v[index]
#endif

layout(local_size_x = 64) in;

const uint kLanes = 8;  // the subgroup size this shader is chosen for
// Row sets of kLanes rows per subgroup (kernels/gemm.cc: 2, or 1 for
// products of at most 64 rows): the work group's tile is
// (8 subgroups x kLanes x kSets) x 32.
layout(constant_id = 1) const uint kSets = 2;
const uint kTileM = 8 * kLanes * kSets;
const uint kTileN = 32;

const uint kAccumulate = 1;
const uint kRowBias = 2;

#include "gemm_params.glsl"

void main() {
  // Subgroup ids, not local-id arithmetic: the shuffles below exchange
  // values within the subgroup, whichever invocations form it.
  const uint lane = gl_SubgroupInvocationID;
  const uint block = gl_SubgroupID;
  const uint row0 = gl_WorkGroupID.y * kTileM + block * kLanes * kSets;
  const uint col0 = gl_WorkGroupID.x * kTileN + lane * 4;
  const int z = int(gl_WorkGroupID.z);
  // The A rows this lane loads: row0 + lane + kLanes s.
  bool row_ok[kSets];
  int a_at[kSets];
  [[unroll]] for (uint s = 0; s < kSets; ++s) {
    const uint row = row0 + lane + kLanes * s;
    row_ok[s] = row < p.m;
    a_at[s] = z * p.a_batch_stride + int(min(row, p.m - 1)) * p.a_row_stride;
  }
  const int b_at = z * p.b_batch_stride;
  int b_col[4];
  bool col_ok[4];
  [[unroll]] for (int j = 0; j < 4; ++j) {
    col_ok[j] = col0 + j < p.n;
    b_col[j] = b_at + int(min(col0 + j, p.n - 1)) * p.b_col_stride;
  }

  ACC4 acc[kSets * kLanes];  // [s * kLanes + r]: row row0 + kLanes s + r
  [[unroll]] for (uint r = 0; r < kSets * kLanes; ++r) acc[r] = ACC4(0);
  for (int kk = 0; kk < int(p.k); ++kk) {
    const int bk = kk * p.b_row_stride;
    ACC4 b;
    [[unroll]] for (int j = 0; j < 4; ++j) {
      b[j] = col_ok[j] ? ACC(LOAD_F(p.b_addr, b_col[j] + bk)) : ACC(0);
    }
    [[unroll]] for (uint s = 0; s < kSets; ++s) {
      const ACC a = row_ok[s] ? ACC(LOAD_F(p.a_addr, a_at[s] + kk * p.a_col_stride)) : ACC(0);
      [[unroll]] for (uint r = 0; r < kLanes; ++r) acc[s * kLanes + r] += subgroupShuffle(a, r) * b;
    }
  }

  const int c_base = z * p.c_batch_stride;
  [[unroll]] for (uint r = 0; r < kSets * kLanes; ++r) {
    const uint row = row0 + r;
    if (row >= p.m) break;
    const ACC bias = (p.flags & kRowBias) != 0
                         ? ACC(LOAD_F(p.bias_addr, int(row) * p.bias_stride))
                         : ACC(0);
    [[unroll]] for (int j = 0; j < 4; ++j) {
      if (!col_ok[j]) break;
      const int at = c_base + int(row) * p.c_row_stride + int(col0 + j) * p.c_col_stride;
      ACC v = acc[r][j] + bias;
      if ((p.flags & kAccumulate) != 0) v += ACC(LOAD_F(p.c_addr, at));
      STORE_C(at, v);
    }
  }
}
