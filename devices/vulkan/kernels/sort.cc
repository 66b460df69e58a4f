// sort (and topk, argsort: the front end's composites over it) natively for
// every dtype, in shaders/sort.comp: one work group per line, a bitonic
// sort of (order-preserving key, index) pairs in shared memory, so equal
// values keep index order (stable, as the CPU kernel) and NaN sorts
// largest. Lines longer than 2048 (the pairs fill 24 of the 32 KiB of
// shared memory), more than 4 outer dims after coalescing, offsets beyond
// 32 bits and devices without 8/16/64-bit shader types stage through the
// host.
#include <bit>
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kSortMaxRank = 4;        // kMaxRank in shaders/sort.comp
constexpr int64_t kSortMaxLine = 2048;  // kMaxLine in shaders/sort.comp

struct SortParams {
  uint64_t in;
  uint64_t values;
  uint64_t indices;
  uint32_t len;
  uint32_t k;
  uint32_t padded;
  uint32_t lines;
  int32_t in_step;
  int32_t values_step;
  int32_t indices_step;
  uint32_t rank;
  uint32_t sizes[kSortMaxRank];
  int32_t in_strides[kSortMaxRank];
  int32_t values_strides[kSortMaxRank];
  int32_t indices_strides[kSortMaxRank];
};

Shape without(const Shape& s, int64_t dim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d != dim) out.push_back(s[d]);
  }
  return out;
}

bool addressable(const Tensor& t) {
  return coalesce(t.sizes(), {&t.strides()}).fits(std::numeric_limits<int>::max());
}

void sort_kernel(const KernelContext& ctx, Tensor& values, Tensor& indices, const Tensor& self,
                 int64_t dim, bool descending, bool stable) {
  if (self.numel() == 0) return;
  const bool scalar = self.dim() == 0;
  const int64_t len = scalar ? 1 : self.size(dim);
  const int64_t k = scalar ? 1 : values.size(dim);
  if (k == 0) return;
  const Shape outer_sizes = scalar ? Shape{} : without(self.sizes(), dim);
  const Shape in_outer = scalar ? Shape{} : without(self.strides(), dim);
  const Shape values_outer = scalar ? Shape{} : without(values.strides(), dim);
  const Shape indices_outer = scalar ? Shape{} : without(indices.strides(), dim);
  const StridedLayout outer = coalesce(outer_sizes, {&in_outer, &values_outer, &indices_outer});
  const bool native = len <= kSortMaxLine && vulkan_context_of(ctx).has_sized_shader_types() &&
                      outer.fits(kSortMaxRank) && addressable(self) && addressable(values) &&
                      addressable(indices);
  if (!native) {
    run_on_host<kernels::Sort>(ctx, values, indices, self, dim, descending, stable);
    return;
  }
  SortParams p{};
  p.in = reinterpret_cast<uint64_t>(self.data_ptr());
  p.values = reinterpret_cast<uint64_t>(values.data_ptr());
  p.indices = reinterpret_cast<uint64_t>(indices.data_ptr());
  p.len = static_cast<uint32_t>(len);
  p.k = static_cast<uint32_t>(k);
  p.padded = std::bit_ceil(p.len);
  p.lines = static_cast<uint32_t>(outer.numel);
  p.in_step = scalar ? 0 : static_cast<int32_t>(self.stride(dim));
  p.values_step = scalar ? 0 : static_cast<int32_t>(values.stride(dim));
  p.indices_step = scalar ? 0 : static_cast<int32_t>(indices.stride(dim));
  p.rank = static_cast<uint32_t>(outer.rank());
  for (int d = 0; d < outer.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(outer.sizes[d]);
    p.in_strides[d] = static_cast<int32_t>(outer.strides[0][d]);
    p.values_strides[d] = static_cast<int32_t>(outer.strides[1][d]);
    p.indices_strides[d] = static_cast<int32_t>(outer.strides[2][d]);
  }
  launch_groups(ctx, "sort", {static_cast<uint32_t>(self.dtype()), descending ? 1u : 0u}, p,
                std::min<uint32_t>(p.lines, kMaxWorkGroupsPerDim));
}

}  // namespace

void register_sort_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Sort>(type, sort_kernel);
}

}  // namespace tessera::vulkan
