// scatter (kNone: every dtype as raw element moves; the folds kAdd, kMul,
// kMax and kMin: every dtype, rounding as the CPU kernel does) in
// shaders/scatter.glsl: one invocation per line of index along dim,
// looping over the line in order, which gives the CPU's last-write-wins
// and folding order without atomics. 4/8-byte moves and f32/i32/i64 folds
// run on every device (scatter_words.comp), f64 folds in double where the
// device has shaderFloat64 (scatter_f64.comp), the rest where it has
// 8/16/64-bit shader types (scatter.comp); see index_elements.h. Index
// layouts of rank > 4 after coalescing (dim excluded), offsets beyond 32
// bits, and kinds the device has no module for stage through the host.
#include <optional>
#include <string>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

using kernels::ScatterReduce;

constexpr int kScatterMaxRank = 4;  // kMaxRank in shaders/scatter.comp

struct ScatterParams {
  uint64_t self;
  uint64_t index;
  uint64_t src;
  uint32_t lines;
  uint32_t rank;
  uint32_t line_length;
  int32_t index_dim_stride;
  int32_t src_dim_stride;
  int32_t dim_size;
  int32_t dim_stride;
  uint32_t sizes[kScatterMaxRank];
  int32_t index_strides[kScatterMaxRank];
  int32_t src_strides[kScatterMaxRank];
  int32_t base_strides[kScatterMaxRank];
};

void scatter_kernel(const KernelContext& ctx, Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src, ScatterReduce reduce) {
  if (index.numel() == 0) return;
  // The lines: index's sizes with dim's set to 1 (coalesce drops it), and
  // self's strides with 0 along dim (the line's base address).
  Shape line_sizes = index.sizes();
  Shape base_strides = self.strides();
  int64_t line_length = 1, index_dim_stride = 0, src_dim_stride = 0;
  int64_t dim_size = 1, dim_stride = 0;
  if (self.dim() > 0) {
    line_length = index.size(dim);
    index_dim_stride = index.stride(dim);
    src_dim_stride = src.stride(dim);
    dim_size = self.size(dim);
    dim_stride = self.stride(dim);
    line_sizes[dim] = 1;
    base_strides[dim] = 0;
  }
  StridedLayout layout =
      coalesce(line_sizes, {&index.strides(), &src.strides(), &base_strides});
  AddKind kind = AddKind::kF32;
  const bool fold = reduce != ScatterReduce::kNone;
  std::optional<std::string> shader;
  if (!fold) {
    shader = moving_shader(ctx, "scatter", self.itemsize());
  } else if (add_kind_of(self.dtype(), &kind)) {
    shader = adding_shader(ctx, "scatter", kind);
  }
  if (!shader || !layout.fits(kScatterMaxRank) || !reach_fits_int32(self) ||
      !reach_fits_int32(index) || !reach_fits_int32(src)) {
    run_on_host<kernels::Scatter>(ctx, self, dim, index, src, reduce);
    return;
  }
  ScatterParams p{};
  p.self = reinterpret_cast<uint64_t>(self.data_ptr());
  p.index = reinterpret_cast<uint64_t>(index.data_ptr());
  p.src = reinterpret_cast<uint64_t>(src.data_ptr());
  p.lines = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  p.line_length = static_cast<uint32_t>(line_length);
  p.index_dim_stride = static_cast<int32_t>(index_dim_stride);
  p.src_dim_stride = static_cast<int32_t>(src_dim_stride);
  p.dim_size = static_cast<int32_t>(dim_size);
  p.dim_stride = static_cast<int32_t>(dim_stride);
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.index_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.src_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.base_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
  }
  launch(ctx, *shader,
         {static_cast<uint32_t>(self.itemsize()), static_cast<uint32_t>(reduce),
          static_cast<uint32_t>(kind), is_signed(self.dtype()) ? 1u : 0u},
         p, layout.numel);
}

}  // namespace

void register_scatter_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Scatter>(type, scatter_kernel);
}

}  // namespace tessera::vulkan
