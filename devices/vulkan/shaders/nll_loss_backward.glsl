// nll_loss_backward: grad_input [N, C, S] fully written, -weight[c] *
// grad_out (over total_weight for mean) where c is the position's target
// and not ignore_index, else 0. One invocation per element, in the
// including shader's compute type (REAL, load_real and store_real as for
// nll_loss.glsl). Targets were range-checked on the device.

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const bool kHasWeight = false;
layout(constant_id = 3) const uint kReduction = 0;  // 0 none ([N, S] grad_out), 1 mean, 2 sum

layout(push_constant, std430) uniform Params {
  uvec2 grad_input_addr;
  uvec2 grad_out_addr;
  uvec2 target_addr;  // int64
  uvec2 weight_addr;
  uvec2 total_weight_addr;
  int64_t ignore_index;
  uint numel;  // N * C * S
  uint classes;  // C
  uint spatial;  // S
  int grad_input_strides[3];  // in elements
  int grad_out_strides[2];
  int target_strides[2];
  int weight_stride;
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < p.numel; e += step) {
    const uint q = e / p.spatial;
    const int s = int(e - q * p.spatial);
    const uint n = q / p.classes;
    const int c = int(q - n * p.classes);
    const int64_t t =
        Int64s(p.target_addr).v[int(n) * p.target_strides[0] + s * p.target_strides[1]];
    REAL v = REAL(0);
    if (t == int64_t(c) && t != p.ignore_index) {
      const REAL w = kHasWeight ? load_real(p.weight_addr, c * p.weight_stride) : REAL(1);
      REAL g = kReduction == 0
                   ? load_real(p.grad_out_addr,
                               int(n) * p.grad_out_strides[0] + s * p.grad_out_strides[1])
                   : load_real(p.grad_out_addr, 0);
      if (kReduction == 1) g /= load_real(p.total_weight_addr, 0);
      v = -w * g;
    }
    store_real(p.grad_input_addr,
               int(n) * p.grad_input_strides[0] + c * p.grad_input_strides[1] +
                   s * p.grad_input_strides[2],
               v);
  }
}
