// Triangle (tril / triu) on the GPU: one thread per element of out, which
// takes in's element or zero by its (row, col) in the last two dims.
//
// The linear index splits into (batch, row, col); the batch dims of out and
// in are addressed through LinearOffsets (index_common.cuh) and the matrix
// dims through their own strides, so any strides work, and out may be in
// itself (each element is read and written by one thread). Elements are
// only moved, so the kernel is instantiated per element width; zero is the
// all-zero bit pattern in every dtype, as the CPU's convert<T>(0).
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

struct MatrixLayout {
  LinearOffsets batch;  // the dims before the last two
  int64_t row_stride, col_stride;
};

template <typename W>
__global__ void triangle_elements(W* out, MatrixLayout ol, const W* in, MatrixLayout il,
                                  int64_t rows, int64_t cols, int64_t total, int64_t diagonal,
                                  bool upper) {
  for (int64_t i = grid_index(); i < total; i += grid_step()) {
    const int64_t t = i / cols, col = i - t * cols;
    const int64_t b = t / rows, row = t - b * rows;
    const bool keep = upper ? (col - row >= diagonal) : (col - row <= diagonal);
    const int64_t o = ol.batch(b) + row * ol.row_stride + col * ol.col_stride;
    out[o] = keep ? in[il.batch(b) + row * il.row_stride + col * il.col_stride] : W(0);
  }
}

bool plan_matrix(const Tensor& t, MatrixLayout& l) {
  const size_t n = t.sizes().size();
  l.row_stride = t.strides()[n - 2];
  l.col_stride = t.strides()[n - 1];
  return plan_offsets(t.sizes(), t.strides(), 0, n - 2, l.batch);
}

void triangle_kernel(const KernelContext& ctx, Tensor& out, const Tensor& in, int64_t diagonal,
                     bool upper) {
  const int64_t total = out.numel();
  if (total == 0) return;
  TESSERA_CHECK(out.dim() >= 2 && out.dtype() == in.dtype() && out.sizes() == in.sizes(),
                TypeError, "triangle: the cuda kernel needs out and in of one dtype and sizes, "
                "at least 2-D, got out ", describe(out), ", in ", describe(in));
  MatrixLayout ol, il;
  if (!plan_matrix(out, ol)) {
    // Rare (too many unmergeable batch dims): through a dense temporary.
    Tensor dense = empty(out.sizes(), TensorOptions(out.dtype(), ctx.device));
    triangle_kernel(ctx, dense, in, diagonal, upper);
    out.copy_(dense);
    return;
  }
  Tensor src = in;
  if (!plan_matrix(src, il)) {
    src = in.contiguous();
    plan_matrix(src, il);
  }
  const int64_t rows = out.size(-2), cols = out.size(-1);
  dispatch_width(out.itemsize(), [&](auto tag) {
    using W = decltype(tag);
    triangle_elements<W><<<grid_for(total), kBlockSize, 0, stream_of(ctx)>>>(
        static_cast<W*>(out.data_ptr()), ol, static_cast<const W*>(src.data_ptr()), il, rows,
        cols, total, diagonal, upper);
  });
  after_launch(ctx, "triangle");
}

}  // namespace

void register_triangle_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Triangle>(type, &triangle_kernel);
}

}  // namespace tessera::cuda
