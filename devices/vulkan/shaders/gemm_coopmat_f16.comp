#version 450
// C = A @ B for f16 operands and result on the tensor cores of devices with
// VK_NV_cooperative_matrix (NVIDIA): f16 products summed in f32, each C
// element rounded once to nearest even. Same parameters and result as
// gemm_tiled.glsl (strided, batched, optional row bias and accumulation).
//
// Work group: 8 subgroups of 32 invocations own a 128 x 128 tile of C,
// as 2 x 4 subgroup tiles of 64 x 32, each held as (64 / kM) x (32 / kN)
// f32 cooperative matrices of kM x kN. K is stepped in slices of 32: the
// work group stages A's 128 x 32 slice and B's 32 x 128 slice in shared
// memory (zeros outside the matrices), each laid out along the operand's
// contiguous dimension so that neighbouring invocations read neighbouring
// addresses, and every subgroup multiplies its fragments out of it. The
// result leaves through a per-subgroup scratch, one kM x kN block at a
// time, where each lane adds the bias and C (when accumulating) and
// rounds: the store honours C's strides and edges.
//
// The matrix shape is the device's (kernels/gemm.cc picks it from
// vkGetPhysicalDeviceCooperativeMatrixPropertiesNV; 16 x 8 x 16 on NVIDIA).
// Needs 32-wide subgroups and 16-bit storage.
#include "buffers.glsl"
#include "half_rounding.glsl"
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256) in;

layout(constant_id = 1) const uint kM = 16;  // the cooperative matrix shape
layout(constant_id = 2) const uint kN = 8;
layout(constant_id = 3) const uint kK = 16;
// The shared layout of each operand's slice: true when the operand is
// contiguous along its rows (a transposed A; B = W^T of a linear layer),
// so the slice is stored column by column.
layout(constant_id = 4) const bool kAColumns = false;
layout(constant_id = 5) const bool kBColumns = false;

const uint kTileM = 128;  // tile_of in kernels/gemm.cc
const uint kTileN = 128;
const uint kTileK = 32;
const uint kSubTileM = 64;
const uint kSubTileN = 32;
const uint kFragRows = kSubTileM / kM;
const uint kFragCols = kSubTileN / kN;
// Pitches of the shared slices in halves, padded by 8 (16 bytes) so that
// rows start in different banks and stay 16-byte aligned.
const uint kPitchK = kTileK + 8;   // a slice stored with k innermost
const uint kPitchMN = kTileM + 8;  // a slice stored with rows or columns innermost
const uint kSliceHalves = kTileM * kPitchK > kTileK * kPitchMN ? kTileM * kPitchK
                                                               : kTileK * kPitchMN;

const uint kAccumulate = 1;
const uint kRowBias = 2;

#include "gemm_params.glsl"

shared float16_t a_slice[kSliceHalves];
shared float16_t b_slice[kSliceHalves];
shared float scratch[8 * kM * kN];

// Stages one operand's slice: `outer` x `inner` elements where inner is the
// dimension the shared layout keeps contiguous (pitch halves apart), from
// global element base + o * outer_stride + i * inner_stride, zero past
// outer_size or inner_size.
void stage(uvec2 addr, int base, int outer_stride, int inner_stride, uint outer0, uint outer_size,
           uint inner0, uint inner_size, uint outer, uint inner, uint pitch, bool to_a) {
  const uint count = outer * inner;
  for (uint e = gl_LocalInvocationID.x; e < count; e += 256) {
    const uint o = e / inner, i = e % inner;
    float16_t v = float16_t(0.0);
    if (outer0 + o < outer_size && inner0 + i < inner_size) {
      v = Halfs(addr).v[base + int(outer0 + o) * outer_stride + int(inner0 + i) * inner_stride];
    }
    if (to_a) {
      a_slice[o * pitch + i] = v;
    } else {
      b_slice[o * pitch + i] = v;
    }
  }
}

void main() {
  const uint subgroup = gl_SubgroupID;  // 0 .. 7
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint sub_row = (subgroup / 4) * kSubTileM;  // within the tile
  const uint sub_col = (subgroup % 4) * kSubTileN;
  const int z = int(gl_WorkGroupID.z);
  const int a_base = z * p.a_batch_stride, b_base = z * p.b_batch_stride;

  fcoopmatNV<32, gl_ScopeSubgroup, kM, kN> acc[kFragRows][kFragCols];
  [[unroll]] for (uint i = 0; i < kFragRows; ++i) {
    [[unroll]] for (uint j = 0; j < kFragCols; ++j) {
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, kM, kN>(0.0);
    }
  }

  for (uint k0 = 0; k0 < p.k; k0 += kTileK) {
    if (kAColumns) {  // a_slice[k][row]
      stage(p.a_addr, a_base, p.a_col_stride, p.a_row_stride, k0, p.k, row0, p.m, kTileK, kTileM,
            kPitchMN, true);
    } else {  // a_slice[row][k]
      stage(p.a_addr, a_base, p.a_row_stride, p.a_col_stride, row0, p.m, k0, p.k, kTileM, kTileK,
            kPitchK, true);
    }
    if (kBColumns) {  // b_slice[column][k]
      stage(p.b_addr, b_base, p.b_col_stride, p.b_row_stride, col0, p.n, k0, p.k, kTileN, kTileK,
            kPitchK, false);
    } else {  // b_slice[k][column]
      stage(p.b_addr, b_base, p.b_row_stride, p.b_col_stride, k0, p.k, col0, p.n, kTileK, kTileN,
            kPitchMN, false);
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < kTileK; kk += kK) {
      fcoopmatNV<16, gl_ScopeSubgroup, kM, kK> a[kFragRows];
      fcoopmatNV<16, gl_ScopeSubgroup, kK, kN> b[kFragCols];
      [[unroll]] for (uint i = 0; i < kFragRows; ++i) {
        const uint row = sub_row + i * kM;
        if (kAColumns) {
          coopMatLoadNV(a[i], a_slice, kk * kPitchMN + row, kPitchMN, true);
        } else {
          coopMatLoadNV(a[i], a_slice, row * kPitchK + kk, kPitchK, false);
        }
      }
      [[unroll]] for (uint j = 0; j < kFragCols; ++j) {
        const uint col = sub_col + j * kN;
        if (kBColumns) {
          coopMatLoadNV(b[j], b_slice, col * kPitchK + kk, kPitchK, true);
        } else {
          coopMatLoadNV(b[j], b_slice, kk * kPitchMN + col, kPitchMN, false);
        }
      }
      [[unroll]] for (uint i = 0; i < kFragRows; ++i) {
        [[unroll]] for (uint j = 0; j < kFragCols; ++j) {
          acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
      }
    }
    barrier();
  }

  const uint lane = gl_SubgroupInvocationID;
  const uint own = subgroup * kM * kN;
  const int c_base = z * p.c_batch_stride;
  [[unroll]] for (uint i = 0; i < kFragRows; ++i) {
    [[unroll]] for (uint j = 0; j < kFragCols; ++j) {
      coopMatStoreNV(acc[i][j], scratch, own, kN, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = lane; e < kM * kN; e += 32) {
        const uint row = row0 + sub_row + i * kM + e / kN;
        const uint col = col0 + sub_col + j * kN + e % kN;
        if (row < p.m && col < p.n) {
          const int at = c_base + int(row) * p.c_row_stride + int(col) * p.c_col_stride;
          float v = scratch[own + e];
          if ((p.flags & kRowBias) != 0) v += float(Halfs(p.bias_addr).v[int(row) * p.bias_stride]);
          if ((p.flags & kAccumulate) != 0) v += float(Halfs(p.c_addr).v[at]);
          Shorts(p.c_addr).v[at] = uint16_t(f16_bits_of(v));
        }
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
    }
  }
}
