// max_pool2d_with_indices: one invocation per output element scans
// its window (clipped to the input; dilation steps over it). out and
// indices are contiguous [N, C, out_h, out_w]; the index is the flat
// position h * W + w of the first maximum in its plane, and a NaN wins (the
// last one), as the CPU kernel. NaN is found on the bits and a NaN best is
// never compared again: a driver may assume comparisons see no NaN. Writes
// int64 indices (kernels/pool2d.cc checks the device has them).
// The including shader includes real_f32.glsl or real_f64.glsl (REAL,
// Reals, real_is_nan, REAL_NEG_INF).

layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform Params {
  uvec2 input_addr;
  uvec2 out_addr;
  uvec2 indices_addr;
  uint numel, channels, height, width, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int input_strides[4];  // n, c, h, w in elements
} p;

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
    int y0 = oy * p.stride_h - p.pad_h;
    const int y1 = min(y0 + (p.kernel_h - 1) * p.dilation_h + 1, int(p.height));
    while (y0 < 0) y0 += p.dilation_h;
    int x0 = ox * p.stride_w - p.pad_w;
    const int x1 = min(x0 + (p.kernel_w - 1) * p.dilation_w + 1, int(p.width));
    while (x0 < 0) x0 += p.dilation_w;
    const int base = n * p.input_strides[0] + c * p.input_strides[1];
    REAL best = REAL_NEG_INF;
    int best_at = y0 * int(p.width) + x0;
    for (int iy = y0; iy < y1; iy += p.dilation_h) {
      for (int ix = x0; ix < x1; ix += p.dilation_w) {
        const REAL v = Reals(p.input_addr).v[base + iy * p.input_strides[2] + ix * p.input_strides[3]];
        if (real_is_nan(v) || (!real_is_nan(best) && v > best)) {
          best = v;
          best_at = iy * int(p.width) + ix;
        }
      }
    }
    Reals(p.out_addr).v[i] = best;
    Int64s(p.indices_addr).v[i] = int64_t(best_at);
  }
}
