// masked_fill: every dtype natively in shaders/masked_fill.comp (the value
// converted on the host as the CPU kernel does and passed as raw bits; the
// mask broadcast through stride-0 dims), ranks <= 8 after coalescing.
// Larger ranks, offsets beyond 32 bits and devices without 8/16/64-bit
// shader types stage through the host.
#include <cstring>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kMaskedFillMaxRank = 8;  // kMaxRank in shaders/masked_fill.comp

struct MaskedFillParams {
  uint64_t self;
  uint64_t mask;
  uint64_t value;  // raw bits of self's dtype
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kMaskedFillMaxRank];
  int32_t self_strides[kMaskedFillMaxRank];
  int32_t mask_strides[kMaskedFillMaxRank];
};

void masked_fill_kernel(const KernelContext& ctx, Tensor& self, const Tensor& mask, Scalar value) {
  if (self.numel() == 0) return;
  StridedLayout layout = coalesce(self.sizes(), {&self.strides(), &mask.strides()});
  if (mask.dtype() != DType::kBool || !vulkan_context_of(ctx).has_sized_shader_types() ||
      !layout.fits(kMaskedFillMaxRank)) {
    run_on_host<kernels::MaskedFill>(ctx, self, mask, value);
    return;
  }
  MaskedFillParams p{};
  p.self = reinterpret_cast<uint64_t>(self.data_ptr());
  p.mask = reinterpret_cast<uint64_t>(mask.data_ptr());
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    std::memcpy(&p.value, &v, sizeof(T));  // little-endian: the low bytes
  });
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.self_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.mask_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
  }
  launch(ctx, "masked_fill", {static_cast<uint32_t>(self.itemsize())}, p, layout.numel);
}

}  // namespace

void register_masked_fill_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaskedFill>(type, masked_fill_kernel);
}

}  // namespace tessera::vulkan
