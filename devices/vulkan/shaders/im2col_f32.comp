#version 450
// columns[(c, ky, kx)][n][(oy, ox)] = input[n, c, oy * stride - pad + ky *
// dilation, ...] or 0 where the tap falls in the padding: the B operand of
// conv2d's GEMM (kernels/conv2d.cc). One invocation per column element.
#include "conv2d_geometry.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint t = i;
    const int ox = int(t % p.out_w);
    t /= p.out_w;
    const int oy = int(t % p.out_h);
    t /= p.out_h;
    const int n = int(t % p.batch);
    t /= p.batch;
    const int kx = int(t % p.kernel_w);
    t /= p.kernel_w;
    const int ky = int(t % p.kernel_h);
    const int c = int(t / p.kernel_h);
    const int iy = oy * p.stride_h - p.pad_h + ky * p.dilation_h;
    const int ix = ox * p.stride_w - p.pad_w + kx * p.dilation_w;
    float v = 0.0;
    if (iy >= 0 && iy < int(p.height) && ix >= 0 && ix < int(p.width)) {
      v = Floats(p.image_addr).v[n * p.image_strides[0] + c * p.image_strides[1] +
                                 iy * p.image_strides[2] + ix * p.image_strides[3]];
    }
    Floats(p.columns_addr).v[i] = v;
  }
}
