// pointwise_binary: out = a (op) b, broadcast through stride-0 dims. f32
// comparisons (eq .. ge, into bool) run in shaders/compare_f32.comp,
// f32 maximum, minimum, fmod, logaddexp(2) and the activation gradients in
// shaders/pointwise_f32.comp (neither needs optional shader features);
// every other (op, dtype) the CPU kernel defines, for f32, f16, bf16, i32,
// i64, u8, i8, i16 and bool, in shaders/pointwise.comp (needs 8/16/64-bit
// types): rounding divisions, remainder, fmod, pow, atan2, bitwise ops,
// shifts, logical ops and comparisons. Integer division by zero raises ValueError
// as the CPU kernel does, from a flag the shader sets (read back after the
// dispatch, so those ops wait for the device). f64 runs in
// shaders/pointwise_f64.comp where the device has shaderFloat64 (every
// floating op). f64 elsewhere
// and its other ops, combinations the CPU kernel rejects (it raises their
// errors) and layouts beyond the push constants stage through the host.
#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/pointwise_shader_ops.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

// A switch over an op enum without a case for a new op is an error here.
#pragma GCC diagnostic error "-Wswitch"

namespace tessera::vulkan {

// Every op listed, with no default, as typed_shader_handles below.
bool is_f32_shader_op(kernels::PointwiseBinaryOp op) {
  using Op = kernels::PointwiseBinaryOp;
  switch (op) {
    case Op::kMaximum:
    case Op::kMinimum:
    case Op::kFmod:
    case Op::kLogaddexp:
    case Op::kLogaddexp2:
    case Op::kThresholdBackward:
    case Op::kGeluBackward:
    case Op::kGeluTanhBackward:
    case Op::kSiluBackward:
    case Op::kSigmoidBackward:
    case Op::kTanhBackward:
    case Op::kHardswishBackward:
    case Op::kHardsigmoidBackward: return true;
    case Op::kDivTrunc:
    case Op::kDivFloor:
    case Op::kRemainder:
    case Op::kPow:
    case Op::kAtan2:
    case Op::kBitwiseAnd:
    case Op::kBitwiseOr:
    case Op::kBitwiseXor:
    case Op::kShiftLeft:
    case Op::kShiftRight:
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
    case Op::kLogicalAnd:
    case Op::kLogicalOr:
    case Op::kLogicalXor: return false;
  }
  return false;
}

namespace {

using kernels::PointwiseBinaryOp;

constexpr int kCompareMaxRank = 5;    // kMaxRank in shaders/compare_f32.comp, pointwise_f32.comp
constexpr int kPointwiseMaxRank = 5;  // kMaxRank in shaders/pointwise.comp

// The push constants of compare_f32.comp and pointwise_f32.comp (compare
// ignores p0).
struct PointwiseF32Params {
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

struct PointwiseParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint64_t zero_divisor_flag;
  EncodedScalar p0;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kPointwiseMaxRank];
  int32_t out_strides[kPointwiseMaxRank];
  int32_t a_strides[kPointwiseMaxRank];
  int32_t b_strides[kPointwiseMaxRank];
};

bool is_comparison(PointwiseBinaryOp op) {
  using Op = PointwiseBinaryOp;
  return op == Op::kEq || op == Op::kNe || op == Op::kLt || op == Op::kLe || op == Op::kGt ||
         op == Op::kGe;
}

using kernels::is_bool_valued;

bool is_integer_division(PointwiseBinaryOp op, DType dtype) {
  return !is_floating(dtype) &&
         (op == PointwiseBinaryOp::kDivTrunc || op == PointwiseBinaryOp::kDivFloor ||
          op == PointwiseBinaryOp::kRemainder || op == PointwiseBinaryOp::kFmod);
}

// Whether pointwise.comp computes (op, dtype) as the CPU kernel does.
// Every op is listed, with no default: a new row of the op table does not
// compile here (-Werror=switch, top of file) until it has a shader case or
// is sent to the host.
bool typed_shader_handles(PointwiseBinaryOp op, DType dtype) {
  using Op = PointwiseBinaryOp;
  const bool floating = is_floating(dtype), boolean = dtype == DType::kBool;
  switch (op) {
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
    case Op::kLogicalAnd:
    case Op::kLogicalOr:
    case Op::kLogicalXor:
    case Op::kMaximum:
    case Op::kMinimum: return true;
    case Op::kBitwiseAnd:
    case Op::kBitwiseOr:
    case Op::kBitwiseXor: return !floating;
    case Op::kShiftLeft:
    case Op::kShiftRight: return !floating && !boolean;
    case Op::kDivTrunc:
    case Op::kDivFloor:
    case Op::kRemainder:
    case Op::kFmod:
    case Op::kPow:
    case Op::kThresholdBackward: return !boolean;
    case Op::kAtan2:
    case Op::kLogaddexp:
    case Op::kLogaddexp2:
    case Op::kGeluBackward:
    case Op::kGeluTanhBackward:
    case Op::kSiluBackward:
    case Op::kSigmoidBackward:
    case Op::kTanhBackward:
    case Op::kHardswishBackward:
    case Op::kHardsigmoidBackward: return floating;
  }
  return false;
}

// f32 through compare_f32.comp / pointwise_f32.comp; false for the ops
// they do not handle.
bool launch_f32(const KernelContext& ctx, PointwiseBinaryOp op, Tensor& out, const Tensor& a,
                const Tensor& b, const StridedLayout& layout, const Scalar& p0) {
  const char* shader = nullptr;
  if (is_comparison(op)) {
    if (out.dtype() == DType::kBool && vulkan_context_of(ctx).has_sized_shader_types()) {
      shader = "compare_f32";
    }
  } else if (is_f32_shader_op(op) && out.dtype() == DType::kF32) {
    shader = "pointwise_f32";
  }
  if (shader == nullptr || !layout.fits(kCompareMaxRank)) return false;
  PointwiseF32Params p{};
  fill_layout(p, layout, out, a, b);
  p.p0 = op == PointwiseBinaryOp::kThresholdBackward ? p0.to<float>() : 0.0f;
  launch(ctx, shader, {static_cast<uint32_t>(op)}, p, layout.numel);
  return true;
}

void pointwise_binary_kernel(const KernelContext& ctx, PointwiseBinaryOp op, Tensor& out,
                             const Tensor& a, const Tensor& b, Scalar p0) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides()});
  const DType dtype = a.dtype();
  const bool dtypes_ok =
      b.dtype() == dtype && out.dtype() == (is_bool_valued(op) ? DType::kBool : dtype);
  if (dtypes_ok && dtype == DType::kF32 && launch_f32(ctx, op, out, a, b, layout, p0)) return;
  // The typed shaders, one layout: pointwise_f64.comp (every floating op,
  // typed_shader_handles's set) for f64 where the device has shaderFloat64,
  // pointwise.comp for the element kinds.
  const bool f64 = dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders();
  const std::optional<ElementKind> kind = element_kind(dtype);
  if (!dtypes_ok || !(f64 || (kind && vulkan_context_of(ctx).has_sized_shader_types())) ||
      !typed_shader_handles(op, dtype) || !layout.fits(kPointwiseMaxRank)) {
    run_on_host<kernels::PointwiseBinary>(ctx, op, out, a, b, p0);
    return;
  }
  PointwiseParams p{};
  fill_layout(p, layout, out, a, b);
  if (op == PointwiseBinaryOp::kThresholdBackward) p.p0 = encode_scalar(p0, dtype);
  // Integer division checks its divisors in the shader: a device int set
  // to 1 on a zero, read back after the dispatch.
  Tensor zero_divisor_flag;
  if (is_integer_division(op, dtype)) {
    zero_divisor_flag = zeros({1}, TensorOptions(DType::kI32, ctx.device));
    p.zero_divisor_flag = reinterpret_cast<uint64_t>(zero_divisor_flag.data_ptr());
  }
  if (f64) {
    launch(ctx, "pointwise_f64", {static_cast<uint32_t>(op)}, p, layout.numel);
  } else {
    launch(ctx, "pointwise", {static_cast<uint32_t>(op), kind_constant(*kind)}, p, layout.numel);
  }
  if (zero_divisor_flag.defined()) {
    TESSERA_CHECK(zero_divisor_flag.item<int32_t>() == 0, ValueError, kernels::info(op).name,
                  ": ZeroDivisionError: integer division by zero (", describe(a), " by ",
                  describe(b), ")");
  }
}

}  // namespace

void register_pointwise_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::PointwiseBinary>(type, pointwise_binary_kernel);
}

}  // namespace tessera::vulkan
