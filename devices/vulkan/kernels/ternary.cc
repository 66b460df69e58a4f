// ternary: where (bool condition), lerp, addcmul and addcdiv, broadcast
// through stride-0 dims. f32 runs in shaders/ternary_f32.comp; f16, bf16,
// i32, i64, u8, i8, i16 and bool (where for all, addcmul for integers, lerp
// and addcdiv for f16 and bf16) in shaders/ternary.comp. Both read or write
// bytes, so they need 8/16/64-bit shader types; f64 in
// shaders/ternary_f64.comp where the device has shaderFloat64. f64
// elsewhere, combinations the CPU kernel rejects (it raises their errors),
// ranks beyond 4 after coalescing and devices without the sized types stage
// through the host.
#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::TernaryOp;

constexpr int kTernaryMaxRank = 4;  // kMaxRank in shaders/ternary_f32.comp, ternary.comp

struct TernaryF32Params {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint64_t c;
  uint32_t numel;
  float value;
  uint32_t rank;
  uint32_t sizes[kTernaryMaxRank];
  int32_t out_strides[kTernaryMaxRank];
  int32_t a_strides[kTernaryMaxRank];
  int32_t b_strides[kTernaryMaxRank];
  int32_t c_strides[kTernaryMaxRank];
};

struct TernaryParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint64_t c;
  EncodedScalar value;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kTernaryMaxRank];
  int32_t out_strides[kTernaryMaxRank];
  int32_t a_strides[kTernaryMaxRank];
  int32_t b_strides[kTernaryMaxRank];
  int32_t c_strides[kTernaryMaxRank];
};

// Whether the shaders compute (op, dtype) as the CPU kernel does.
bool shader_handles(TernaryOp op, DType dtype) {
  switch (op) {
    case TernaryOp::kWhere: return true;
    case TernaryOp::kAddcmul: return dtype != DType::kBool;
    case TernaryOp::kLerp:
    case TernaryOp::kAddcdiv: return is_floating(dtype);
  }
  return false;  // a new op: listed above once the shaders have it
}

bool is_scaled(TernaryOp op) { return op == TernaryOp::kAddcmul || op == TernaryOp::kAddcdiv; }

void ternary_kernel(const KernelContext& ctx, TernaryOp op, Tensor& out, const Tensor& a,
                    const Tensor& b, const Tensor& c, Scalar value) {
  if (out.numel() == 0) return;
  StridedLayout layout =
      coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides(), &c.strides()});
  const DType dtype = out.dtype();
  const DType a_dtype = op == TernaryOp::kWhere ? DType::kBool : dtype;
  const bool f64 = dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders();
  const std::optional<ElementKind> kind = element_kind(dtype);
  const bool native = (kind || f64) && a.dtype() == a_dtype && b.dtype() == dtype &&
                      c.dtype() == dtype && shader_handles(op, dtype) &&
                      vulkan_context_of(ctx).has_sized_shader_types() &&
                      layout.fits(kTernaryMaxRank);
  if (!native) {
    run_on_host<kernels::Ternary>(ctx, op, out, a, b, c, value);
    return;
  }
  if (dtype == DType::kF32) {
    TernaryF32Params p{};
    fill_layout(p, layout, out, a, b, c);
    // Only addcmul and addcdiv read it (converted as the CPU kernel does).
    p.value = is_scaled(op) ? value.to<float>() : 0.0f;
    launch(ctx, "ternary_f32", {static_cast<uint32_t>(op)}, p, layout.numel);
    return;
  }
  TernaryParams p{};  // ternary_f64.comp's layout is ternary.comp's
  fill_layout(p, layout, out, a, b, c);
  if (is_scaled(op)) p.value = encode_scalar(value, dtype);
  if (f64) {
    launch(ctx, "ternary_f64", {static_cast<uint32_t>(op)}, p, layout.numel);
    return;
  }
  launch(ctx, "ternary", {static_cast<uint32_t>(op), kind_constant(*kind)}, p, layout.numel);
}

}  // namespace

void register_ternary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Ternary>(type, ternary_kernel);
}

}  // namespace tessera::vulkan
