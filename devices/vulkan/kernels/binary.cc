// binary: out = a (op) b with broadcasting through stride-0 dims, for f32
// in shaders/binary_f32.comp; other dtypes stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kBinaryMaxRank = 5;  // kMaxRank in shaders/binary_f32.comp

struct BinaryParams {
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

void binary_kernel(const KernelContext& ctx, kernels::BinaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, Scalar alpha) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &a.strides(), &b.strides()});
  if (out.dtype() != DType::kF32 || !layout.fits(kBinaryMaxRank)) {
    run_on_host<kernels::Binary>(ctx, op, out, a, b, alpha);
    return;
  }
  BinaryParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.a = reinterpret_cast<uint64_t>(a.data_ptr());
  p.b = reinterpret_cast<uint64_t>(b.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.alpha = alpha.to<float>();
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.a_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.b_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
  }
  launch(ctx, "binary_f32", {static_cast<uint32_t>(op)}, p, layout.numel);
}

}  // namespace

void register_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Binary>(type, binary_kernel);
}

}  // namespace tessera::vulkan
