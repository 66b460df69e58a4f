#version 450
// Softmax along a dim that is not innermost, of a contiguous tensor viewed
// as [outer, n, inner] (inner > 1): one invocation per line (outer x inner
// of them), walking its n elements inner apart, so neighbouring
// invocations read neighbouring addresses. Same passes, modes and NaN rule
// as softmax.glsl (kMode 0 softmax, 1 log_softmax, 2 softmax backward, 3
// log_softmax backward); f16 or bf16 tensors (the storage kind kHalf) with f32 math.
#include "element_kinds.glsl"
#include "float_math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint kHalf = 0;
layout(constant_id = 3) const uint kMode = 0;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;  // x (forward) or grad_out (backward)
  uvec2 b_addr;  // the forward's output (backward only)
  uint lines;    // outer * inner
  uint n;
  uint inner;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

void store(uint i, float v) {
  store_float(kHalf, p.out_addr, int(i), v);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint end = p.n * p.inner;  // one past the line's last offset from base
  for (uint line = gl_GlobalInvocationID.x; line < p.lines; line += step) {
    const uint outer = line / p.inner;
    const uint base = outer * end + (line - outer * p.inner);
    if (kMode <= 1) {
      float m = -kInf;
      bool nan = false;
      for (uint i = 0; i < end; i += p.inner) {
        const float v = load(p.a_addr, base + i);
        nan = nan || is_nan(v);
        m = max(m, v);
      }
      if (nan) m = kNaN;
      float s = 0.0;
      for (uint i = 0; i < end; i += p.inner) s += c_exp(load(p.a_addr, base + i) - m);
      if (kMode == 1) {
        const float lse = m + c_log(s);
        for (uint i = 0; i < end; i += p.inner) store(base + i, load(p.a_addr, base + i) - lse);
      } else {
        const float inv = 1.0 / s;
        for (uint i = 0; i < end; i += p.inner) {
          store(base + i, c_exp(load(p.a_addr, base + i) - m) * inv);
        }
      }
    } else {
      float s = 0.0;
      for (uint i = 0; i < end; i += p.inner) {
        const float g = load(p.a_addr, base + i);
        s += kMode == 3 ? g : g * load(p.b_addr, base + i);
      }
      for (uint i = 0; i < end; i += p.inner) {
        const float g = load(p.a_addr, base + i);
        const float y = load(p.b_addr, base + i);
        store(base + i, kMode == 3 ? g - c_exp(y) * s : y * (g - s));
      }
    }
  }
}
