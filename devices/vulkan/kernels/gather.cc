// gather (and so index_select, a gather of an expanded index): every dtype
// natively in shaders/gather.glsl, moving raw elements, for ranks <= 5
// after coalescing: 4 and 8-byte dtypes on every device (gather_words.comp),
// 1 and 2-byte ones where the device has 8/16-bit shader types
// (gather.comp). Larger ranks, offsets beyond 32 bits and 1/2-byte dtypes
// on devices without those types stage through the host.
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kGatherMaxRank = 5;  // kMaxRank in shaders/gather.comp

struct GatherParams {
  uint64_t out;
  uint64_t self;
  uint64_t index;
  uint32_t numel;
  uint32_t rank;
  int32_t dim_size;
  int32_t dim_stride;
  uint32_t sizes[kGatherMaxRank];
  int32_t out_strides[kGatherMaxRank];
  int32_t index_strides[kGatherMaxRank];
  int32_t base_strides[kGatherMaxRank];
};

void gather_kernel(const KernelContext& ctx, Tensor& out, const Tensor& self, int64_t dim,
                   const Tensor& index) {
  if (out.numel() == 0) return;
  // self's strides at out's sizes with 0 along dim: the address of
  // self[..., 0, ...] for each out element (a 0-d self has no dim).
  Shape base_strides = self.strides();
  int64_t dim_size = 1, dim_stride = 0;
  if (self.dim() > 0) {
    dim_size = self.size(dim);
    dim_stride = self.stride(dim);
    base_strides[dim] = 0;
  }
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &index.strides(), &base_strides});
  const auto shader = moving_shader(ctx, "gather", out.itemsize());
  if (!shader || !layout.fits(kGatherMaxRank) || !reach_fits_int32(self)) {
    run_on_host<kernels::Gather>(ctx, out, self, dim, index);
    return;
  }
  GatherParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.self = reinterpret_cast<uint64_t>(self.data_ptr());
  p.index = reinterpret_cast<uint64_t>(index.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  p.dim_size = static_cast<int32_t>(dim_size);
  p.dim_stride = static_cast<int32_t>(dim_stride);
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.index_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.base_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
  }
  launch(ctx, *shader, {static_cast<uint32_t>(out.itemsize())}, p, layout.numel);
}

}  // namespace

void register_gather_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Gather>(type, gather_kernel);
}

}  // namespace tessera::vulkan
