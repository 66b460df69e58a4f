// pointwise_binary for f32 inputs, broadcast through stride-0 dims: the
// comparisons (eq, ne, lt, le, gt, ge) into bool in shaders/compare_f32.comp
// (which needs 8-bit storage), maximum, minimum and the activation
// gradients in shaders/pointwise_f32.comp. The family's other ops
// (integer division, remainder, pow, atan2, bitwise, logical) and other
// dtypes stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::PointwiseBinaryOp;

constexpr int kCompareMaxRank = 5;  // kMaxRank in shaders/compare_f32.comp, pointwise_f32.comp

// The push constants of both shaders (compare_f32.comp ignores p0).
struct CompareParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint32_t numel;
  float p0;
  uint32_t rank;
  uint32_t sizes[kCompareMaxRank];
  int32_t out_strides[kCompareMaxRank];
  int32_t a_strides[kCompareMaxRank];
  int32_t b_strides[kCompareMaxRank];
};

bool is_comparison(PointwiseBinaryOp op) {
  switch (op) {
    case PointwiseBinaryOp::kEq:
    case PointwiseBinaryOp::kNe:
    case PointwiseBinaryOp::kLt:
    case PointwiseBinaryOp::kLe:
    case PointwiseBinaryOp::kGt:
    case PointwiseBinaryOp::kGe: return true;
    default: return false;
  }
}

bool is_f32_valued(PointwiseBinaryOp op) {
  switch (op) {
    case PointwiseBinaryOp::kMaximum:
    case PointwiseBinaryOp::kMinimum:
    case PointwiseBinaryOp::kThresholdBackward:
    case PointwiseBinaryOp::kGeluBackward:
    case PointwiseBinaryOp::kGeluTanhBackward:
    case PointwiseBinaryOp::kSiluBackward:
    case PointwiseBinaryOp::kSigmoidBackward:
    case PointwiseBinaryOp::kTanhBackward: return true;
    default: return false;
  }
}

// The shader for (op, out) when one handles it, else nullptr.
const char* shader_for(const KernelContext& ctx, PointwiseBinaryOp op, const Tensor& out,
                       const Tensor& a, const Tensor& b) {
  if (a.dtype() != DType::kF32 || b.dtype() != DType::kF32) return nullptr;
  if (is_comparison(op)) {
    const bool ok = out.dtype() == DType::kBool && vulkan_context_of(ctx).has_sized_shader_types();
    return ok ? "compare_f32" : nullptr;
  }
  return is_f32_valued(op) && out.dtype() == DType::kF32 ? "pointwise_f32" : nullptr;
}

void pointwise_binary_kernel(const KernelContext& ctx, PointwiseBinaryOp op, Tensor& out,
                             const Tensor& a, const Tensor& b, Scalar p0) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides()});
  const char* shader = shader_for(ctx, op, out, a, b);
  if (shader == nullptr || !layout.fits(kCompareMaxRank)) {
    run_on_host<kernels::PointwiseBinary>(ctx, op, out, a, b, p0);
    return;
  }
  CompareParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.a = reinterpret_cast<uint64_t>(a.data_ptr());
  p.b = reinterpret_cast<uint64_t>(b.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.p0 = op == PointwiseBinaryOp::kThresholdBackward ? p0.to<float>() : 0.0f;
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.a_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.b_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
  }
  launch(ctx, shader, {static_cast<uint32_t>(op)}, p, layout.numel);
}

// The shader's op numbers are the enum's values.
static_assert(static_cast<int>(PointwiseBinaryOp::kMaximum) == 4 &&
              static_cast<int>(PointwiseBinaryOp::kThresholdBackward) == 12 &&
              static_cast<int>(PointwiseBinaryOp::kTanhBackward) == 17 &&
              static_cast<int>(PointwiseBinaryOp::kEq) == 18 &&
              static_cast<int>(PointwiseBinaryOp::kGe) == 23);

}  // namespace

void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::PointwiseBinary>(type, pointwise_binary_kernel);
}

}  // namespace tessera::vulkan
