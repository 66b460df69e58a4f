// sort (and topk, argsort: the front end's composites over it) natively for
// every dtype, in shaders/sort.comp: a merge sort of (order-preserving key,
// index) in a device scratch buffer, all lines at once: sorted runs of 16,
// then log2(len / 16) merge launches where each invocation finds its place
// on the merge path by binary search, then the first k written out. Equal
// values keep index order (stable, as the CPU kernel) and NaN sorts
// largest. More than 3 outer dims after coalescing, more than 2^29
// elements, offsets beyond 32 bits and devices without 8/16/64-bit shader
// types stage through the host.
//
// (A bitonic sort per line in shared memory was the first version: with
// its ~log^2 barrier stages it ran at ~15 ms per line of 1000 on lavapipe,
// where barriers and shared-memory scatters are costly, and a [2048, 2048]
// sort exceeded the 60 s wait limit.)
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

constexpr int kSortMaxRank = 3;  // kMaxRank in shaders/sort.comp
constexpr int64_t kSortRun = 16;  // kRun in shaders/sort.comp
// The scratch buffer is addressed in 32-bit words with int offsets: keys
// (2 words each) and two orders (1 word each) of every element.
constexpr int64_t kSortMaxElements = int64_t{1} << 29;

struct SortParams {
  uint64_t in;
  uint64_t values;
  uint64_t indices;
  uint64_t scratch;
  uint32_t len;
  uint32_t k;
  uint32_t lines;
  uint32_t width;
  int32_t in_step;
  int32_t values_step;
  int32_t indices_step;
  uint32_t rank;
  uint32_t descending;
  uint32_t from_b;
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

// Pass 2 only copies values: one pipeline per element size.
DType same_size_dtype(DType t) {
  switch (itemsize(t)) {
    case 1: return DType::kU8;
    case 2: return DType::kI16;
    case 4: return DType::kI32;
    default: return DType::kI64;
  }
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
  const bool native = self.numel() <= kSortMaxElements && vulkan_context_of(ctx).has_sized_shader_types() &&
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
  // Keys (8 bytes) and orders A and B (4 bytes each) of every element.
  Tensor scratch = empty({self.numel() * 2}, TensorOptions(DType::kI64, ctx.device));
  p.scratch = reinterpret_cast<uint64_t>(scratch.data_ptr());
  p.descending = descending ? 1u : 0u;
  const int64_t runs = p.lines * ((len + kSortRun - 1) / kSortRun);
  launch(ctx, "sort", {static_cast<uint32_t>(self.dtype()), 0u}, p, runs);
  for (int64_t width = kSortRun; width < len; width *= 2) {
    p.width = static_cast<uint32_t>(width);
    launch(ctx, "sort", {0u, 1u}, p, runs);  // compares keys only: any dtype
    p.from_b = 1u - p.from_b;
  }
  launch(ctx, "sort", {static_cast<uint32_t>(same_size_dtype(self.dtype())), 2u}, p,
         p.lines * k);
}

}  // namespace

void register_sort_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Sort>(type, sort_kernel);
}

}  // namespace tessera::vulkan
