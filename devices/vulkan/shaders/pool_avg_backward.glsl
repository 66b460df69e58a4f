// avg_pool2d_backward: one invocation per grad_input element
// (contiguous) gathers grad_out / divisor from every window that covers
// it, in the CPU kernel's (oy, ox) order. No atomics.
#include "pool_avg.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint t = i;
    const int ix = int(t % p.width);
    t /= p.width;
    const int iy = int(t % p.height);
    t /= p.height;
    const int c = int(t % p.channels);
    const int n = int(t / p.channels);
    // Windows starting at oy * stride - pad in (iy - kernel, iy] cover iy
    // (clipping to the padded input never cuts a row of the input).
    const int oy_lo = max(0, (iy + p.pad_h - p.kernel_h + p.stride_h) / p.stride_h);
    const int oy_hi = min(int(p.out_h) - 1, (iy + p.pad_h) / p.stride_h);
    const int ox_lo = max(0, (ix + p.pad_w - p.kernel_w + p.stride_w) / p.stride_w);
    const int ox_hi = min(int(p.out_w) - 1, (ix + p.pad_w) / p.stride_w);
    const int base = n * p.src_strides[0] + c * p.src_strides[1];
    REAL sum = REAL(0);
    for (int oy = oy_lo; oy <= oy_hi; ++oy) {
      for (int ox = ox_lo; ox <= ox_hi; ++ox) {
        const Window w = avg_window(oy, ox);
        if (iy < w.y0 || iy >= w.y1 || ix < w.x0 || ix >= w.x1) continue;
        sum += Reals(p.src_addr).v[base + oy * p.src_strides[2] + ox * p.src_strides[3]] / w.divisor;
      }
    }
    Reals(p.dst_addr).v[i] = sum;
  }
}
