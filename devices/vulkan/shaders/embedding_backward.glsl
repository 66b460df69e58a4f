// embedding_dense_backward: acc[idx[i], j] += grad[i, j] for every index i
// (except padding_idx), acc a [V, D] of the compute type REAL that starts
// at zero.
//
// Work groups tile (column blocks of one work group's width) x (blocks of
// destination rows); each invocation owns one column of one row block, so
// each acc element has exactly one writer and sums in index order, as the
// CPU kernel: deterministic without atomics. (Parallelizing over columns
// alone would leave small D with a handful of invocations.) Every row
// block walks all indices, a work group's width at a time: each
// invocation loads one index, the group compacts the ones that land in its
// block (an order-keeping prefix sum: subgroupExclusiveAdd plus per-
// subgroup totals with kSubgroups, else a shared-memory scan) into shared
// memory, and then every invocation adds just those rows of its column.
// So the extra cost of a row block is one load and flag per index, not a
// test per index per column.
//
// kPass 1 converts acc to grad_weight's dtype (f16, bf16) or layout
// instead, one invocation per element.
//
// The including shader includes index_elements.glsl and real_f32.glsl or
// real_f64.glsl (REAL, Reals), and defines
//   REAL load_grad(uvec2 addr, int at);
//   void store_grad_weight(uvec2 addr, int at, REAL v);
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool kIndex64 = true;
layout(constant_id = 3) const uint kPass = 0;      // 0 accumulate, 1 convert
layout(constant_id = 4) const bool kSubgroups = false;

layout(push_constant, std430) uniform Params {
  uvec2 acc_addr;  // REAL [V, D], contiguous
  uvec2 grad_addr;
  uvec2 indices_addr;
  uvec2 grad_weight_addr;  // kPass 1's output
  uint n;     // indices (rows of grad); kPass 1: V * D
  uint cols;  // D
  uint rows;  // V
  uint rows_per_block;
  int padding_idx;  // -1: none
  int index_stride;
  int grad_strides[2];  // in elements
  int grad_weight_strides[2];
} p;

shared int s_row[gl_WorkGroupSize.x];   // compacted destination rows
shared uint s_from[gl_WorkGroupSize.x];  // and their grad rows
shared uint s_scan[gl_WorkGroupSize.x];  // per subgroup (kSubgroups) or per invocation
shared uint s_total;

int load_index(uint i) {
  const int at = int(i) * p.index_stride;
  return kIndex64 ? int(DoubleWords(p.indices_addr).v[at].x) : Ints(p.indices_addr).v[at];
}

// The number of invocations below this one with `mine`, and the total over
// the work group (every invocation calls it).
uvec2 group_prefix(bool mine) {
  const uint lid = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  uvec2 result;
  if (kSubgroups) {
    const uint flag = mine ? 1u : 0u;
    const uint below = subgroupExclusiveAdd(flag);
    const uint subgroup_total = subgroupAdd(flag);
    if (subgroupElect()) s_scan[gl_SubgroupID] = subgroup_total;
    barrier();
    // The first subgroup turns the subgroup totals into exclusive
    // prefixes, a subgroup's width at a time.
    if (gl_SubgroupID == 0) {
      uint running = 0;
      for (uint base = 0; base < gl_NumSubgroups; base += gl_SubgroupSize) {
        const uint s = base + gl_SubgroupInvocationID;
        const uint c = s < gl_NumSubgroups ? s_scan[s] : 0u;
        const uint inclusive = subgroupInclusiveAdd(c);
        if (s < gl_NumSubgroups) s_scan[s] = running + inclusive - c;
        running += subgroupAdd(c);
      }
      if (subgroupElect()) s_total = running;
    }
    barrier();
    result = uvec2(s_scan[gl_SubgroupID] + below, s_total);
  } else {
    // Inclusive Hillis-Steele scan.
    s_scan[lid] = mine ? 1u : 0u;
    barrier();
    for (uint offset = 1; offset < wg; offset <<= 1) {
      const uint add = lid >= offset ? s_scan[lid - offset] : 0u;
      barrier();
      s_scan[lid] += add;
      barrier();
    }
    result = uvec2(s_scan[lid] - (mine ? 1u : 0u), s_scan[wg - 1]);
  }
  barrier();  // s_scan is reused by the next chunk
  return result;
}

void accumulate() {
  const uint wg = gl_WorkGroupSize.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint j = gl_WorkGroupID.x * wg + lid;
  const int first_row = int(gl_WorkGroupID.y * p.rows_per_block);
  const int end_row = int(min(gl_WorkGroupID.y * p.rows_per_block + p.rows_per_block, p.rows));
  for (uint chunk = 0; chunk < p.n; chunk += wg) {  // uniform: barriers are safe
    const uint i = chunk + lid;
    const int k = i < p.n ? load_index(i) : -1;
    const bool mine = k >= first_row && k < end_row && k != p.padding_idx;
    const uvec2 prefix = group_prefix(mine);
    if (mine) {
      s_row[prefix.x] = k;
      s_from[prefix.x] = i;
    }
    barrier();
    if (j < p.cols) {
      for (uint u = 0; u < prefix.y; ++u) {
        const REAL g =
            load_grad(p.grad_addr, int(s_from[u]) * p.grad_strides[0] + int(j) * p.grad_strides[1]);
        const int at = s_row[u] * int(p.cols) + int(j);
        Reals(p.acc_addr).v[at] = Reals(p.acc_addr).v[at] + g;
      }
    }
    barrier();
  }
}

void convert() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const uint r = i / p.cols;
    const int j = int(i - r * p.cols);
    store_grad_weight(p.grad_weight_addr,
                      int(r) * p.grad_weight_strides[0] + j * p.grad_weight_strides[1],
                      Reals(p.acc_addr).v[i]);
  }
}

void main() {
  if (kPass == 0) {
    accumulate();
  } else {
    convert();
  }
}
