// layer_norm and rms_norm, forward and backward (the LayerNorm and
// LayerNormBackward kernels), with the CPU device's semantics.
//
// x is viewed as [M, N] rows (the normalized dims last), made contiguous
// when it is not. Row work (statistics, outputs, grad_input) runs a warp
// per short row (N <= 1024) and a block per long one, in the compute type
// (float for f16 / bf16 / f32, double for f64), two passes for the variance
// (no E[x^2] - E[x]^2 cancellation), combined in a fixed tree order. The
// forward holds a row in registers when it fits (row_registers.cuh), so x
// is read once.
// grad_weight / grad_bias are column sums over the M rows: a thread per
// column sums a fixed chunk of rows in double (as the CPU accumulates),
// and a second pass adds the chunks in order, so every run gives the same
// bits. Outputs not laid out as rows go through contiguous temporaries.
#include <algorithm>
#include <initializer_list>
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

// Column sums: about this many blocks in all, each chunk at least this
// many rows (depends only on the shape, so results are reproducible).
constexpr int64_t kColumnTargetBlocks = 1024;
constexpr int64_t kColumnMinRows = 32;

template <typename C>
constexpr DType dtype_of() {
  return std::is_same_v<C, double> ? DType::kF64 : DType::kF32;
}

// A destination of `count` contiguous elements of type dt for `target`
// (any dtype and strides, `count` elements): the target itself when it
// already is that, else a temporary that finish() copies (and converts)
// into it. An undefined target stays undefined (data() is null).
class FlatOut {
 public:
  FlatOut(Tensor& target, DType dt, const Device& device) : target_(target) {
    if (!target.defined()) return;
    buf_ = target.dtype() == dt && target.is_contiguous()
               ? target
               : empty({target.numel()}, TensorOptions(dt, device));
  }
  template <typename T>
  T* data() const { return buf_.defined() ? buf_.data<T>() : nullptr; }
  void finish() {
    if (buf_.defined() && !buf_.is_same(target_)) target_.copy_(buf_.view(target_.sizes()));
  }

 private:
  Tensor& target_;
  Tensor buf_;
};

// An input as contiguous values of dtype dt (undefined stays undefined).
Tensor dense_as(const Tensor& t, DType dt) {
  if (!t.defined()) return t;
  return t.to(dt).contiguous();
}

template <typename T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Every thread of a row group gets the sum (row_group.cuh).
template <bool kBlock, typename C>
__device__ __forceinline__ C group_sum(C v, C* scratch, C* result) {
  return group_all<kBlock>(v, Add<C>{}, scratch, result);
}

// ---------------------------------------------------------------------------
// Kernels. Row loops are uniform across a group, so every thread of a
// group reaches the collective calls.

// y = (x - mean) * rstd * w + b (rms: mean 0, no bias), rstd =
// 1 / sqrt(var + eps). w, b, mean_out, rstd_out may be null.
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    layer_norm_rows_kernel(const T* x, T* y, const T* w, const T* b, compute_t<T>* mean_out,
                           compute_t<T>* rstd_out, int64_t rows, int64_t n, compute_t<T> eps,
                           bool rms) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> g;
  for (int64_t row = g.first_row; row < rows; row += g.row_step) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    C mean = 0;
    if (!rms) {
      C s = 0;
      for (int64_t i = g.rank; i < n; i += g.size) s += convert<C>(xr[i]);
      mean = group_sum<kBlock>(s, scratch, &result) / static_cast<C>(n);
    }
    C q = 0;
    for (int64_t i = g.rank; i < n; i += g.size) {
      const C d = convert<C>(xr[i]) - mean;
      q += d * d;
    }
    const C var = group_sum<kBlock>(q, scratch, &result) / static_cast<C>(n);
    const C rstd = C(1) / dm::sqrt(var + eps);
    if (g.rank == 0) {
      if (mean_out != nullptr) mean_out[row] = mean;
      if (rstd_out != nullptr) rstd_out[row] = rstd;
    }
    for (int64_t i = g.rank; i < n; i += g.size) {
      C v = (convert<C>(xr[i]) - mean) * rstd;
      if (w != nullptr) v = v * convert<C>(w[i]);
      if (b != nullptr) v = v + convert<C>(b[i]);
      yr[i] = convert<T>(v);
    }
  }
}

// The same for a row held in registers (row_registers_fit): one read of x,
// the two passes of the statistics over the registers.
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    layer_norm_cached_rows_kernel(const T* x, T* y, const T* w, const T* b,
                                  compute_t<T>* mean_out, compute_t<T>* rstd_out, int64_t rows,
                                  int n, compute_t<T> eps, bool rms) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> g;
  for (int64_t row = g.first_row; row < rows; row += g.row_step) {
    RowRegisters<T> r(g.rank, g.size, n);
    r.load(x + row * n);
    C mean = 0;
    if (!rms) {
      const C s = r.fold(C(0), [](C a, C v) { return a + v; });
      mean = group_sum<kBlock>(s, scratch, &result) / static_cast<C>(n);
    }
    const C q = r.fold(C(0), [mean](C a, C v) { return a + (v - mean) * (v - mean); });
    const C var = group_sum<kBlock>(q, scratch, &result) / static_cast<C>(n);
    const C rstd = C(1) / dm::sqrt(var + eps);
    if (g.rank == 0) {
      if (mean_out != nullptr) mean_out[row] = mean;
      if (rstd_out != nullptr) rstd_out[row] = rstd;
    }
    r.store(y + row * n, [=](C v, int i) {
      C out = (v - mean) * rstd;
      if (w != nullptr) out = out * convert<C>(w[i]);
      if (b != nullptr) out = out + convert<C>(b[i]);
      return out;
    });
  }
}

// grad_input of a row: with xh = (x - mean) * rstd and gw = g * w,
//   grad_input = rstd * (gw - mean(gw) - xh * mean(gw * xh))
// (rms: mean 0 and no mean(gw) term). mean may be null (rms), w too.
template <typename T, bool kBlock>
__global__ void __launch_bounds__(kBlock ? kLongRowThreads : kBlockSize)
    layer_norm_grad_input_kernel(const T* grad_out, const T* x, const T* w,
                                 const compute_t<T>* mean, const compute_t<T>* rstd, T* grad_input,
                                 int64_t rows, int64_t n, bool rms) {
  using C = compute_t<T>;
  __shared__ C scratch[32];
  __shared__ C result;
  const RowGroup<kBlock> grp;
  const C inv_n = C(1) / static_cast<C>(n);
  for (int64_t row = grp.first_row; row < rows; row += grp.row_step) {
    const T* gr = grad_out + row * n;
    const T* xr = x + row * n;
    T* gir = grad_input + row * n;
    const C mu = mean != nullptr ? mean[row] : C(0);
    const C rs = rstd[row];
    C s1 = 0, s2 = 0;
    for (int64_t i = grp.rank; i < n; i += grp.size) {
      const C gw = w != nullptr ? convert<C>(gr[i]) * convert<C>(w[i]) : convert<C>(gr[i]);
      s1 += gw;
      s2 += gw * ((convert<C>(xr[i]) - mu) * rs);
    }
    s1 = group_sum<kBlock>(s1, scratch, &result);
    s2 = group_sum<kBlock>(s2, scratch, &result);
    const C a = rms ? C(0) : s1 * inv_n;
    const C bb = s2 * inv_n;
    for (int64_t i = grp.rank; i < n; i += grp.size) {
      const C gw = w != nullptr ? convert<C>(gr[i]) * convert<C>(w[i]) : convert<C>(gr[i]);
      const C xh = (convert<C>(xr[i]) - mu) * rs;
      gir[i] = convert<T>(rs * (gw - a - xh * bb));
    }
  }
}

// Partial column sums of chunk blockIdx.y (rows [r0, r1)), in double:
//   part_w[chunk, col] = sum g * xh, part_b[chunk, col] = sum g.
// Either output may be null. Grid: (ceil(n / blockDim), chunks).
template <typename T>
__global__ void layer_norm_param_partials_kernel(const T* grad_out, const T* x,
                                                 const compute_t<T>* mean,
                                                 const compute_t<T>* rstd, int64_t rows, int64_t n,
                                                 int64_t rows_per_chunk, double* part_w,
                                                 double* part_b) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= n) return;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  double sw = 0, sb = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const double g = convert<double>(grad_out[r * n + col]);
    const double mu = mean != nullptr ? static_cast<double>(mean[r]) : 0.0;
    const double xh = (convert<double>(x[r * n + col]) - mu) * static_cast<double>(rstd[r]);
    sw += g * xh;
    sb += g;
  }
  if (part_w != nullptr) part_w[chunk * n + col] = sw;
  if (part_b != nullptr) part_b[chunk * n + col] = sb;
}

// out[col] = the sum of part[0..chunks, col] in chunk order (out and part
// null together).
template <typename T>
__global__ void layer_norm_param_finish_kernel(const double* part_w, const double* part_b,
                                               T* grad_weight, T* grad_bias, int64_t n,
                                               int64_t chunks) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < n;
       col += stride) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      if (part_w != nullptr) sw += part_w[c * n + col];
      if (part_b != nullptr) sb += part_b[c * n + col];
    }
    if (grad_weight != nullptr) grad_weight[col] = convert<T>(sw);
    if (grad_bias != nullptr) grad_bias[col] = convert<T>(sb);
  }
}

// ---------------------------------------------------------------------------
// Host side.

struct RowShape {
  int64_t rows = 1, n = 1;
};

RowShape row_shape(const char* name, const Tensor& x, int64_t norm_dims) {
  TESSERA_CHECK(norm_dims >= 1 && norm_dims <= x.dim(), ValueError, name, ": norm_dims ",
                norm_dims, " out of range for input ", describe(x));
  RowShape s;
  for (int64_t d = 0; d < x.dim(); ++d) {
    (d < x.dim() - norm_dims ? s.rows : s.n) *= x.sizes()[static_cast<size_t>(d)];
  }
  return s;
}

void layer_norm_kernel(const KernelContext& ctx, bool rms, Tensor& out, Tensor& mean,
                       Tensor& rstd, const Tensor& x, const Tensor& weight, const Tensor& bias,
                       int64_t norm_dims, double eps) {
  const char* name = rms ? "rms_norm" : "layer_norm";
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, name,
                ": the cuda kernel takes floating dtypes, got input ", describe(x));
  TESSERA_CHECK(out.dtype() == x.dtype() && out.sizes() == x.sizes(), TypeError, name,
                ": the cuda kernel needs an output of the input's dtype and sizes, got ",
                describe(out), " for input ", describe(x));
  const RowShape s = row_shape(name, x, norm_dims);
  for (const Tensor* p : {&weight, &bias}) {
    TESSERA_CHECK(!p->defined() || (is_floating(p->dtype()) && p->numel() == s.n), ValueError,
                  name, ": weight and bias must be floating with ", s.n, " elements, got ",
                  describe(*p), " for input ", describe(x));
  }
  for (const Tensor* t : {&mean, &rstd}) {
    TESSERA_CHECK(!t->defined() || (is_floating(t->dtype()) && t->numel() == s.rows), ValueError,
                  name, ": mean and rstd must be floating with ", s.rows, " elements, got ",
                  describe(*t), " for input ", describe(x));
  }
  if (x.numel() == 0) return;  // the front end fills the statistics of empty rows
  dispatch_float_dtype(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const Tensor xd = x.contiguous();
    const Tensor w = dense_as(weight, x.dtype());
    const Tensor b = rms ? Tensor() : dense_as(bias, x.dtype());
    FlatOut y(out, x.dtype(), ctx.device);
    Tensor no_mean;
    FlatOut mean_out(rms ? no_mean : mean, dtype_of<C>(), ctx.device);
    FlatOut rstd_out(rstd, dtype_of<C>(), ctx.device);
    const T* xp = xd.data<T>();
    T* yp = y.data<T>();
    const T* wp = ptr_or_null<T>(w);
    const T* bp = ptr_or_null<T>(b);
    C* mp = mean_out.data<C>();
    C* rp = rstd_out.data<C>();
    const C eps_c = static_cast<C>(eps);
    launch_rows(ctx, name, s.rows, s.n, [&](auto block, unsigned grid, int threads,
                                            cudaStream_t st) {
      if (row_registers_fit<T>(s.n, row_group_size(block, threads), {xp, yp})) {
        layer_norm_cached_rows_kernel<T, decltype(block)::value><<<grid, threads, 0, st>>>(
            xp, yp, wp, bp, mp, rp, s.rows, static_cast<int>(s.n), eps_c, rms);
      } else {
        layer_norm_rows_kernel<T, decltype(block)::value>
            <<<grid, threads, 0, st>>>(xp, yp, wp, bp, mp, rp, s.rows, s.n, eps_c, rms);
      }
    });
    y.finish();
    mean_out.finish();
    rstd_out.finish();
  });
}

void layer_norm_backward_kernel(const KernelContext& ctx, bool rms, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                const Tensor& weight, int64_t norm_dims) {
  const char* name = rms ? "rms_norm_backward" : "layer_norm_backward";
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, name,
                ": the cuda kernel takes floating dtypes, got input ", describe(x));
  TESSERA_CHECK(grad_out.dtype() == x.dtype() && grad_out.sizes() == x.sizes(), TypeError, name,
                ": grad_out must have the input's dtype and sizes, got ", describe(grad_out),
                " for input ", describe(x));
  TESSERA_CHECK(!grad_input.defined() ||
                    (grad_input.dtype() == x.dtype() && grad_input.sizes() == x.sizes()),
                TypeError, name, ": grad_input must have the input's dtype and sizes, got ",
                describe(grad_input), " for input ", describe(x));
  const RowShape s = row_shape(name, x, norm_dims);
  TESSERA_CHECK(rstd.defined() && is_floating(rstd.dtype()) && rstd.numel() == s.rows &&
                    (rms || (mean.defined() && is_floating(mean.dtype()) &&
                             mean.numel() == s.rows)),
                ValueError, name, ": needs floating mean (layer norm) and rstd of ", s.rows,
                " elements, got mean ", describe(mean), ", rstd ", describe(rstd));
  for (const Tensor* p :
       std::initializer_list<const Tensor*>{&weight, &grad_weight, &grad_bias}) {
    TESSERA_CHECK(!p->defined() || (is_floating(p->dtype()) && p->numel() == s.n), ValueError,
                  name, ": weight, grad_weight and grad_bias must be floating with ", s.n,
                  " elements, got ", describe(*p), " for input ", describe(x));
  }
  const bool want_bias = !rms && grad_bias.defined();
  if (s.rows == 0 || s.n == 0) {
    // No rows: the parameter gradients are empty sums.
    if (grad_weight.defined()) grad_weight.zero_();
    if (want_bias) grad_bias.zero_();
    return;
  }
  dispatch_float_dtype(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const Tensor xd = x.contiguous();
    const Tensor gd = grad_out.contiguous();
    const Tensor w = dense_as(weight, x.dtype());
    const Tensor mu = rms ? Tensor() : dense_as(mean, dtype_of<C>());
    const Tensor rs = dense_as(rstd, dtype_of<C>());
    const T* xp = xd.data<T>();
    const T* gp = gd.data<T>();
    const C* mp = ptr_or_null<C>(mu);
    const C* rp = rs.data<C>();
    if (grad_input.defined()) {
      FlatOut gi(grad_input, x.dtype(), ctx.device);
      const T* wp = ptr_or_null<T>(w);
      T* gip = gi.data<T>();
      launch_rows(ctx, name, s.rows, s.n, [&](auto block, unsigned grid, int threads,
                                              cudaStream_t st) {
        layer_norm_grad_input_kernel<T, decltype(block)::value>
            <<<grid, threads, 0, st>>>(gp, xp, wp, mp, rp, gip, s.rows, s.n, rms);
      });
      gi.finish();
    }
    if (!grad_weight.defined() && !want_bias) return;
    // Column sums in fixed chunks of rows: about kColumnTargetBlocks blocks.
    const int64_t col_blocks = ceil_div(s.n, kBlockSize);
    const int64_t wanted_chunks = std::max<int64_t>(1, kColumnTargetBlocks / col_blocks);
    const int64_t rows_per_chunk =
        std::max<int64_t>(kColumnMinRows, ceil_div(s.rows, wanted_chunks));
    const int64_t chunks = ceil_div(s.rows, rows_per_chunk);
    const TensorOptions f64(DType::kF64, ctx.device);
    Tensor part_w, part_b;
    if (grad_weight.defined()) part_w = empty({chunks * s.n}, f64);
    if (want_bias) part_b = empty({chunks * s.n}, f64);
    double* pw = part_w.defined() ? part_w.data<double>() : nullptr;
    double* pb = part_b.defined() ? part_b.data<double>() : nullptr;
    cudaStream_t stream = stream_of(ctx);
    const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
    layer_norm_param_partials_kernel<T>
        <<<grid, kBlockSize, 0, stream>>>(gp, xp, mp, rp, s.rows, s.n, rows_per_chunk, pw, pb);
    after_launch(ctx, name);
    Tensor no_bias;
    FlatOut gw(grad_weight, x.dtype(), ctx.device);
    FlatOut gb(want_bias ? grad_bias : no_bias, x.dtype(), ctx.device);
    layer_norm_param_finish_kernel<T><<<grid_for(s.n), kBlockSize, 0, stream>>>(
        pw, pb, gw.data<T>(), gb.data<T>(), s.n, chunks);
    after_launch(ctx, name);
    gw.finish();
    gb.finish();
  });
}

}  // namespace

void register_layer_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::LayerNorm>(type, &layer_norm_kernel);
  registry.register_kernel<kernels::LayerNormBackward>(type, &layer_norm_backward_kernel);
}

}  // namespace tessera::cuda
