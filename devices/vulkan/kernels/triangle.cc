// triangle (tril / triu, in place or not): every dtype natively in
// shaders/triangle.glsl as raw elements, ranks <= 6 after coalescing: 4
// and 8-byte dtypes on every device (triangle_words.comp), 1 and 2-byte
// ones where the device has 8/16-bit shader types (triangle.comp). Larger
// ranks, offsets beyond 32 bits and 1/2-byte dtypes on devices without
// those types stage through the host.
#include <algorithm>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kTriangleMaxRank = 6;  // kMaxRank in shaders/triangle.comp

struct TriangleParams {
  uint64_t out;
  uint64_t in;
  uint32_t numel;
  uint32_t rank;
  uint32_t rows;
  uint32_t cols;
  int32_t diagonal;
  uint32_t sizes[kTriangleMaxRank];
  int32_t out_strides[kTriangleMaxRank];
  int32_t in_strides[kTriangleMaxRank];
};

void triangle_kernel(const KernelContext& ctx, Tensor& out, const Tensor& in, int64_t diagonal,
                     bool upper) {
  if (out.numel() == 0) return;
  StridedLayout layout = coalesce(out.sizes(), {&out.strides(), &in.strides()});
  const auto shader = moving_shader(ctx, "triangle", out.itemsize());
  if (out.dim() < 2 || !shader || !layout.fits(kTriangleMaxRank)) {
    run_on_host<kernels::Triangle>(ctx, out, in, diagonal, upper);
    return;
  }
  const int64_t rows = out.size(-2), cols = out.size(-1);
  TriangleParams p{};
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.in = reinterpret_cast<uint64_t>(in.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  p.rows = static_cast<uint32_t>(rows);
  p.cols = static_cast<uint32_t>(cols);
  // col - row lies in [1 - rows, cols - 1], so clamping keeps every
  // comparison and fits 32 bits.
  p.diagonal = static_cast<int32_t>(std::clamp<int64_t>(diagonal, -rows, cols));
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.in_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
  }
  launch(ctx, *shader,
         {static_cast<uint32_t>(out.itemsize()), upper ? 1u : 0u}, p, layout.numel);
}

}  // namespace

void register_triangle_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Triangle>(type, triangle_kernel);
}

}  // namespace tessera::vulkan
