// grad_bias[c] = the sum of grad_out[n, c, :, :] over n for a contiguous
// grad_out [batch, channels, plane]: one work group per channel, each
// invocation sums a strided share, then a fixed tree in shared memory
// (deterministic, no atomics). In REAL (real_f32.glsl or real_f64.glsl,
// which the including shader includes).

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform Params {
  uvec2 grad_out_addr;
  uvec2 grad_bias_addr;
  uint batch, channels, plane;
  int grad_bias_stride;
} p;

shared REAL partial[256];

void main() {
  const uint c = gl_WorkGroupID.x, lane = gl_LocalInvocationID.x;
  const uint count = p.batch * p.plane;
  REAL sum = REAL(0);
  for (uint i = lane; i < count; i += 256) {
    const uint n = i / p.plane, at = i - n * p.plane;
    sum += Reals(p.grad_out_addr).v[(n * p.channels + c) * p.plane + at];
  }
  partial[lane] = sum;
  barrier();
  for (uint half_size = 128; half_size > 0; half_size /= 2) {
    if (lane < half_size) partial[lane] += partial[lane + half_size];
    barrier();
  }
  if (lane == 0) Reals(p.grad_bias_addr).v[int(c) * p.grad_bias_stride] = partial[0];
}
