// softmax, log_softmax and their backward (the Softmax and SoftmaxBackward
// kernels), with the CPU device's semantics.
//
// Design: the softmax dim is brought last and the input made contiguous
// (no copy for the common case of the last dim of a contiguous tensor), so
// every kernel works on [M, N] rows. A warp handles a short row (N <= 1024)
// and a block a long one. A row that fits the group's registers
// (row_registers.cuh: up to 32 values a thread) is read once with vector
// loads; a longer one in fixed passes (max, sum of exp, write). Either way
// values combine in a fixed tree order, so results are the same bits on
// every run. f16 / bf16 / f32 compute in float, f64 in double. An output
// that is not laid out as rows goes through a contiguous temporary.
#include <limits>
#include <type_traits>

#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/row_group.cuh"
#include "devices/cuda/kernels/row_registers.cuh"
#include "devices/cuda/kernels/warp_reduce.cuh"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// ---------------------------------------------------------------------------
// Row views: `dim` moved last, contiguous.

Shape dim_last_perm(int64_t rank, int64_t dim) {
  Shape perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) perm.push_back(d);
  }
  perm.push_back(dim);
  return perm;
}

// The destination rows of `target` (permuted by perm): the target itself
// when that view is contiguous, else a temporary that finish() copies back.
class RowsOut {
 public:
  RowsOut(Tensor& target, const Shape& perm) : view_(target.permute(perm)) {
    rows_ = view_.is_contiguous()
                ? view_
                : empty(view_.sizes(), TensorOptions(view_.dtype(), view_.device()));
  }
  template <typename T>
  T* data() const { return rows_.data<T>(); }
  void finish() {
    if (!rows_.is_same(view_)) view_.copy_(rows_);
  }

 private:
  Tensor view_, rows_;
};

// ---------------------------------------------------------------------------
// Kernels. The row loops are uniform across a group (a warp's lanes share
// a row; a block's threads share a row), so the collective calls inside
// are reached by every thread that must take part.

// softmax: y = exp(x - max) / sum(exp(x - max)); log_softmax:
// y = x - (max + log(sum(exp(x - max)))). NaN anywhere makes max NaN and
// the row NaN, as on the CPU.
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> g;
  for (int64_t row = g.first_row; row < rows; row += g.row_step) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t i = g.rank; i < n; i += g.size) mx = dm::nan_max(mx, convert<C>(xr[i]));
    mx = group_all<kBlock>(mx, NanMax<C>{}, scratch, &result);
    C sum = 0;
    for (int64_t i = g.rank; i < n; i += g.size) sum += dm::exp(convert<C>(xr[i]) - mx);
    sum = group_all<kBlock>(sum, Add<C>{}, scratch, &result);
    if (log) {
      const C lse = mx + dm::log(sum);
      for (int64_t i = g.rank; i < n; i += g.size) yr[i] = convert<T>(convert<C>(xr[i]) - lse);
    } else {
      const C inv = C(1) / sum;
      for (int64_t i = g.rank; i < n; i += g.size) {
        yr[i] = convert<T>(dm::exp(convert<C>(xr[i]) - mx) * inv);
      }
    }
  }
}

// The same for a row held in registers (row_registers_fit).
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    softmax_cached_rows_kernel(const T* x, T* y, int64_t rows, int n, bool log) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> g;
  for (int64_t row = g.first_row; row < rows; row += g.row_step) {
    RowRegisters<T> r(g.rank, g.size, n);
    r.load(x + row * n);
    C mx = r.fold(-std::numeric_limits<C>::infinity(),
                  [](C a, C b) { return dm::nan_max(a, b); });
    mx = group_all<kBlock>(mx, NanMax<C>{}, scratch, &result);
    C sum = r.fold(C(0), [mx](C a, C b) { return a + dm::exp(b - mx); });
    sum = group_all<kBlock>(sum, Add<C>{}, scratch, &result);
    if (log) {
      const C lse = mx + dm::log(sum);
      r.store(y + row * n, [lse](C v, int) { return v - lse; });
    } else {
      const C inv = C(1) / sum;
      r.store(y + row * n, [mx, inv](C v, int) { return dm::exp(v - mx) * inv; });
    }
  }
}

// softmax:     grad_in = y * (g - sum(g * y))
// log_softmax: grad_in = g - exp(y) * sum(g)
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    softmax_backward_rows_kernel(const T* grad_out, const T* out, T* grad_in, int64_t rows,
                                 int64_t n, bool log) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> grp;
  for (int64_t row = grp.first_row; row < rows; row += grp.row_step) {
    const T* gr = grad_out + row * n;
    const T* yr = out + row * n;
    T* gir = grad_in + row * n;
    C sum = 0;
    if (log) {
      for (int64_t i = grp.rank; i < n; i += grp.size) sum += convert<C>(gr[i]);
    } else {
      for (int64_t i = grp.rank; i < n; i += grp.size) sum += convert<C>(gr[i]) * convert<C>(yr[i]);
    }
    sum = group_all<kBlock>(sum, Add<C>{}, scratch, &result);
    for (int64_t i = grp.rank; i < n; i += grp.size) {
      const C g = convert<C>(gr[i]), y = convert<C>(yr[i]);
      gir[i] = convert<T>(log ? g - dm::exp(y) * sum : y * (g - sum));
    }
  }
}

// ---------------------------------------------------------------------------
// Entry points; launch_rows (row_group.cuh) picks a warp or a block per row.

// A 0-d tensor as one row of one element.
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.unsqueeze(0) : t; }

void softmax_kernel(const KernelContext& ctx, bool log, Tensor& out, const Tensor& in,
                    int64_t dim) {
  const char* name = log ? "log_softmax" : "softmax";
  TESSERA_CHECK(is_floating(in.dtype()), TypeError, name,
                ": the cuda kernel takes floating dtypes, got ", describe(in));
  TESSERA_CHECK(out.dtype() == in.dtype() && out.sizes() == in.sizes(), TypeError, name,
                ": the cuda kernel needs an output of the input's dtype and sizes, got ",
                describe(out), " for input ", describe(in));
  if (in.numel() == 0) return;
  const Tensor in1 = at_least_1d(in);
  Tensor out1 = at_least_1d(out);
  const int64_t d = in.dim() == 0 ? 0 : dim;
  TESSERA_CHECK(d >= 0 && d < in1.dim(), IndexError, name, ": dim ", dim, " out of range for ",
                describe(in));
  const Shape perm = dim_last_perm(in1.dim(), d);
  const Tensor x = in1.permute(perm).contiguous();
  RowsOut y(out1, perm);
  const int64_t n = in1.sizes()[static_cast<size_t>(d)];
  const int64_t rows = in1.numel() / n;
  dispatch_float_dtype(in.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    launch_rows(ctx, name, rows, n, [&](auto block, unsigned grid, int threads, cudaStream_t s) {
      if (row_registers_fit<T>(n, row_group_size(block, threads), {xp, yp})) {
        softmax_cached_rows_kernel<T, decltype(block)::value>
            <<<grid, threads, 0, s>>>(xp, yp, rows, static_cast<int>(n), log);
      } else {
        softmax_rows_kernel<T, decltype(block)::value><<<grid, threads, 0, s>>>(xp, yp, rows, n, log);
      }
    });
  });
  y.finish();
}

void softmax_backward_kernel(const KernelContext& ctx, bool log, Tensor& grad_in,
                             const Tensor& grad_out, const Tensor& output, int64_t dim) {
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  TESSERA_CHECK(is_floating(output.dtype()), TypeError, name,
                ": the cuda kernel takes floating dtypes, got output ", describe(output));
  TESSERA_CHECK(grad_out.dtype() == output.dtype() && grad_in.dtype() == output.dtype() &&
                    grad_out.sizes() == output.sizes() && grad_in.sizes() == output.sizes(),
                TypeError, name, ": the cuda kernel needs one dtype and one shape, got grad_in ",
                describe(grad_in), ", grad_out ", describe(grad_out), ", output ",
                describe(output));
  if (output.numel() == 0) return;
  const Tensor out1 = at_least_1d(output), gout1 = at_least_1d(grad_out);
  Tensor gin1 = at_least_1d(grad_in);
  const int64_t d = output.dim() == 0 ? 0 : dim;
  TESSERA_CHECK(d >= 0 && d < out1.dim(), IndexError, name, ": dim ", dim, " out of range for ",
                describe(output));
  const Shape perm = dim_last_perm(out1.dim(), d);
  const Tensor y = out1.permute(perm).contiguous();
  const Tensor g = gout1.permute(perm).contiguous();
  RowsOut gi(gin1, perm);
  const int64_t n = out1.sizes()[static_cast<size_t>(d)];
  const int64_t rows = out1.numel() / n;
  dispatch_float_dtype(output.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* gip = gi.data<T>();
    launch_rows(ctx, name, rows, n, [&](auto block, unsigned grid, int threads, cudaStream_t s) {
      softmax_backward_rows_kernel<T, decltype(block)::value>
          <<<grid, threads, 0, s>>>(gp, yp, gip, rows, n, log);
    });
  });
  gi.finish();
}

}  // namespace

void register_softmax_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Softmax>(type, &softmax_kernel);
  registry.register_kernel<kernels::SoftmaxBackward>(type, &softmax_backward_kernel);
}

}  // namespace tessera::cuda
