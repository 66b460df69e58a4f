#include "devices/vulkan/kernels/gemm.h"

#include <algorithm>
#include <limits>

#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/vulkan_device.h"

namespace tessera::vulkan {
namespace {

// The output tile of one work group: kTileM x kTileN in gemm_tiled.glsl
// and in gemm_subgroup.glsl.
struct Tile {
  int64_t m, n;
};
// The subgroup shader's row sets (its specialization constant 1): two
// halve its loads per multiply-add, one wastes less on short products.
uint32_t row_sets(const GemmProblem& pr) { return pr.m <= 64 ? 1 : 2; }

bool is_subgroup(GemmVariant variant) {
  return variant == GemmVariant::kSubgroupF32 || variant == GemmVariant::kSubgroupF16 ||
         variant == GemmVariant::kSubgroupBF16 || variant == GemmVariant::kSubgroupInt;
}

Tile tile_of(GemmVariant variant, const GemmProblem& pr) {
  if (variant == GemmVariant::kCoopMatrixF16) return Tile{128, 128};
  return is_subgroup(variant) ? Tile{64 * row_sets(pr), 32} : Tile{64, 64};
}

// The cooperative-matrix shader's slices follow each operand's contiguous
// dimension: along the rows for a transposed A, or for B = W^T of a
// linear layer (its specialization constants 4 and 5).
bool contiguous_along_rows(const GemmOperand& op) {
  return op.row_stride == 1 && op.col_stride != 1;
}

const char* shader_of(GemmVariant variant, DType dtype) {
  if (variant == GemmVariant::kSubgroupInt) {
    switch (dtype) {
      case DType::kI16: return "gemm_subgroup_i16";
      case DType::kI8: return "gemm_subgroup_i8";
      case DType::kU8: return "gemm_subgroup_u8";
      default: return "gemm_subgroup_i32";
    }
  }
  switch (variant) {
    case GemmVariant::kTiledF16: return "gemm_f16";
    case GemmVariant::kTiledBF16: return "gemm_bf16";
    case GemmVariant::kTiledF64: return "gemm_f64";
    case GemmVariant::kTiledI64: return "gemm_i64";
    case GemmVariant::kSubgroupF32: return "gemm_subgroup_f32";
    case GemmVariant::kSubgroupF16: return "gemm_subgroup_f16";
    case GemmVariant::kSubgroupBF16: return "gemm_subgroup_bf16";
    case GemmVariant::kCoopMatrixF16: return "gemm_coopmat_f16";
    default: return "gemm_f32";
  }
}

// The flags push constant's bits (gemm_tiled.glsl, gemm_subgroup.glsl).
constexpr uint32_t kGemmAccumulate = 1;
constexpr uint32_t kGemmRowBias = 2;

struct GemmParams {
  uint64_t a, b, c, bias;
  uint32_t m, n, k, flags;
  int32_t a_batch_stride, a_row_stride, a_col_stride;
  int32_t b_batch_stride, b_row_stride, b_col_stride;
  int32_t c_batch_stride, c_row_stride, c_col_stride;
  int32_t bias_stride;
};

// True when every element offset of an operand with these strides over
// batches x rows x cols (each >= 1) is a non-negative int32.
bool offsets_fit(const GemmOperand& op, int64_t batches, int64_t rows, int64_t cols) {
  if (op.batch_stride < 0 || op.row_stride < 0 || op.col_stride < 0) return false;
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  // Each stride at most kMax, so the products below do not overflow int64.
  if (op.batch_stride > kMax || op.row_stride > kMax || op.col_stride > kMax) return false;
  const int64_t last =
      (batches - 1) * op.batch_stride + (rows - 1) * op.row_stride + (cols - 1) * op.col_stride;
  return last <= kMax;
}

int64_t batch_chunk(const GemmProblem& pr) {
  return std::min<int64_t>(pr.batch, kMaxWorkGroupsPerDim);
}

}  // namespace

GemmVariant choose_gemm_variant(const KernelContext& ctx, const GemmProblem& pr) {
  const VulkanDeviceInfo& info = vulkan_context_of(ctx).info();
  GemmVariant variant = GemmVariant::kNone;
  // 8-wide subgroups with shuffles: llvmpipe (see gemm_subgroup.glsl).
  const bool subgroup = info.subgroup_size == 8 && info.subgroup_arithmetic;
  if (pr.dtype == DType::kF32) {
    variant = subgroup ? GemmVariant::kSubgroupF32 : GemmVariant::kTiledF32;
  } else if (pr.dtype == DType::kF16 && info.shader_f16) {
    // The cooperative-matrix shader's 8 subgroups of 32 share its tile.
    const bool coopmat = info.coopmat_m != 0 && info.subgroup_size == 32;
    variant = coopmat    ? GemmVariant::kCoopMatrixF16
              : subgroup ? GemmVariant::kSubgroupF16
                         : GemmVariant::kTiledF16;
  } else if (pr.dtype == DType::kBF16 && vulkan_context_of(ctx).has_sized_shader_types()) {
    variant = subgroup ? GemmVariant::kSubgroupBF16 : GemmVariant::kTiledBF16;
  } else if (pr.dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders()) {
    variant = GemmVariant::kTiledF64;
  } else if (pr.dtype == DType::kI64 && vulkan_context_of(ctx).has_sized_shader_types()) {
    variant = GemmVariant::kTiledI64;
  } else if (subgroup && (pr.dtype == DType::kI32 ||
                          ((pr.dtype == DType::kI16 || pr.dtype == DType::kI8 ||
                            pr.dtype == DType::kU8) &&
                           vulkan_context_of(ctx).has_sized_shader_types()))) {
    variant = GemmVariant::kSubgroupInt;
  }
  if (variant == GemmVariant::kNone) return variant;
  if (pr.batch < 1 || pr.m < 1 || pr.n < 1 || pr.k < 0) return GemmVariant::kNone;
  const Tile tile = tile_of(variant, pr);
  const int64_t tiles_n = (pr.n + tile.n - 1) / tile.n;
  const int64_t tiles_m = (pr.m + tile.m - 1) / tile.m;
  if (tiles_n > kMaxWorkGroupsPerDim || tiles_m > kMaxWorkGroupsPerDim) return GemmVariant::kNone;
  if (pr.k > std::numeric_limits<int32_t>::max()) return GemmVariant::kNone;
  const int64_t chunk = batch_chunk(pr);
  const int64_t k = std::max<int64_t>(pr.k, 1);
  if (!offsets_fit(pr.a, chunk, pr.m, k) || !offsets_fit(pr.b, chunk, k, pr.n) ||
      !offsets_fit(pr.c, chunk, pr.m, pr.n)) {
    return GemmVariant::kNone;
  }
  if (pr.bias != nullptr && !offsets_fit(GemmOperand{pr.bias, 0, pr.bias_stride, 0}, 1, pr.m, 1)) {
    return GemmVariant::kNone;
  }
  return variant;
}

// The longest K one launch takes. Each invocation loops over K, and
// llvmpipe silently stops an invocation's loops after 65535 iterations in
// all; longer products run as several launches adding into C.
constexpr int64_t kMaxKPerLaunch = 32768;

void run_gemm(const KernelContext& ctx, const GemmProblem& pr, GemmVariant variant) {
  if (pr.k > kMaxKPerLaunch) {
    const int64_t elem = static_cast<int64_t>(itemsize(pr.dtype));
    for (int64_t k0 = 0; k0 < pr.k; k0 += kMaxKPerLaunch) {
      GemmProblem part = pr;
      part.k = std::min(kMaxKPerLaunch, pr.k - k0);
      part.a.data = static_cast<const char*>(pr.a.data) + k0 * pr.a.col_stride * elem;
      part.b.data = static_cast<const char*>(pr.b.data) + k0 * pr.b.row_stride * elem;
      if (k0 > 0) {  // the first part sets C (and adds the bias), the rest add to it
        part.accumulate = true;
        part.bias = nullptr;
      }
      run_gemm(ctx, part, variant);
    }
    return;
  }
  const char* shader = shader_of(variant, pr.dtype);
  const int64_t elem = static_cast<int64_t>(itemsize(pr.dtype));
  GemmParams p{};
  p.bias = reinterpret_cast<uint64_t>(pr.bias);
  p.m = static_cast<uint32_t>(pr.m);
  p.n = static_cast<uint32_t>(pr.n);
  p.k = static_cast<uint32_t>(pr.k);
  p.flags = (pr.accumulate ? kGemmAccumulate : 0) | (pr.bias != nullptr ? kGemmRowBias : 0);
  p.a_batch_stride = static_cast<int32_t>(pr.a.batch_stride);
  p.a_row_stride = static_cast<int32_t>(pr.a.row_stride);
  p.a_col_stride = static_cast<int32_t>(pr.a.col_stride);
  p.b_batch_stride = static_cast<int32_t>(pr.b.batch_stride);
  p.b_row_stride = static_cast<int32_t>(pr.b.row_stride);
  p.b_col_stride = static_cast<int32_t>(pr.b.col_stride);
  p.c_batch_stride = static_cast<int32_t>(pr.c.batch_stride);
  p.c_row_stride = static_cast<int32_t>(pr.c.row_stride);
  p.c_col_stride = static_cast<int32_t>(pr.c.col_stride);
  p.bias_stride = static_cast<int32_t>(pr.bias_stride);
  const Tile tile = tile_of(variant, pr);
  const auto tiles_n = static_cast<uint32_t>((pr.n + tile.n - 1) / tile.n);
  const auto tiles_m = static_cast<uint32_t>((pr.m + tile.m - 1) / tile.m);
  const int64_t chunk = batch_chunk(pr);
  for (int64_t z0 = 0; z0 < pr.batch; z0 += chunk) {
    // Later chunks start further along each operand (pointer arithmetic on
    // the buffer device addresses).
    auto at = [&](const GemmOperand& op) {
      return reinterpret_cast<uint64_t>(op.data) + static_cast<uint64_t>(z0 * op.batch_stride * elem);
    };
    p.a = at(pr.a);
    p.b = at(pr.b);
    p.c = at(pr.c);
    const auto groups_z = static_cast<uint32_t>(std::min(chunk, pr.batch - z0));
    if (is_subgroup(variant)) {
      launch_groups(ctx, shader, {row_sets(pr)}, p, tiles_n, tiles_m, groups_z);
    } else if (variant == GemmVariant::kCoopMatrixF16) {
      const VulkanDeviceInfo& info = vulkan_context_of(ctx).info();
      launch_groups(ctx, shader,
                    {info.coopmat_m, info.coopmat_n, info.coopmat_k,
                     contiguous_along_rows(pr.a) ? 1u : 0u, contiguous_along_rows(pr.b) ? 1u : 0u},
                    p, tiles_n, tiles_m, groups_z);
    } else {
      launch_groups(ctx, shader, {}, p, tiles_n, tiles_m, groups_z);
    }
  }
}

static_assert(sizeof(GemmParams) <= kPushConstantBytes);

}  // namespace tessera::vulkan
