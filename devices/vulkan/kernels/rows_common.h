// What the row kernels (softmax.cc, layer_norm.cc, batch_norm.cc) share:
// which dtypes and sizes their shaders take, addresses for push constants,
// outputs written through a contiguous temporary when they are strided,
// and the choice between a work group and a subgroup per row (rows.glsl).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/launch.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan::rows {

// f32, and f16 and bf16 with f32 math. The shaders read through
// element_kinds.glsl, which needs the 8/16/64-bit storage types.
inline bool native_dtype(const KernelContext& ctx, DType dtype) {
  return (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) &&
         vulkan_context_of(ctx).has_sized_shader_types();
}

// The shaders index with 32-bit unsigned offsets and counts; 2^31 keeps
// every sum of an offset and a size in range.
inline bool fits_offsets(int64_t numel) {
  return numel < int64_t{std::numeric_limits<int32_t>::max()};
}

// A push-constant address; 0 for an undefined tensor (the shaders test it).
inline uint64_t address(const Tensor& t) {
  return t.defined() ? reinterpret_cast<uint64_t>(t.data_ptr()) : 0;
}

// Specialization constant: the storage kind of f32, f16 or bf16 tensors
// (ElementKind's value, as element_kinds.glsl's load_float / store_float
// take it).
inline uint32_t storage_kind(DType dtype) {
  return static_cast<uint32_t>(element_kind(dtype).value_or(ElementKind::kF32));
}

// An output the shaders write densely (in `dtype`, by default out's): the
// tensor itself when contiguous and of that dtype, else a contiguous
// temporary copied (and converted) into it by finish().
class DenseOut {
 public:
  explicit DenseOut(Tensor& out) : DenseOut(out, out.defined() ? out.dtype() : DType::kF32) {}
  DenseOut(Tensor& out, DType dtype)
      : out_(out),
        dense_(!out.defined() || (out.is_contiguous() && out.dtype() == dtype)
                   ? out
                   : empty(out.sizes(), TensorOptions(dtype, out.device()))) {}
  const Tensor& tensor() const { return dense_; }
  uint64_t address() const { return rows::address(dense_); }
  void finish() {
    if (dense_.defined() && !dense_.is_same(out_)) out_.copy_(dense_);
  }

 private:
  Tensor& out_;
  Tensor dense_;
};

// llvmpipe (lavapipe) silently ends the loops of a shader invocation once
// that invocation has run 65535 loop iterations in total, all loops counted
// together (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS): a longer row would be
// cut short, not slow. The kernels estimate each invocation's iterations
// and stage through the host (or take another layout) beyond this bound.
inline constexpr int64_t kMaxLoopIterations = 60000;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How a row shader maps rows to invocations: a subgroup per row (no
// barriers, several rows per work group) or a work group per row.
struct RowTeams {
  std::string shader;      // base, or base + "_subgroup"
  uint32_t subgroup_rows;  // rows.glsl's kSubgroupRows
  uint32_t groups;         // work groups to dispatch (the shader loops beyond)
  int64_t teams;           // row teams in the dispatch
  int64_t team_size;       // invocations per team
  int64_t reduce_iterations;  // loop iterations of one team_sum / team_max

  // An invocation's loop iterations over `rows` rows of n elements, with
  // `passes` loops over the row and `reductions` team reductions per row.
  int64_t loop_iterations(int64_t rows, int64_t n, int passes, int reductions) const {
    return ceil_div(rows, teams) *
           (passes * ceil_div(n, team_size) + reductions * reduce_iterations + 1);
  }
  // Within kMaxLoopIterations (else the kernel must not launch it).
  bool fits = false;
};

// Subgroup rows for rows up to this many elements, or when they still fill
// kMinSubgroupRowGroups work groups.
inline constexpr int64_t kSubgroupRowMax = 1024;
inline constexpr int64_t kMinSubgroupRowGroups = 64;

// The values per invocation that softmax's and layer_norm's forward keep in
// registers (kCachedValues in shaders/softmax.glsl and layer_norm.glsl):
// a row that fits is read from memory once.
inline constexpr int64_t kRowCachedValues = 32;

// The teams for `rows` rows of n elements, each row read in `passes` loops
// with `reductions` team reductions. `cached`: the shader keeps rows of up
// to kRowCachedValues per invocation in registers; on GPUs a row then gets
// the smallest team that holds it (a subgroup, else the work group), since
// reading it once matters more there than a work-group team's barriers.
// Subgroup rows need subgroup arithmetic; on llvmpipe they are always
// taken: it runs a work group's invocations as loops on one thread, each
// barrier a coroutine switch, and a work group per 1100-element row was 10x
// slower than a subgroup per row.
inline RowTeams row_teams(const KernelContext& ctx, const std::string& base, int64_t rows,
                          int64_t n, int passes, int reductions, bool cached = false) {
  VulkanContext& context = vulkan_context_of(ctx);
  const VulkanDeviceInfo& info = context.info();
  const int64_t wg = context.pipelines().workgroup_size();
  auto make = [&](bool subgroup_variant, bool subgroup_rows) {
    RowTeams t{subgroup_variant ? base + "_subgroup" : base, subgroup_rows ? 1u : 0u, 1, 1, wg, 0};
    int64_t rows_per_group = 1;
    if (subgroup_rows) {
      t.team_size = info.subgroup_size;
      rows_per_group = wg / info.subgroup_size;
    } else if (subgroup_variant) {
      t.reduce_iterations = ceil_div(wg, info.subgroup_size);  // adding the subgroups' partials
    } else {
      for (int64_t live = wg; live > 1; live = (live + 1) / 2) ++t.reduce_iterations;  // the tree
    }
    t.groups = static_cast<uint32_t>(
        std::clamp<int64_t>(ceil_div(rows, rows_per_group), 1, kMaxWorkGroupsPerDim));
    t.teams = int64_t{t.groups} * rows_per_group;
    t.fits = t.loop_iterations(rows, n, passes, reductions) <= kMaxLoopIterations;
    return t;
  };
  if (!info.subgroup_arithmetic || info.subgroup_size == 0) return make(false, false);
  const RowTeams per_group = make(true, false);
  if (wg % info.subgroup_size != 0) return per_group;
  const RowTeams per_subgroup = make(true, true);
  const bool cpu_driver = info.driver == "llvmpipe";
  if (cached && !cpu_driver) {
    if (n <= info.subgroup_size * kRowCachedValues && per_subgroup.fits) return per_subgroup;
    if (n <= wg * kRowCachedValues && per_group.fits) return per_group;
  }
  const bool prefer = cpu_driver || n <= kSubgroupRowMax ||
                      ceil_div(rows, wg / info.subgroup_size) >= kMinSubgroupRowGroups;
  return prefer && per_subgroup.fits ? per_subgroup : per_group;
}

// An elementwise-style launch's (launch()) invocations for `items` items.
inline int64_t items_per_invocation(const KernelContext& ctx, int64_t items) {
  const int64_t wg = vulkan_context_of(ctx).pipelines().workgroup_size();
  const int64_t groups = std::clamp<int64_t>(ceil_div(items, wg), 1,
                                             vulkan_context_of(ctx).max_workgroups_x());
  return ceil_div(items, groups * wg);
}

}  // namespace tessera::vulkan::rows
