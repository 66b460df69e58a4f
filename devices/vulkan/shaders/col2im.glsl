// grad_input[n, c, iy, ix] = the sum of the column-gradient entries of
// every tap that read (iy, ix) in im2col.glsl: the adjoint of im2col.
// One invocation per grad_input element gathers its taps (no atomics, so
// the sum's order is fixed). In REAL (real_f32.glsl or real_f64.glsl, which
// the including shader includes).
#include "conv2d_geometry.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint plane = p.out_h * p.out_w;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint t = i;
    const int ix = int(t % p.width);
    t /= p.width;
    const int iy = int(t % p.height);
    t /= p.height;
    const int c = int(t % p.channels);
    const int n = int(t / p.channels);
    REAL sum = REAL(0);
    for (int ky = 0; ky < int(p.kernel_h); ++ky) {
      const int y = iy + p.pad_h - ky * p.dilation_h;  // oy * stride_h
      if (y < 0 || y % p.stride_h != 0) continue;
      const int oy = y / p.stride_h;
      if (oy >= int(p.out_h)) continue;
      for (int kx = 0; kx < int(p.kernel_w); ++kx) {
        const int x = ix + p.pad_w - kx * p.dilation_w;
        if (x < 0 || x % p.stride_w != 0) continue;
        const int ox = x / p.stride_w;
        if (ox >= int(p.out_w)) continue;
        const int row = (c * int(p.kernel_h) + ky) * int(p.kernel_w) + kx;
        sum += Reals(p.columns_addr).v[(row * int(p.batch) + n) * int(plane) + oy * int(p.out_w) + ox];
      }
    }
    Reals(p.image_addr).v[n * p.image_strides[0] + c * p.image_strides[1] +
                          iy * p.image_strides[2] + ix * p.image_strides[3]] = sum;
  }
}
