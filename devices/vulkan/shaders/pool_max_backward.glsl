// max_pool2d_with_indices_backward: one invocation per (n, c)
// plane of the contiguous grad_input zeroes it, then adds each grad_out
// element at its index in row-major order (the CPU kernel's order, so the
// sums match; the backward gets no window geometry to gather by, and an
// invocation owning its plane needs no atomics). Indices outside the plane
// are skipped.
// The including shader includes real_f32.glsl or real_f64.glsl (REAL,
// Reals, real_is_nan, REAL_NEG_INF).

layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform Params {
  uvec2 grad_input_addr;
  uvec2 grad_out_addr;
  uvec2 indices_addr;
  uint planes, channels, plane_size, out_h, out_w;
  int grad_out_strides[4];  // n, c, h, w in elements
  int indices_strides[4];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint plane = gl_GlobalInvocationID.x; plane < p.planes; plane += step) {
    const int n = int(plane / p.channels), c = int(plane % p.channels);
    const int out_base = int(plane * p.plane_size);
    for (uint j = 0; j < p.plane_size; ++j) Reals(p.grad_input_addr).v[out_base + int(j)] = REAL(0);
    const int g_base = n * p.grad_out_strides[0] + c * p.grad_out_strides[1];
    const int i_base = n * p.indices_strides[0] + c * p.indices_strides[1];
    for (int oy = 0; oy < int(p.out_h); ++oy) {
      for (int ox = 0; ox < int(p.out_w); ++ox) {
        const int64_t at = Int64s(p.indices_addr).v[i_base + oy * p.indices_strides[2] + ox * p.indices_strides[3]];
        if (at < 0 || at >= int64_t(p.plane_size)) continue;
        const int to = out_base + int(at);
        Reals(p.grad_input_addr).v[to] +=
            Reals(p.grad_out_addr).v[g_base + oy * p.grad_out_strides[2] + ox * p.grad_out_strides[3]];
      }
    }
  }
}
