// binary: out = a (op) b with broadcasting through stride-0 dims. f32 runs
// in shaders/binary_f32.comp (no optional shader features); f16, bf16, i32,
// i64, u8, i8, i16 and bool in shaders/binary.comp (needs 8/16/64-bit
// types); f64 in shaders/binary_f64.comp where the device has
// shaderFloat64. f64 elsewhere, ops the CPU kernel rejects (integer div,
// bool sub: it raises their errors) and layouts beyond the push constants
// stage through the host.
#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::BinaryOp;

constexpr int kBinaryMaxRank = 5;  // kMaxRank in shaders/binary_f32.comp, binary.comp

struct BinaryF32Params {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  uint32_t numel;
  float alpha;
  uint32_t rank;
  uint32_t sizes[kBinaryMaxRank];
  int32_t out_strides[kBinaryMaxRank];
  int32_t a_strides[kBinaryMaxRank];
  int32_t b_strides[kBinaryMaxRank];
};

struct BinaryParams {
  uint64_t out;
  uint64_t a;
  uint64_t b;
  EncodedScalar alpha;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kBinaryMaxRank];
  int32_t out_strides[kBinaryMaxRank];
  int32_t a_strides[kBinaryMaxRank];
  int32_t b_strides[kBinaryMaxRank];
};

// Whether binary.comp computes (op, dtype) as the CPU kernel does; the
// combinations it rejects stage so that the host raises its error.
bool typed_shader_handles(BinaryOp op, DType dtype) {
  if (op == BinaryOp::kDiv) return is_floating(dtype);
  return !(op == BinaryOp::kSub && dtype == DType::kBool);
}

void binary_kernel(const KernelContext& ctx, BinaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, Scalar alpha) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides()});
  const DType dtype = out.dtype();
  const bool same_dtype = a.dtype() == dtype && b.dtype() == dtype;
  if (!same_dtype || !layout.fits(kBinaryMaxRank)) {
    run_on_host<kernels::Binary>(ctx, op, out, a, b, alpha);
    return;
  }
  if (dtype == DType::kF32) {
    BinaryF32Params p{};
    fill_layout(p, layout, out, a, b);
    p.alpha = alpha.to<float>();
    launch(ctx, "binary_f32", {static_cast<uint32_t>(op)}, p, layout.numel);
    return;
  }
  // The typed shaders, one layout: binary_f64.comp (every op) for f64 where
  // the device has shaderFloat64, binary.comp for the element kinds.
  const bool f64 = dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders();
  const std::optional<ElementKind> kind = element_kind(dtype);
  if (!f64 && (!kind || !vulkan_context_of(ctx).has_sized_shader_types() ||
               !typed_shader_handles(op, dtype))) {
    run_on_host<kernels::Binary>(ctx, op, out, a, b, alpha);
    return;
  }
  BinaryParams p{};
  fill_layout(p, layout, out, a, b);
  p.alpha = encode_scalar(alpha, dtype);
  if (f64) {
    launch(ctx, "binary_f64", {static_cast<uint32_t>(op)}, p, layout.numel);
  } else {
    launch(ctx, "binary", {static_cast<uint32_t>(op), kind_constant(*kind)}, p, layout.numel);
  }
}

}  // namespace

void register_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Binary>(type, binary_kernel);
}

}  // namespace tessera::vulkan
