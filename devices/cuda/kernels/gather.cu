// Gather (torch.gather, and index_select through an expanded index) on the
// GPU: one thread per output element.
//
// As on the CPU device, self is re-strided to out's sizes with stride 0
// along dim, so (out, index, that base) share one shape and go through the
// elementwise engine's merged layout (strided_layout.h); each element then
// reads base + index * stride(dim). Elements are only moved, so the kernel
// is instantiated per element width, not per dtype. Index math is 32-bit
// when every offset fits, 64-bit otherwise.
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

template <typename W, typename I>
__global__ void gather_elements(StridedLayout<3, I> l, W* out, const int64_t* index, const W* self,
                                int64_t n, int64_t size, int64_t dim_stride) {
  for (int64_t i = grid_index(); i < n; i += grid_step()) {
    I off[3];
    offsets_of<3, I>(l, static_cast<I>(i), off);
    int64_t k = index[off[1]];
    if (k < 0) k += size;  // the front end range-checked [-size, size)
    out[off[0]] = self[static_cast<int64_t>(off[2]) + k * dim_stride];
  }
}

// self viewed with `sizes` and stride 0 along dim (the base of each read).
Tensor restrided_base(const Tensor& self, const Shape& sizes, int64_t dim) {
  Shape strides = self.strides();
  strides[static_cast<size_t>(dim)] = 0;
  return self.as_strided(sizes, strides, self.storage_offset());
}

void gather_kernel(const KernelContext& ctx, Tensor& out, const Tensor& self, int64_t dim,
                   const Tensor& index) {
  const int64_t n = out.numel();
  if (n == 0) return;
  TESSERA_CHECK(index.dtype() == DType::kI64 && out.dtype() == self.dtype() &&
                    index.sizes() == out.sizes() && self.dim() == out.dim() && self.dim() > 0,
                TypeError, "gather: the cuda kernel needs an int64 index of out's sizes and self "
                "of out's dtype and rank, got out ", describe(out), ", self ", describe(self),
                ", index ", describe(index));
  const Tensor base = restrided_base(self, out.sizes(), dim);
  LayoutPlan<3> plan = plan_layout<3>({&out, &index, &base});
  if (plan.too_many_dims &&
      !(out.is_contiguous() && index.is_contiguous() && self.is_contiguous())) {
    // Rare: retry with dense operands.
    Tensor dense = empty(out.sizes(), TensorOptions(out.dtype(), ctx.device));
    gather_kernel(ctx, dense, self.contiguous(), dim, index.contiguous());
    out.copy_(dense);
    return;
  }
  // As plan_reduce: ranks that high do not occur in practice.
  TESSERA_CHECK(!plan.too_many_dims, ValueError, "gather: the cuda kernel supports at most ",
                kMaxDims, " dims after merging, got self ", describe(self), ", index ",
                describe(index));
  const int64_t size = self.sizes()[static_cast<size_t>(dim)];
  const int64_t dim_stride = self.strides()[static_cast<size_t>(dim)];
  dispatch_width(out.itemsize(), [&](auto tag) {
    using W = decltype(tag);
    W* o = static_cast<W*>(out.data_ptr());
    const int64_t* ix = index.data<int64_t>();
    const W* s = static_cast<const W*>(self.data_ptr());
    if (plan.fits_32bit) {
      gather_elements<W, int32_t><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          narrow_layout<3, int32_t>(plan), o, ix, s, n, size, dim_stride);
    } else {
      gather_elements<W, int64_t><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(
          narrow_layout<3, int64_t>(plan), o, ix, s, n, size, dim_stride);
    }
    after_launch(ctx, "gather");
  });
}

}  // namespace

void register_gather_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Gather>(type, &gather_kernel);
}

}  // namespace tessera::cuda
