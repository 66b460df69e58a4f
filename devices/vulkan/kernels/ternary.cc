// ternary: where (bool condition), lerp, addcmul and addcdiv for f32,
// broadcast through stride-0 dims, in shaders/ternary_f32.comp; other
// dtypes, ranks beyond 4 after coalescing and devices without 8-bit
// storage stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::TernaryOp;

constexpr int kTernaryMaxRank = 4;  // kMaxRank in shaders/ternary_f32.comp

struct TernaryParams {
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

void ternary_kernel(const KernelContext& ctx, TernaryOp op, Tensor& out, const Tensor& a,
                    const Tensor& b, const Tensor& c, Scalar value) {
  if (out.numel() == 0) return;
  StridedLayout layout =
      coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides(), &c.strides()});
  const DType a_dtype = op == TernaryOp::kWhere ? DType::kBool : DType::kF32;
  const bool native = out.dtype() == DType::kF32 && a.dtype() == a_dtype &&
                      b.dtype() == DType::kF32 && c.dtype() == DType::kF32 &&
                      vulkan_context_of(ctx).has_sized_shader_types() &&
                      layout.fits(kTernaryMaxRank);
  if (!native) {
    run_on_host<kernels::Ternary>(ctx, op, out, a, b, c, value);
    return;
  }
  TernaryParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.a = reinterpret_cast<uint64_t>(a.data_ptr());
  p.b = reinterpret_cast<uint64_t>(b.data_ptr());
  p.c = reinterpret_cast<uint64_t>(c.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  // Only addcmul and addcdiv read it (converted as the CPU kernel does).
  p.value = op == TernaryOp::kAddcmul || op == TernaryOp::kAddcdiv ? value.to<float>() : 0.0f;
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.a_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.b_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
    p.c_strides[d] = static_cast<int32_t>(layout.strides[3][d]);
  }
  launch(ctx, "ternary_f32", {static_cast<uint32_t>(op)}, p, layout.numel);
}

// The shader's op numbers are the enum's values.
static_assert(static_cast<int>(TernaryOp::kWhere) == 0 &&
              static_cast<int>(TernaryOp::kAddcdiv) == 3);

}  // namespace

void register_ternary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Ternary>(type, ternary_kernel);
}

}  // namespace tessera::vulkan
