// index_bounds: {min, max} of an integer index tensor (every integer
// dtype, any strides, rank <= 8 after coalescing) in shaders/
// index_bounds.comp, one launch for small tensors and a partials pass plus
// a final pass for large ones. Also the helpers of index_elements.h that
// the other indexing kernels share. Ranks beyond 8, offsets beyond 32 bits
// and devices without 8/16/64-bit shader types stage through the host.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {

namespace {

constexpr int kIndexBoundsMaxRank = 8;  // kMaxRank in shaders/index_bounds.comp

// The element kinds of shaders/index_bounds.comp.
enum class IndexKind : uint32_t { kU8, kI8, kI16, kI32, kI64, kPartials };

struct IndexBoundsParams {
  uint64_t out;
  uint64_t index;
  int64_t ignore;
  uint32_t numel;
  uint32_t rank;
  uint32_t has_ignore;
  uint32_t sizes[kIndexBoundsMaxRank];
  int32_t strides[kIndexBoundsMaxRank];
};

bool index_kind_of(DType dtype, IndexKind* kind) {
  switch (dtype) {
    case DType::kU8: *kind = IndexKind::kU8; return true;
    case DType::kI8: *kind = IndexKind::kI8; return true;
    case DType::kI16: *kind = IndexKind::kI16; return true;
    case DType::kI32: *kind = IndexKind::kI32; return true;
    case DType::kI64: *kind = IndexKind::kI64; return true;
    default: return false;
  }
}

// Elements each invocation reduces before a second work group is worth
// it, and the most partials the final pass takes (one work group reads
// them all).
constexpr int64_t kElementsPerInvocation = 16;
constexpr int64_t kMaxPartialGroups = 256;

void index_bounds_kernel(const KernelContext& ctx, Tensor& out, const Tensor& index) {
  if (!launch_index_bounds(ctx, out, index, nullptr)) {
    run_on_host<kernels::IndexBounds>(ctx, out, index);
  }
}

}  // namespace

bool add_kind_of(DType dtype, AddKind* kind) {
  switch (dtype) {
    case DType::kF32: *kind = AddKind::kF32; return true;
    case DType::kF16: *kind = AddKind::kF16; return true;
    case DType::kBF16: *kind = AddKind::kBF16; return true;
    case DType::kU8:
    case DType::kI8: *kind = AddKind::kWrap8; return true;
    case DType::kI16: *kind = AddKind::kWrap16; return true;
    case DType::kI32: *kind = AddKind::kWrap32; return true;
    case DType::kI64: *kind = AddKind::kWrap64; return true;
    case DType::kBool: *kind = AddKind::kBool; return true;
    case DType::kF64: *kind = AddKind::kF64; return true;
    default: return false;
  }
}

std::optional<std::string> moving_shader(const KernelContext& ctx, std::string_view family,
                                         size_t itemsize) {
  if (words_only_moves(itemsize)) return std::string(family) + "_words";
  if (!vulkan_context_of(ctx).has_sized_shader_types()) return std::nullopt;
  return std::string(family);
}

std::optional<std::string> adding_shader(const KernelContext& ctx, std::string_view family,
                                         AddKind kind) {
  const VulkanContext& vk = vulkan_context_of(ctx);
  if (words_only_adds(kind)) return std::string(family) + "_words";
  if (kind == AddKind::kF64) {
    if (!vk.has_f64_shaders()) return std::nullopt;
    return std::string(family) + "_f64";
  }
  if (!vk.has_sized_shader_types()) return std::nullopt;
  return std::string(family);
}

bool float_kind_of(DType dtype, FloatKind* kind) {
  switch (dtype) {
    case DType::kF32: *kind = FloatKind::kF32; return true;
    case DType::kF16: *kind = FloatKind::kF16; return true;
    case DType::kBF16: *kind = FloatKind::kBF16; return true;
    default: return false;
  }
}

std::optional<FloatShader> float_shader(const KernelContext& ctx, std::string_view family,
                                        DType dtype) {
  const VulkanContext& vk = vulkan_context_of(ctx);
  if (dtype == DType::kF64) {
    if (!vk.has_f64_shaders()) return std::nullopt;
    return FloatShader{std::string(family) + "_f64", FloatKind::kF32, DType::kF64};
  }
  FloatKind kind;
  if (!float_kind_of(dtype, &kind) || !vk.has_sized_shader_types()) return std::nullopt;
  return FloatShader{std::string(family), kind, DType::kF32};
}

int64_t first_bad_index(const Tensor& index, int64_t size, const int64_t* ignore) {
  for (int64_t v : index.to_vector<int64_t>()) {
    if (ignore && v == *ignore) continue;
    if (v < 0 || v >= size) return v;
  }
  return 0;  // not reached when the bounds found one
}

bool reach_fits_int32(const Tensor& t) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  int64_t reach = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d], stride = std::llabs(t.strides()[d]);
    if (size > kLimit || stride > kLimit) return false;
    if (size > 0) reach += (size - 1) * stride;
    if (reach > kLimit) return false;
  }
  return true;
}

bool launch_index_bounds(const KernelContext& ctx, Tensor& out, const Tensor& index,
                         const int64_t* ignore) {
  VulkanContext& vk = vulkan_context_of(ctx);
  IndexKind kind;
  StridedLayout layout = coalesce(index.sizes(), {&index.strides()});
  if (!index_kind_of(index.dtype(), &kind) || !vk.has_sized_shader_types() ||
      !layout.fits(kIndexBoundsMaxRank) || index.numel() == 0) {
    return false;
  }
  const uint32_t subgroups = vk.info().subgroup_arithmetic ? 1 : 0;
  const int64_t per_group = static_cast<int64_t>(vk.pipelines().workgroup_size()) *
                            kElementsPerInvocation;
  const int64_t groups =
      std::clamp<int64_t>((layout.numel + per_group - 1) / per_group, 1, kMaxPartialGroups);
  IndexBoundsParams p{};
  p.index = reinterpret_cast<uint64_t>(index.data_ptr());
  p.ignore = ignore ? *ignore : 0;
  p.has_ignore = ignore ? 1 : 0;
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.strides[d] = static_cast<int32_t>(layout.strides[0][d]);
  }
  if (groups == 1) {
    p.out = reinterpret_cast<uint64_t>(out.data_ptr());
    launch_groups(ctx, "index_bounds", {static_cast<uint32_t>(kind), subgroups}, p, 1);
    return true;
  }
  // Mins then maxes of each group, reduced by a second, single-group pass.
  Tensor partials = empty({2 * groups}, TensorOptions(DType::kI64, ctx.device));
  p.out = reinterpret_cast<uint64_t>(partials.data_ptr());
  launch_groups(ctx, "index_bounds", {static_cast<uint32_t>(kind), subgroups}, p,
                static_cast<uint32_t>(groups));
  IndexBoundsParams final_pass{};
  final_pass.out = reinterpret_cast<uint64_t>(out.data_ptr());
  final_pass.index = p.out;
  final_pass.numel = static_cast<uint32_t>(groups);
  final_pass.rank = 1;
  final_pass.sizes[0] = static_cast<uint32_t>(groups);
  final_pass.strides[0] = 1;
  launch_groups(ctx, "index_bounds", {static_cast<uint32_t>(IndexKind::kPartials), subgroups},
                final_pass, 1);
  return true;
}

std::optional<std::pair<int64_t, int64_t>> read_index_bounds(const KernelContext& ctx,
                                                             const Tensor& index,
                                                             const int64_t* ignore) {
  Tensor bounds = empty({2}, TensorOptions(DType::kI64, ctx.device));
  if (!launch_index_bounds(ctx, bounds, index, ignore)) return std::nullopt;
  const std::vector<int64_t> v = bounds.to_vector<int64_t>();
  return std::make_pair(v[0], v[1]);
}

void register_index_bounds_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::IndexBounds>(type, index_bounds_kernel);
}

}  // namespace tessera::vulkan
