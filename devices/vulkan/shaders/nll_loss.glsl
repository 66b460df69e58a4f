// nll_loss on input [N, C, S] and int64 target [N, S], in the including
// shader's compute type, in two passes:
//   kPass 0: each work group takes a strided share of the N * S positions,
//     writes the unreduced loss (kReduction 0) and reduces its loss and
//     weight sums into partials[g] and partials[groups + g];
//   kPass 1: one work group sums the partials (count = groups) and writes
//     total_weight and, for mean and sum, out.
// Sums are shared-memory trees of fixed shape, so results do not depend on
// scheduling. Targets were range-checked on the device first.
// The including shader includes index_elements.glsl and real_f32.glsl or
// real_f64.glsl (REAL, Reals, real_nan), and defines
//   REAL load_real(uvec2 addr, int at);
//   void store_real(uvec2 addr, int at, REAL v);

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const bool kHasWeight = false;
layout(constant_id = 3) const uint kReduction = 0;  // kernels::Reduction: 0 none, 1 mean, 2 sum
layout(constant_id = 4) const uint kPass = 0;

layout(push_constant, std430) uniform Params {
  uvec2 input_addr;
  uvec2 target_addr;  // int64
  uvec2 weight_addr;
  uvec2 out_addr;
  uvec2 partials_addr;  // REAL [2 * groups]
  uvec2 total_weight_addr;
  int64_t ignore_index;
  uint count;  // N * S in pass 0, the number of partials in pass 1
  uint spatial;  // S
  int input_strides[3];  // in elements
  int target_strides[2];
  int weight_stride;
  int out_strides[2];
} p;

shared REAL s_sum[gl_WorkGroupSize.x];
shared REAL s_weight[gl_WorkGroupSize.x];

// Sums s_sum and s_weight into entry 0 (every invocation calls it).
void reduce_shared(REAL sum, REAL weight_sum) {
  const uint lid = gl_LocalInvocationID.x;
  s_sum[lid] = sum;
  s_weight[lid] = weight_sum;
  barrier();
  for (uint count = gl_WorkGroupSize.x; count > 1;) {
    const uint half_count = (count + 1) / 2;
    if (lid < count - half_count) {
      s_sum[lid] += s_sum[lid + half_count];
      s_weight[lid] += s_weight[lid + half_count];
    }
    barrier();
    count = half_count;
  }
}

void partial_sums() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  REAL sum = REAL(0), weight_sum = REAL(0);
  for (uint e = gl_GlobalInvocationID.x; e < p.count; e += step) {
    const int n = int(e / p.spatial);
    const int s = int(e - uint(n) * p.spatial);
    const int64_t t = Int64s(p.target_addr).v[n * p.target_strides[0] + s * p.target_strides[1]];
    REAL loss = REAL(0);
    if (t != p.ignore_index) {
      const int c = int(t);
      const REAL w = kHasWeight ? load_real(p.weight_addr, c * p.weight_stride) : REAL(1);
      const int at = n * p.input_strides[0] + c * p.input_strides[1] + s * p.input_strides[2];
      loss = -w * load_real(p.input_addr, at);
      sum += loss;
      weight_sum += w;
    }
    if (kReduction == 0) {
      store_real(p.out_addr, n * p.out_strides[0] + s * p.out_strides[1], loss);
    }
  }
  reduce_shared(sum, weight_sum);
  if (gl_LocalInvocationID.x == 0) {
    Reals(p.partials_addr).v[gl_WorkGroupID.x] = s_sum[0];
    Reals(p.partials_addr).v[gl_NumWorkGroups.x + gl_WorkGroupID.x] = s_weight[0];
  }
}

void final_sums() {
  REAL sum = REAL(0), weight_sum = REAL(0);
  for (uint i = gl_LocalInvocationID.x; i < p.count; i += gl_WorkGroupSize.x) {
    sum += Reals(p.partials_addr).v[i];
    weight_sum += Reals(p.partials_addr).v[p.count + i];
  }
  reduce_shared(sum, weight_sum);
  if (gl_LocalInvocationID.x != 0) return;
  sum = s_sum[0];
  weight_sum = s_weight[0];
  store_real(p.total_weight_addr, 0, weight_sum);
  if (kReduction == 2) {
    store_real(p.out_addr, 0, sum);
  } else if (kReduction == 1) {
    // Mean over zero total weight is 0/0 = NaN, as the CPU (and PyTorch).
    const REAL mean =
        weight_sum == REAL(0) && sum == REAL(0) ? real_nan() : sum / weight_sum;
    store_real(p.out_addr, 0, mean);
  }
}

void main() {
  if (kPass == 0) {
    partial_sums();
  } else {
    final_sums();
  }
}
