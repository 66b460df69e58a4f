// The push constants and window of pool_avg_forward.glsl and
// pool_avg_backward.glsl (AvgPoolParams in kernels/pool2d.cc), in REAL from
// real_f32.glsl or real_f64.glsl, which the including shader includes.

layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform Params {
  uvec2 dst_addr;  // out, or grad_input: contiguous
  uvec2 src_addr;  // input, or grad_out: any strides
  uint numel, channels, height, width, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  uint count_include_pad;
  int divisor_override;  // 0: none
  int src_strides[4];    // n, c, h, w in elements
} p;

// The window of output (oy, ox) clipped to the input, [y0, y1) x [x0, x1),
// and its divisor, as the CPU kernel's avg_window.
struct Window {
  int y0, y1, x0, x1;
  REAL divisor;
};

Window avg_window(int oy, int ox) {
  Window w;
  w.y0 = oy * p.stride_h - p.pad_h;
  w.x0 = ox * p.stride_w - p.pad_w;
  w.y1 = min(w.y0 + p.kernel_h, int(p.height) + p.pad_h);
  w.x1 = min(w.x0 + p.kernel_w, int(p.width) + p.pad_w);
  const int padded_size = (w.y1 - w.y0) * (w.x1 - w.x0);
  w.y0 = max(w.y0, 0);
  w.x0 = max(w.x0, 0);
  w.y1 = min(w.y1, int(p.height));
  w.x1 = min(w.x1, int(p.width));
  const int divisor = p.divisor_override != 0 ? p.divisor_override
                      : p.count_include_pad != 0 ? padded_size
                                                 : (w.y1 - w.y0) * (w.x1 - w.x0);
  w.divisor = REAL(divisor);
  return w;
}
