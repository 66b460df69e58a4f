// Row teams for the normalization shaders (softmax, layer norm, batch
// norm): a team of invocations shares one row (or channel) and reduces
// over it. The team is the whole work group, or, with kSubgroupRows, one
// subgroup (short rows: no barriers, several rows per work group).
//
// The includer defines ROWS_SUBGROUP to 1 for the variant built on
// GL_KHR_shader_subgroup_arithmetic (only for devices that have it: the
// capability is declared by the module even where unused) and to 0 for the
// shared-memory tree. Every team function must be reached by the whole
// team (uniform control flow: the work group, or the subgroup with
// kSubgroupRows).
#if ROWS_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x_id = 0) in;
// 1: one subgroup per row (only with ROWS_SUBGROUP); 0: one work group per
// row. Kernels' own specialization constants start at 2.
layout(constant_id = 1) const uint kSubgroupRows = 0;

// One slot per invocation (the tree) or per subgroup.
shared vec2 rows_scratch[gl_WorkGroupSize.x];

const bool kTeamIsSubgroup = ROWS_SUBGROUP != 0 && kSubgroupRows != 0;

uint team_size() {
#if ROWS_SUBGROUP
  if (kTeamIsSubgroup) return gl_SubgroupSize;
#endif
  return gl_WorkGroupSize.x;
}

// This invocation's place in its team.
uint team_lane() {
#if ROWS_SUBGROUP
  if (kTeamIsSubgroup) return gl_SubgroupInvocationID;
#endif
  return gl_LocalInvocationID.x;
}

// The first row of this team, and the number of teams in the dispatch
// (rows beyond it: row += team_count()).
uint team_index() {
#if ROWS_SUBGROUP
  if (kTeamIsSubgroup) return gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
#endif
  return gl_WorkGroupID.x;
}

uint team_count() {
#if ROWS_SUBGROUP
  if (kTeamIsSubgroup) return gl_NumWorkGroups.x * gl_NumSubgroups;
#endif
  return gl_NumWorkGroups.x;
}

// Sums of two values over the team, returned to every member. The order of
// additions depends only on the team size: deterministic.
vec2 team_sum(vec2 v) {
#if ROWS_SUBGROUP
  v = subgroupAdd(v);
  if (kTeamIsSubgroup) return v;
  barrier();  // the previous reduction's readers are done with the scratch
  if (subgroupElect()) rows_scratch[gl_SubgroupID] = v;
  barrier();
  vec2 total = rows_scratch[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) total += rows_scratch[i];
  return total;
#else
  const uint lane = gl_LocalInvocationID.x;
  barrier();
  rows_scratch[lane] = v;
  barrier();
  // Halving steps that also work for a work-group size that is not a
  // power of two.
  for (uint live = gl_WorkGroupSize.x; live > 1;) {
    const uint half_count = (live + 1) / 2;
    if (lane < live - half_count) rows_scratch[lane] += rows_scratch[lane + half_count];
    barrier();
    live = half_count;
  }
  return rows_scratch[0];
#endif
}

// Component-wise maxima over the team (no NaN: callers track NaN apart,
// since subgroupMax leaves it undefined).
vec2 team_max(vec2 v) {
#if ROWS_SUBGROUP
  v = subgroupMax(v);
  if (kTeamIsSubgroup) return v;
  barrier();
  if (subgroupElect()) rows_scratch[gl_SubgroupID] = v;
  barrier();
  vec2 total = rows_scratch[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) total = max(total, rows_scratch[i]);
  return total;
#else
  const uint lane = gl_LocalInvocationID.x;
  barrier();
  rows_scratch[lane] = v;
  barrier();
  for (uint live = gl_WorkGroupSize.x; live > 1;) {
    const uint half_count = (live + 1) / 2;
    if (lane < live - half_count) {
      rows_scratch[lane] = max(rows_scratch[lane], rows_scratch[lane + half_count]);
    }
    barrier();
    live = half_count;
  }
  return rows_scratch[0];
#endif
}
