// The body of the tiled GEMM shaders (gemm_f32.comp, gemm_f16.comp):
// C[z] = A[z] @ B[z] (+ bias per row) (+ C[z] when accumulating) for
// A [M, K], B [K, N], C [M, N], each addressed by its own batch, row and
// column strides in elements, so transposed, sliced and broadcast (stride
// 0) operands need no copy. The includer defines ELEM (the storage type,
// float or float16_t) and ELEM_BUFFER (its buffers.glsl view); sums are
// f32 either way.
//
// Work group: 16 x 16 invocations own a 64 x 64 tile of C[gl_WorkGroupID.z];
// each invocation keeps a 4 x 4 micro-tile in registers (rows ty + 16 i,
// columns tx + 16 j, so a row of the group stores 16 neighbouring columns).
// K is stepped in slices of 16: the group stages A's 64 x 16 and B's
// 16 x 64 slice in shared memory (zeros outside the matrices), then every
// invocation does 16 x 16 multiply-adds from it.
#include "buffers.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const uint kTileM = 64;  // kGemmTileM / kGemmTileN in kernels/bmm.cc
const uint kTileN = 64;
const uint kTileK = 16;

// flags bits (kernels/gemm.h, GemmFlags)
const uint kAccumulate = 1;  // C += A @ B instead of C = A @ B
const uint kRowBias = 2;     // + bias[row * bias_stride]

layout(push_constant, std430) uniform Params {
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uvec2 bias_addr;  // f32 or ELEM like C; only read with kRowBias
  uint m;
  uint n;
  uint k;
  uint flags;
  int a_batch_stride, a_row_stride, a_col_stride;
  int b_batch_stride, b_row_stride, b_col_stride;
  int c_batch_stride, c_row_stride, c_col_stride;
  int bias_stride;
} p;

shared float a_tile[kTileK][kTileM];  // [k][row]
shared float b_tile[kTileK][kTileN];  // [k][column]

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint thread = ty * 16 + tx;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const int z = int(gl_WorkGroupID.z);
  const int a_base = z * p.a_batch_stride, b_base = z * p.b_batch_stride;
  // Which way the invocations walk a slice when staging it: along the
  // operand's unit-stride dim, so neighbours read neighbouring addresses.
  const bool a_along_k = p.a_col_stride == 1;
  const bool b_along_n = p.b_col_stride == 1 || p.b_row_stride != 1;

  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += kTileK) {
    // 1024 elements of each slice, 4 per invocation.
    for (uint q = 0; q < 4; ++q) {
      const uint e = thread + 256 * q;
      const uint ar = a_along_k ? e / kTileK : e % kTileM;
      const uint ak = a_along_k ? e % kTileK : e / kTileM;
      float av = 0.0;
      if (row0 + ar < p.m && k0 + ak < p.k) {
        av = float(ELEM_BUFFER(p.a_addr).v[a_base + int(row0 + ar) * p.a_row_stride +
                                           int(k0 + ak) * p.a_col_stride]);
      }
      a_tile[ak][ar] = av;
      const uint bk = b_along_n ? e / kTileN : e % kTileK;
      const uint bc = b_along_n ? e % kTileN : e / kTileK;
      float bv = 0.0;
      if (k0 + bk < p.k && col0 + bc < p.n) {
        bv = float(ELEM_BUFFER(p.b_addr).v[b_base + int(k0 + bk) * p.b_row_stride +
                                           int(col0 + bc) * p.b_col_stride]);
      }
      b_tile[bk][bc] = bv;
    }
    barrier();
    for (uint kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = a_tile[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) b[j] = b_tile[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    barrier();
  }

  const int c_base = z * p.c_batch_stride;
  for (int i = 0; i < 4; ++i) {
    const uint row = row0 + ty + 16 * i;
    if (row >= p.m) break;
    const float bias = (p.flags & kRowBias) != 0
                           ? float(ELEM_BUFFER(p.bias_addr).v[int(row) * p.bias_stride])
                           : 0.0;
    for (int j = 0; j < 4; ++j) {
      const uint col = col0 + tx + 16 * j;
      if (col >= p.n) break;
      const int at = c_base + int(row) * p.c_row_stride + int(col) * p.c_col_stride;
      float v = acc[i][j] + bias;
      if ((p.flags & kAccumulate) != 0) v += float(ELEM_BUFFER(p.c_addr).v[at]);
      ELEM_BUFFER(p.c_addr).v[at] = ELEM(v);
    }
  }
}
