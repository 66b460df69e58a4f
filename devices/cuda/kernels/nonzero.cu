// Nonzero on the GPU: out [n, ndim] int64 = the coordinates of self's
// nonzero elements in row-major order (n counted by the front end).
//
// Three passes, no host synchronization: a flag (0/1, int64) per element in
// row-major order; an exclusive scan of the flags (cub::DeviceScan, in
// place) giving each nonzero element its row of out; then one thread per
// element writes the coordinates of the nonzero ones. The scan fixes every
// row, so the order is row-major whatever the thread timing.
#include <cub/device/device_scan.cuh>

#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

// The CPU device's limit on a tensor's rank (its StridedIter).
constexpr int kMaxRank = 64;

struct Sizes {
  int ndim;
  int64_t sizes[kMaxRank];
};

template <typename T>
__global__ void nonzero_flags(const T* self, LinearOffsets off, int64_t total, int64_t* flags) {
  for (int64_t i = grid_index(); i < total; i += grid_step()) {
    flags[i] = convert<bool>(self[off(i)]) ? 1 : 0;
  }
}

template <typename T>
__global__ void nonzero_coords(const T* self, LinearOffsets off, int64_t total,
                               const int64_t* rows, Sizes sizes, int64_t* out, int64_t os0,
                               int64_t os1, int64_t n) {
  for (int64_t i = grid_index(); i < total; i += grid_step()) {
    if (!convert<bool>(self[off(i)])) continue;
    const int64_t row = rows[i];
    if (row >= n) continue;  // never more than the front end counted
    int64_t rem = i;
    for (int d = sizes.ndim - 1; d >= 0; --d) {
      const int64_t q = rem / sizes.sizes[d];
      out[row * os0 + d * os1] = rem - q * sizes.sizes[d];
      rem = q;
    }
  }
}

void nonzero_kernel(const KernelContext& ctx, Tensor& out, const Tensor& self) {
  const int64_t n = out.dim() == 2 ? out.size(0) : 0;
  const int64_t total = self.numel();
  TESSERA_CHECK(out.dtype() == DType::kI64 && out.dim() == 2 && out.size(1) == self.dim(),
                TypeError, "nonzero: the cuda kernel needs an int64 out [n, ", self.dim(),
                "], got ", describe(out), " for self ", describe(self));
  // A 0-d self has no coordinates to write (out is [n, 0]).
  if (n == 0 || total == 0 || self.dim() == 0) return;
  TESSERA_CHECK(self.dim() <= kMaxRank, ValueError, "nonzero: the cuda kernel supports at most ",
                kMaxRank, " dims, got ", describe(self));
  LinearOffsets off;
  const Tensor src = fitted_input(self, off);
  Sizes sizes{};
  sizes.ndim = static_cast<int>(self.dim());
  for (int d = 0; d < sizes.ndim; ++d) sizes.sizes[d] = self.sizes()[static_cast<size_t>(d)];

  cudaStream_t stream = stream_of(ctx);
  Tensor rows = empty({total}, TensorOptions(DType::kI64, ctx.device));
  int64_t* r = rows.data<int64_t>();
  dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    nonzero_flags<T><<<grid_for(total), kBlockSize, 0, stream>>>(src.data<T>(), off, total, r);
  });
  after_launch(ctx, "nonzero");
  size_t bytes = 0;
  TESSERA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, r, total, stream),
                     ctx.device.index);
  Tensor temp = empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                      TensorOptions(DType::kU8, ctx.device));
  TESSERA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data_ptr(), bytes, r, total, stream),
                     ctx.device.index);
  dispatch_cuda_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    nonzero_coords<T><<<grid_for(total), kBlockSize, 0, stream>>>(
        src.data<T>(), off, total, r, sizes, out.data<int64_t>(), out.strides()[0],
        out.strides()[1], n);
  });
  after_launch(ctx, "nonzero");
}

}  // namespace

void register_nonzero_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Nonzero>(type, &nonzero_kernel);
}

}  // namespace tessera::cuda
