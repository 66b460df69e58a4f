// fill: out[...] = value, every dtype. The host converts the value to the
// dtype once (with the CPU device's own conversion, so both devices store
// the same bits) and the shader writes that 1-, 2-, 4- or 8-byte pattern.
#include <cstring>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

constexpr int kFillMaxRank = 8;  // kMaxRank in shaders/fill.comp

struct FillParams {
  uint64_t out;
  uint64_t pattern;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kFillMaxRank];
  int32_t strides[kFillMaxRank];
};

uint64_t bit_pattern(DType dtype, Scalar value) {
  Tensor one = empty({}, TensorOptions(dtype, host_device()));
  // The host's Fill kernel, not fill_(): the kernel converts as a cast
  // does (an integer past the dtype's range wraps, as the CPU device's and
  // PyTorch's wrapped numbers do); fill_'s range check is the front end's.
  call_kernel<kernels::Fill>(host_device(), one, value);
  uint64_t bits = 0;
  std::memcpy(&bits, one.data_ptr(), one.itemsize());
  return bits;
}

// The 4-byte word that repeats the element's bytes, if there is one (an
// 8-byte element only repeats when its halves are equal, e.g. zero).
bool as_word(uint64_t pattern, size_t itemsize, uint32_t* word) {
  switch (itemsize) {
    case 1: *word = static_cast<uint32_t>(pattern & 0xFF) * 0x01010101u; return true;
    case 2: *word = static_cast<uint32_t>(pattern & 0xFFFF) * 0x00010001u; return true;
    case 4: *word = static_cast<uint32_t>(pattern); return true;
    default:
      *word = static_cast<uint32_t>(pattern);
      return (pattern >> 32) == (pattern & 0xFFFFFFFFu);
  }
}

void fill_kernel(const KernelContext& ctx, Tensor& out, Scalar value) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides()});
  if (!vulkan_context_of(ctx).has_sized_shader_types() || !layout.fits(kFillMaxRank)) {
    run_on_host<kernels::Fill>(ctx, out, value);
    return;
  }
  const uint64_t pattern = bit_pattern(out.dtype(), value);
  const bool dense = layout.rank() == 0 || (layout.rank() == 1 && layout.strides[0][0] == 1);
  uint32_t word;
  if (dense && as_word(pattern, out.itemsize(), &word) &&
      fill_is_aligned(ctx, out.data_ptr(), out.nbytes())) {
    fill_buffer(ctx, out.data_ptr(), out.nbytes(), word);
    return;
  }
  FillParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.pattern = pattern;
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.strides[d] = static_cast<int32_t>(layout.strides[0][d]);
  }
  launch(ctx, "fill", {static_cast<uint32_t>(out.itemsize())}, p, layout.numel);
}

}  // namespace

void register_fill_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Fill>(type, fill_kernel);
}

}  // namespace tessera::vulkan
