// MaskedFill on the GPU: self[i] = value where mask[i], an in-place pass of
// the elementwise engine (self is both its output and first input; each
// element is read and written by one thread), so any strides and the
// broadcast mask (stride 0) come for free.
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/core/scalar.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

template <typename C>
struct FillWhere {
  C value;
  __device__ C operator()(C x, bool m) const { return m ? value : x; }
};

void masked_fill_kernel(const KernelContext& ctx, Tensor& self, const Tensor& mask, Scalar value) {
  if (self.numel() == 0) return;
  TESSERA_CHECK(mask.dtype() == DType::kBool && mask.sizes() == self.sizes(), TypeError,
                "masked_fill: the cuda kernel needs a bool mask of self's sizes, got self ",
                describe(self), ", mask ", describe(mask));
  dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    // As the CPU's value.to<T>(): a 16-bit float through float, rounded to
    // the storage type once, when stored.
    const C v = is_half_v<T> ? static_cast<C>(value.to<double>()) : value.to<C>();
    elementwise<T, T, bool>(ctx, "masked_fill", self, {self, mask}, FillWhere<C>{v});
  });
}

}  // namespace

void register_masked_fill_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaskedFill>(type, &masked_fill_kernel);
}

}  // namespace tessera::cuda
