#version 450
// Batch norm's elementwise pass over x viewed as [batch, channels,
// spatial] contiguous, with the per-channel coefficients batch_norm.glsl
// wrote (coef: 4 floats per channel):
//   kMode 0 forward:            out = x * coef.x + coef.y
//         1 training backward:  grad_in = coef.x * (g - coef.y - (x - coef.z) * coef.w)
//         2 eval backward:      grad_in = coef.x * g
// kHalf: the storage kind (0 f32, 1 f16, 8 bf16) of out, x and g; math in f32.
#include "element_kinds.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint kHalf = 0;
layout(constant_id = 3) const uint kMode = 0;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 x_addr;
  uvec2 grad_addr;
  uvec2 coef_addr;
  uint numel;
  uint spatial;
  uint channels;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint block = i / p.spatial;  // n * channels + c
    const uint c = block - (block / p.channels) * p.channels;
    const uint at = c * 4;
    const float c0 = Floats(p.coef_addr).v[at];
    float v;
    if (kMode == 0) {
      v = load(p.x_addr, i) * c0 + Floats(p.coef_addr).v[at + 1];
    } else if (kMode == 1) {
      const float xc = load(p.x_addr, i) - Floats(p.coef_addr).v[at + 2];
      v = c0 * (load(p.grad_addr, i) - Floats(p.coef_addr).v[at + 1] -
                xc * Floats(p.coef_addr).v[at + 3]);
    } else {
      v = c0 * load(p.grad_addr, i);
    }
    store_float(kHalf, p.out_addr, int(i), v);
  }
}
