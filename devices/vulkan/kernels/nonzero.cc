// nonzero (and masked_select, which the front end builds on it) natively
// for every dtype, in shaders/nonzero.comp: per-block counts, one work
// group's exclusive scan of them, then each block writes its coordinates
// from its prefix, in row-major order. Ranks above 8, offsets beyond 32
// bits and devices without 8/16/64-bit shader types stage through the host.
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

constexpr int kNonzeroMaxRank = 8;  // kMaxRank in shaders/nonzero.comp
constexpr int64_t kNonzeroRun = 16;  // kRun in shaders/nonzero.comp

struct NonzeroParams {
  uint64_t out;
  uint64_t self;
  uint64_t counts;
  uint32_t numel;
  uint32_t n;
  uint32_t ndim;
  int32_t out_stride0;
  int32_t out_stride1;
  uint32_t blocks;
  uint32_t sizes[kNonzeroMaxRank];
  int32_t strides[kNonzeroMaxRank];
};

bool addressable(const Tensor& t) {
  return coalesce(t.sizes(), {&t.strides()}).fits(std::numeric_limits<int>::max());
}

void nonzero_kernel(const KernelContext& ctx, Tensor& out, const Tensor& self) {
  if (out.numel() == 0) return;
  VulkanContext& vk = vulkan_context_of(ctx);
  const bool native = vk.has_sized_shader_types() && self.dim() <= kNonzeroMaxRank &&
                      addressable(self) && addressable(out);
  if (!native) {
    run_on_host<kernels::Nonzero>(ctx, out, self);
    return;
  }
  NonzeroParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.self = reinterpret_cast<uint64_t>(self.data_ptr());
  p.numel = static_cast<uint32_t>(self.numel());
  p.n = static_cast<uint32_t>(out.size(0));
  p.ndim = static_cast<uint32_t>(self.dim());
  p.out_stride0 = static_cast<int32_t>(out.stride(0));
  p.out_stride1 = static_cast<int32_t>(out.stride(1));
  for (int64_t d = 0; d < self.dim(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(self.size(d));
    p.strides[d] = static_cast<int32_t>(self.stride(d));
  }
  const int64_t block_size = static_cast<int64_t>(vk.pipelines().workgroup_size()) * kNonzeroRun;
  const int64_t blocks = (self.numel() + block_size - 1) / block_size;
  Tensor counts = empty({blocks}, TensorOptions(DType::kI32, ctx.device));
  p.counts = reinterpret_cast<uint64_t>(counts.data_ptr());
  p.blocks = static_cast<uint32_t>(blocks);
  const uint32_t dtype = static_cast<uint32_t>(self.dtype());
  const uint32_t groups = static_cast<uint32_t>(std::min<int64_t>(blocks, kMaxWorkGroupsPerDim));
  launch_groups(ctx, "nonzero", {0u, dtype}, p, groups);
  launch_groups(ctx, "nonzero", {1u, 0u}, p, 1);  // scans counts: any dtype
  launch_groups(ctx, "nonzero", {2u, dtype}, p, groups);
}

}  // namespace

void register_nonzero_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Nonzero>(type, nonzero_kernel);
}

}  // namespace tessera::vulkan
