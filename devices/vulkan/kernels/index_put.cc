// index_put (with and without accumulate): two passes, shaders/
// index_put_offsets.comp (per index position b, the offsets of its self
// element and values row) and shaders/index_put.glsl (one invocation per
// element of self's remaining dims, looping over b in order: the CPU's
// last-write-wins and summation order, no atomics). Every dtype moves as
// raw elements and adds with accumulate. 4/8-byte moves and f32/i32/i64
// adds run on every device (index_put_words.comp), f64 adds in double
// where the device has shaderFloat64 (index_put_f64.comp), the rest where
// it has 8/16-bit shader types (index_put.comp); see index_elements.h.
// More than 6 indexed dims, index shapes of rank > 6 or remaining dims of
// rank > 7 after coalescing, offsets beyond 32 bits, and kinds the device
// has no module for stage through the host.
#include <limits>
#include <optional>
#include <string>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

constexpr int kIndexPutMaxIndexed = 6;    // kMaxIndexed in shaders/index_put_offsets.comp
constexpr int kIndexPutMaxBatchRank = 6;  // kMaxRank in shaders/index_put_offsets.comp
constexpr int kIndexPutMaxRestRank = 7;   // kMaxRank in shaders/index_put.comp

struct IndexPutOffsetsParams {
  uint64_t offsets;
  uint64_t indices;
  uint32_t nb;
  uint32_t k;
  uint32_t rank;
  int32_t self_sizes[kIndexPutMaxIndexed];
  int32_t self_strides[kIndexPutMaxIndexed];
  uint32_t sizes[kIndexPutMaxBatchRank];
  int32_t value_strides[kIndexPutMaxBatchRank];
};

struct IndexPutParams {
  uint64_t self;
  uint64_t values;
  uint64_t offsets;
  uint32_t nb;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kIndexPutMaxRestRank];
  int32_t self_strides[kIndexPutMaxRestRank];
  int32_t value_strides[kIndexPutMaxRestRank];
};

void index_put_kernel(const KernelContext& ctx, Tensor& self, const Tensor& indices,
                      const Tensor& values, bool accumulate) {
  const int64_t k = indices.size(0);
  if (k == 0 || indices.numel() == 0) return;
  const int64_t nb = indices.numel() / k;
  const int64_t batch_dims = indices.dim() - 1;
  // B (the broadcast index shape) with values' strides over it, and self's
  // remaining dims with both tensors' strides over them.
  const Shape batch_sizes(values.sizes().begin(), values.sizes().begin() + batch_dims);
  const Shape batch_strides(values.strides().begin(), values.strides().begin() + batch_dims);
  const Shape rest_sizes(self.sizes().begin() + k, self.sizes().end());
  const Shape self_rest_strides(self.strides().begin() + k, self.strides().end());
  const Shape value_rest_strides(values.strides().begin() + batch_dims, values.strides().end());
  StridedLayout batch = coalesce(batch_sizes, {&batch_strides});
  StridedLayout rest = coalesce(rest_sizes, {&self_rest_strides, &value_rest_strides});
  AddKind add_kind = AddKind::kF32;
  std::optional<std::string> shader;
  if (!accumulate) {
    shader = moving_shader(ctx, "index_put", self.itemsize());
  } else if (add_kind_of(self.dtype(), &add_kind)) {
    shader = adding_shader(ctx, "index_put", add_kind);
  }
  if (!shader || k > kIndexPutMaxIndexed || !batch.fits(kIndexPutMaxBatchRank) ||
      !rest.fits(kIndexPutMaxRestRank) || !reach_fits_int32(self) || !reach_fits_int32(values)) {
    run_on_host<kernels::IndexPut>(ctx, self, indices, values, accumulate);
    return;
  }
  // [k, nb] row-major for the offsets pass (a no-op for the front end's
  // freshly stacked indices).
  const Tensor flat_indices = indices.contiguous();
  Tensor offsets = empty({nb, 2}, TensorOptions(DType::kI32, ctx.device));

  IndexPutOffsetsParams op{};
  op.offsets = reinterpret_cast<uint64_t>(offsets.data_ptr());
  op.indices = reinterpret_cast<uint64_t>(flat_indices.data_ptr());
  op.nb = static_cast<uint32_t>(nb);
  op.k = static_cast<uint32_t>(k);
  op.rank = static_cast<uint32_t>(batch.rank());
  for (int64_t d = 0; d < k; ++d) {
    op.self_sizes[d] = static_cast<int32_t>(self.size(d));
    op.self_strides[d] = static_cast<int32_t>(self.stride(d));
  }
  for (int d = 0; d < batch.rank(); ++d) {
    op.sizes[d] = static_cast<uint32_t>(batch.sizes[d]);
    op.value_strides[d] = static_cast<int32_t>(batch.strides[0][d]);
  }
  launch(ctx, "index_put_offsets", {}, op, nb);

  IndexPutParams p{};
  p.self = reinterpret_cast<uint64_t>(self.data_ptr());
  p.values = reinterpret_cast<uint64_t>(values.data_ptr());
  p.offsets = op.offsets;
  p.nb = static_cast<uint32_t>(nb);
  p.numel = static_cast<uint32_t>(rest.numel);
  p.rank = static_cast<uint32_t>(rest.rank());
  for (int d = 0; d < rest.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(rest.sizes[d]);
    p.self_strides[d] = static_cast<int32_t>(rest.strides[0][d]);
    p.value_strides[d] = static_cast<int32_t>(rest.strides[1][d]);
  }
  launch(ctx, *shader,
         {static_cast<uint32_t>(self.itemsize()), accumulate ? 1u : 0u,
          static_cast<uint32_t>(add_kind)},
         p, rest.numel);
}

}  // namespace

void register_index_put_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::IndexPut>(type, index_put_kernel);
}

}  // namespace tessera::vulkan
