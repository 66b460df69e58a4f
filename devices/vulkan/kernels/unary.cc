// unary: out = op(in) for f32 in shaders/unary_f32.comp (f32 out) and
// shaders/predicate_f32.comp (bool out: logical_not, isnan, isinf,
// isfinite); other dtypes, bitwise_not and layouts beyond the push
// constants stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::UnaryOp;

constexpr int kUnaryMaxRank = 8;  // kMaxRank in shaders/unary_f32.comp, predicate_f32.comp

struct UnaryParams {
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

bool is_predicate(UnaryOp op) {
  return op == UnaryOp::kLogicalNot || op == UnaryOp::kIsnan || op == UnaryOp::kIsinf ||
         op == UnaryOp::kIsfinite;
}

// The shader for (op, out) when one handles it, else nullptr. The
// predicates write bytes, which needs the device's 8-bit storage.
const char* shader_for(const KernelContext& ctx, UnaryOp op, const Tensor& out,
                       const Tensor& in) {
  if (in.dtype() != DType::kF32) return nullptr;
  if (is_predicate(op)) {
    const bool ok = out.dtype() == DType::kBool && vulkan_context_of(ctx).has_sized_shader_types();
    return ok ? "predicate_f32" : nullptr;
  }
  if (op == UnaryOp::kBitwiseNot || out.dtype() != DType::kF32) return nullptr;
  return "unary_f32";
}

void unary_kernel(const KernelContext& ctx, UnaryOp op, Tensor& out, const Tensor& in,
                  Scalar p0, Scalar p1) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &in.strides()});
  const char* shader = shader_for(ctx, op, out, in);
  if (shader == nullptr || !layout.fits(kUnaryMaxRank)) {
    run_on_host<kernels::Unary>(ctx, op, out, in, p0, p1);
    return;
  }
  UnaryParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.in = reinterpret_cast<uint64_t>(in.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  // Only clamp reads them (the CPU kernel converts them to the compute type).
  const bool clamps = op == UnaryOp::kClamp || op == UnaryOp::kClampMin || op == UnaryOp::kClampMax;
  p.p0 = clamps ? p0.to<float>() : 0.0f;
  p.p1 = op == UnaryOp::kClamp ? p1.to<float>() : 0.0f;
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.in_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
  }
  launch(ctx, shader, {static_cast<uint32_t>(op)}, p, layout.numel);
}

// The shaders' op numbers are the enum's values.
static_assert(static_cast<int>(UnaryOp::kGelu) == 17 && static_cast<int>(UnaryOp::kClampMax) == 27 &&
              static_cast<int>(UnaryOp::kLogicalNot) == 29 &&
              static_cast<int>(UnaryOp::kIsfinite) == 32);

}  // namespace

void register_unary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Unary>(type, unary_kernel);
}

}  // namespace tessera::vulkan
