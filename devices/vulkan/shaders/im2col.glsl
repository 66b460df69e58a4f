// columns[(c, ky, kx)][n][(oy, ox)] = input[n, c, oy * stride - pad + ky *
// dilation, ...] or 0 where the tap falls in the padding: the B operand of
// conv2d's GEMM (kernels/conv2d.cc). Grid: x over the output plane, y over
// the column rows (c, ky, kx), z over the images, each dim looping past
// its group count; so the row's decomposition is uniform per work group
// and an invocation divides once (on llvmpipe an integer division is a
// per-lane scalar one). In REAL (real_f32.glsl or real_f64.glsl, which
// the including shader includes).
#include "conv2d_geometry.glsl"

void main() {
  const uint plane = p.out_h * p.out_w;
  const uint rows = p.channels * p.kernel_h * p.kernel_w;
  const uint step_x = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint n = gl_WorkGroupID.z; n < p.batch; n += gl_NumWorkGroups.z) {
    for (uint row = gl_WorkGroupID.y; row < rows; row += gl_NumWorkGroups.y) {
      const int kx = int(row % p.kernel_w);
      const int ky = int((row / p.kernel_w) % p.kernel_h);
      const int c = int(row / (p.kernel_w * p.kernel_h));
      const int image_base = int(n) * p.image_strides[0] + c * p.image_strides[1];
      const uint column_base = (row * p.batch + n) * plane;
      for (uint l = gl_GlobalInvocationID.x; l < plane; l += step_x) {
        const int oy = int(l / p.out_w);
        const int ox = int(l) - oy * int(p.out_w);
        const int iy = oy * p.stride_h - p.pad_h + ky * p.dilation_h;
        const int ix = ox * p.stride_w - p.pad_w + kx * p.dilation_w;
        REAL v = REAL(0);
        if (iy >= 0 && iy < int(p.height) && ix >= 0 && ix < int(p.width)) {
          v = Reals(p.image_addr).v[image_base + iy * p.image_strides[2] + ix * p.image_strides[3]];
        }
        Reals(p.columns_addr).v[column_base + l] = v;
      }
    }
  }
}
