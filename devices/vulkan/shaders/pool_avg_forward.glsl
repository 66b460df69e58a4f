// avg_pool2d: one invocation per output element (contiguous out) sums its
// clipped window in REAL, as the CPU kernel, and divides.
#include "pool_avg.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint t = i;
    const int ox = int(t % p.out_w);
    t /= p.out_w;
    const int oy = int(t % p.out_h);
    t /= p.out_h;
    const int c = int(t % p.channels);
    const int n = int(t / p.channels);
    const Window w = avg_window(oy, ox);
    REAL result = REAL(0);
    if (w.y0 < w.y1 && w.x0 < w.x1) {
      const int base = n * p.src_strides[0] + c * p.src_strides[1];
      REAL sum = REAL(0);
      for (int iy = w.y0; iy < w.y1; ++iy)
        for (int ix = w.x0; ix < w.x1; ++ix)
          sum += Reals(p.src_addr).v[base + iy * p.src_strides[2] + ix * p.src_strides[3]];
      result = sum / w.divisor;
    }
    Reals(p.dst_addr).v[i] = result;
  }
}
