// The body of the tiled GEMM shaders (gemm_f32.comp, gemm_f16.comp):
// C[z] = A[z] @ B[z] (+ bias per row) (+ C[z] when accumulating) for
// A [M, K], B [K, N], C [M, N], each addressed by its own batch, row and
// column strides in elements, so transposed, sliced and broadcast (stride
// 0) operands need no copy. The includer defines ELEM (the storage type,
// float or float16_t) and ELEM_BUFFER (its buffers.glsl view); sums are
// f32 either way. It may define STORE_C(index, value), the store of a sum
// into C (default: ELEM_BUFFER's element = ELEM(value)), and
// LOAD_F(addr, index), an operand's element as a SUM_T (default:
// SUM_T(ELEM_BUFFER(addr).v[index]); bf16 widens its bits). SUM_T and
// SUM_VEC4 (default float and vec4) are the type of the sums: gemm_f64.comp
// sums f64 in double and gemm_i64.comp int64 in wrapping int64 (their two
// tiles then fill 16 KiB of shared memory, the least Vulkan guarantees).
//
// Work group: 16 x 16 invocations own a 64 x 64 tile of C[gl_WorkGroupID.z];
// invocation (tx, ty) keeps the 4 x 4 micro-tile at rows 4 ty.., columns
// 4 tx.. in registers. K is stepped in slices of 16: each invocation stages
// one vec4 of A's 64 x 16 slice (4 rows at one k) and one of B's 16 x 64
// slice (4 columns at one k) in shared memory (zeros outside the
// matrices); then per k it reads one vec4 of each and does 16
// multiply-adds (vec4 shared reads: 4x fewer load instructions than
// scalar ones). Devices with 8-wide subgroups (llvmpipe) run
// gemm_subgroup.glsl instead for f32.
#include "buffers.glsl"
#extension GL_EXT_control_flow_attributes : require

#ifndef SUM_T
#define SUM_T float
#define SUM_VEC4 vec4
#endif
#ifndef STORE_C
#define STORE_C(index, value) ELEM_BUFFER(p.c_addr).v[index] = ELEM(value)
#endif
#ifndef LOAD_F
#define LOAD_F(addr, index) SUM_T(ELEM_BUFFER(addr).v[index])
#endif

layout(local_size_x = 16, local_size_y = 16) in;

const uint kTileM = 64;  // tile_of in kernels/gemm.cc
const uint kTileN = 64;
const uint kTileK = 16;

// flags bits (kGemmAccumulate, kGemmRowBias in kernels/gemm.cc)
const uint kAccumulate = 1;  // C += A @ B instead of C = A @ B
const uint kRowBias = 2;     // + bias[row * bias_stride]

#include "gemm_params.glsl"

shared SUM_VEC4 a_tile[kTileK][kTileM / 4];  // [k][row / 4]: 4 rows
shared SUM_VEC4 b_tile[kTileK][kTileN / 4];  // [k][column / 4]: 4 columns

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint thread = ty * 16 + tx;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const int z = int(gl_WorkGroupID.z);
  const int a_base = z * p.a_batch_stride, b_base = z * p.b_batch_stride;
  // Which vec4 this invocation stages: neighbouring invocations take
  // neighbouring k where the operand is contiguous along k, so they read
  // neighbouring addresses.
  const bool a_along_k = p.a_col_stride == 1;
  const uint a_k = a_along_k ? thread % kTileK : thread / (kTileM / 4);
  const uint a_quad = a_along_k ? thread / kTileK : thread % (kTileM / 4);
  const bool b_along_k = p.b_row_stride == 1 && p.b_col_stride != 1;
  const uint b_k = b_along_k ? thread % kTileK : thread / (kTileN / 4);
  const uint b_quad = b_along_k ? thread / kTileK : thread % (kTileN / 4);

  // acc_i[j]: row 4 ty + i, column 4 tx + j. Plain multiply-adds, not
  // fma(): llvmpipe may lower fma() to a libm call per element.
  SUM_VEC4 acc0 = SUM_VEC4(0.0), acc1 = SUM_VEC4(0.0), acc2 = SUM_VEC4(0.0), acc3 = SUM_VEC4(0.0);

  for (uint k0 = 0; k0 < p.k; k0 += kTileK) {
    SUM_VEC4 av = SUM_VEC4(0.0), bv = SUM_VEC4(0.0);
    const uint ak = k0 + a_k, bk = k0 + b_k;
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint row = row0 + 4 * a_quad + i;
      if (row < p.m && ak < p.k) {
        av[i] = LOAD_F(p.a_addr, a_base + int(row) * p.a_row_stride + int(ak) * p.a_col_stride);
      }
      const uint col = col0 + 4 * b_quad + i;
      if (bk < p.k && col < p.n) {
        bv[i] = LOAD_F(p.b_addr, b_base + int(bk) * p.b_row_stride + int(col) * p.b_col_stride);
      }
    }
    a_tile[a_k][a_quad] = av;
    b_tile[b_k][b_quad] = bv;
    barrier();
    [[unroll]] for (uint kk = 0; kk < kTileK; ++kk) {
      const SUM_VEC4 a = a_tile[kk][ty];
      const SUM_VEC4 b = b_tile[kk][tx];
      acc0 += a.x * b;
      acc1 += a.y * b;
      acc2 += a.z * b;
      acc3 += a.w * b;
    }
    barrier();
  }

  const SUM_VEC4 acc[4] = SUM_VEC4[4](acc0, acc1, acc2, acc3);
  const int c_base = z * p.c_batch_stride;
  for (int i = 0; i < 4; ++i) {
    const uint row = row0 + 4 * ty + i;
    if (row >= p.m) break;
    const SUM_T bias = (p.flags & kRowBias) != 0
                           ? LOAD_F(p.bias_addr, int(row) * p.bias_stride)
                           : SUM_T(0.0);
    for (int j = 0; j < 4; ++j) {
      const uint col = col0 + 4 * tx + j;
      if (col >= p.n) break;
      const int at = c_base + int(row) * p.c_row_stride + int(col) * p.c_col_stride;
      SUM_T v = acc[i][j] + bias;
      if ((p.flags & kAccumulate) != 0) v += LOAD_F(p.c_addr, at);
      STORE_C(at, v);
    }
  }
}
