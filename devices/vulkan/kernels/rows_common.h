// What the row kernels (softmax.cc, layer_norm.cc, batch_norm.cc) share:
// which dtypes and sizes their shaders take, addresses for push constants,
// outputs written through a contiguous temporary when they are strided,
// and the choice between a work group and a subgroup per row (rows.glsl).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "devices/vulkan/kernels/launch.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan::rows {

// f32, and f16 with f32 math. The shaders read through buffers.glsl, which
// needs the 8/16/64-bit storage types.
inline bool native_dtype(const KernelContext& ctx, DType dtype) {
  return (dtype == DType::kF32 || dtype == DType::kF16) &&
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

// Specialization constant: 1 for f16 tensors, 0 for f32.
inline uint32_t half_flag(DType dtype) { return dtype == DType::kF16 ? 1 : 0; }

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

// How a row shader maps rows to invocations: a subgroup per row for rows up
// to kSubgroupRowMax elements on devices with subgroup arithmetic (no
// barriers, several rows per work group), else a work group per row.
struct RowTeams {
  std::string shader;      // base, or base + "_subgroup"
  uint32_t subgroup_rows;  // rows.glsl's kSubgroupRows
  uint32_t groups;         // work groups to dispatch (the shader loops beyond)
};

inline constexpr int64_t kSubgroupRowMax = 1024;

inline RowTeams row_teams(const KernelContext& ctx, const std::string& base, int64_t rows,
                          int64_t n, bool allow_subgroup_rows = true) {
  VulkanContext& context = vulkan_context_of(ctx);
  const VulkanDeviceInfo& info = context.info();
  RowTeams t{base, 0, 1};
  int64_t rows_per_group = 1;
  if (info.subgroup_arithmetic && info.subgroup_size > 0) {
    t.shader = base + "_subgroup";
    const int64_t wg = context.pipelines().workgroup_size();
    if (allow_subgroup_rows && n <= kSubgroupRowMax && wg % info.subgroup_size == 0) {
      t.subgroup_rows = 1;
      rows_per_group = wg / info.subgroup_size;
    }
  }
  const int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
  t.groups = static_cast<uint32_t>(std::clamp<int64_t>(groups, 1, kMaxWorkGroupsPerDim));
  return t;
}

}  // namespace tessera::vulkan::rows
