// unary: out = op(in). f32 runs in shaders/unary_f32.comp (f32 out) and
// shaders/predicate_f32.comp (bool out: logical_not, isnan, isinf,
// isfinite, isneginf, isposinf); f16, bf16, i32, i64, u8, i8, i16 and bool in shaders/unary.comp
// (needs 8/16/64-bit types): f16 and bf16 every floating op and predicate,
// integers and bool the ops the CPU kernel defines on them; f64 in
// shaders/unary_f64.comp where the device has shaderFloat64 (every
// floating op). f64 elsewhere, ops the CPU kernel
// rejects for a dtype (it raises their errors) and layouts beyond the push
// constants stage through the host.
#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/pointwise_shader_ops.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

// A switch over an op enum without a case for a new op is an error here.
#pragma GCC diagnostic error "-Wswitch"

namespace tessera::vulkan {

// Whether the shaders have op for floating input: unary_float_ops.glsl
// (unary_f32.comp, unary.comp) and the predicates of predicate_f32.comp
// and unary.comp. Every op is listed, with no default: a new row of the op
// table does not compile here (-Werror=switch, top of file) until it has a
// shader case or is sent to the host.
bool float_shaders_handle(kernels::UnaryOp op) {
  using kernels::UnaryOp;
  switch (op) {
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kSign:
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
    case UnaryOp::kLog:
    case UnaryOp::kLog1p:
    case UnaryOp::kLog2:
    case UnaryOp::kLog10:
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
    case UnaryOp::kReciprocal:
    case UnaryOp::kSin:
    case UnaryOp::kCos:
    case UnaryOp::kTan:
    case UnaryOp::kAsin:
    case UnaryOp::kAcos:
    case UnaryOp::kAtan:
    case UnaryOp::kSinh:
    case UnaryOp::kCosh:
    case UnaryOp::kTanh:
    case UnaryOp::kAsinh:
    case UnaryOp::kAcosh:
    case UnaryOp::kAtanh:
    case UnaryOp::kErf:
    case UnaryOp::kSigmoid:
    case UnaryOp::kRelu:
    case UnaryOp::kSilu:
    case UnaryOp::kHardswish:
    case UnaryOp::kHardsigmoid:
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kTrunc:
    case UnaryOp::kClamp:
    case UnaryOp::kClampMin:
    case UnaryOp::kClampMax:
    case UnaryOp::kLogicalNot:
    case UnaryOp::kIsnan:
    case UnaryOp::kIsinf:
    case UnaryOp::kIsfinite:
    case UnaryOp::kIsneginf:
    case UnaryOp::kIsposinf: return true;
    case UnaryOp::kBitwiseNot: return false;
  }
  return false;
}

namespace {

using kernels::UnaryOp;

constexpr int kUnaryMaxRank = 8;       // kMaxRank in shaders/unary_f32.comp, predicate_f32.comp
constexpr int kUnaryTypedMaxRank = 7;  // kMaxRank in shaders/unary.comp (64-bit bounds)

struct UnaryF32Params {
  uint64_t out;
  uint64_t in;
  uint32_t numel;
  float p0;
  float p1;
  uint32_t rank;
  uint32_t sizes[kUnaryMaxRank];
  int32_t out_strides[kUnaryMaxRank];
  int32_t in_strides[kUnaryMaxRank];
};

struct UnaryParams {
  uint64_t out;
  uint64_t in;
  EncodedScalar p0;
  EncodedScalar p1;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kUnaryTypedMaxRank];
  int32_t out_strides[kUnaryTypedMaxRank];
  int32_t in_strides[kUnaryTypedMaxRank];
};

using kernels::is_predicate;

bool is_clamp(UnaryOp op) {
  return op == UnaryOp::kClamp || op == UnaryOp::kClampMin || op == UnaryOp::kClampMax;
}


// Whether unary.comp computes (op, in's dtype) as the CPU kernel does: the
// ops it defines on integers and bool (bool lacks neg, abs, relu, clamp).
bool typed_shader_handles(UnaryOp op, DType dtype) {
  if (is_floating(dtype) || is_predicate(op)) return float_shaders_handle(op);
  switch (op) {
    case UnaryOp::kBitwiseNot:
    case UnaryOp::kSign:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kTrunc: return true;
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kRelu:
    case UnaryOp::kClamp:
    case UnaryOp::kClampMin:
    case UnaryOp::kClampMax: return dtype != DType::kBool;
    default: return false;
  }
}

template <typename Params>
void fill_layout(Params& p, const StridedLayout& layout, const Tensor& out, const Tensor& in) {
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.in = reinterpret_cast<uint64_t>(in.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.in_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
  }
}

// f32 in through unary_f32.comp / predicate_f32.comp; false when they do
// not handle it.
bool launch_f32(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in,
                const StridedLayout& layout, const Scalar& p0, const Scalar& p1) {
  if (!float_shaders_handle(op)) return false;
  const char* shader = nullptr;
  if (is_predicate(op)) {
    if (out.dtype() == DType::kBool && vulkan_context_of(ctx).has_sized_shader_types()) {
      shader = "predicate_f32";
    }
  } else if (out.dtype() == DType::kF32) {
    shader = "unary_f32";
  }
  if (shader == nullptr || !layout.fits(kUnaryMaxRank)) return false;
  UnaryF32Params p{};
  fill_layout(p, layout, out, in);
  // Only clamp reads them (the CPU kernel converts them to the compute type).
  p.p0 = is_clamp(op) ? p0.to<float>() : 0.0f;
  p.p1 = op == UnaryOp::kClamp ? p1.to<float>() : 0.0f;
  launch(ctx, shader, {static_cast<uint32_t>(op)}, p, layout.numel);
  return true;
}

void unary_kernel(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in,
                  Scalar p0, Scalar p1) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &in.strides()});
  const DType dtype = in.dtype();
  if (dtype == DType::kF32 && launch_f32(ctx, op, out, in, layout, p0, p1)) return;
  const DType out_dtype = is_predicate(op) ? DType::kBool : dtype;
  // The typed shaders, one layout: unary_f64.comp (every floating op,
  // float_shaders_handle's set) for f64 where the device has shaderFloat64,
  // unary.comp for the element kinds.
  const bool f64 = dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders();
  const std::optional<ElementKind> kind = element_kind(dtype);
  const bool handled = f64 ? float_shaders_handle(op)
                           : kind && vulkan_context_of(ctx).has_sized_shader_types() &&
                                 typed_shader_handles(op, dtype);
  if (!handled || out.dtype() != out_dtype || !layout.fits(kUnaryTypedMaxRank)) {
    run_on_host<kernels::Unary>(ctx, op, out, in, p0, p1);
    return;
  }
  UnaryParams p{};
  fill_layout(p, layout, out, in);
  if (is_clamp(op)) p.p0 = encode_scalar(p0, dtype);
  if (op == UnaryOp::kClamp) p.p1 = encode_scalar(p1, dtype);
  if (f64) {
    launch(ctx, "unary_f64", {static_cast<uint32_t>(op)}, p, layout.numel);
  } else {
    launch(ctx, "unary", {static_cast<uint32_t>(op), kind_constant(*kind)}, p, layout.numel);
  }
}

}  // namespace

void register_unary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Unary>(type, unary_kernel);
}

}  // namespace tessera::vulkan
