// batch_norm forward (training and eval) and backward (the BatchNorm and
// BatchNormBackward kernels), with the CPU device's semantics.
//
// x is viewed as [N, C, S] (S = the product of the dims after the channel
// dim), contiguous. Per-channel sums accumulate in double (as the CPU: a
// channel sums N * S values): grid (C, chunks), each block sums a fixed
// chunk of its channel with a fixed tree, and a thread per channel adds the
// chunks in order, so every run gives the same bits. The mean comes first
// and then the squared deviations (two passes, no cancellation). Small
// per-channel kernels turn the sums into statistics and coefficients; the
// elementwise passes (the output, grad_input) run on the elementwise engine
// with the [C] coefficients broadcast over x, so out / grad_input may have
// any strides. Statistics reach their tensors (any floating dtype and
// stride) through copy_.
#include <algorithm>
#include <initializer_list>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/elementwise.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/warp_reduce.cuh"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// Channel sums: about this many blocks in all, chunks of at least this
// many elements (both from the shape only, so results are reproducible).
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMinChunk = 2048;

struct Sums {
  double a, b;
};
struct AddSums {
  __device__ Sums operator()(Sums x, Sums y) const { return {x.a + y.a, x.b + y.b}; }
};

enum class Pass {
  kSum,        // a = sum x
  kSquaredDev, // a = sum (x - mean)^2, mean = sum_x / count
  kGrad,       // a = sum g, b = sum g * (x - mean) * invstd
};

// Block (c = blockIdx.x, k = blockIdx.y) sums elements [k * chunk_len,
// (k + 1) * chunk_len) of channel c's count = N * S elements (element i is
// at x[(n * C + c) * S + s] with n = i / S, s = i % S) into
// partial[c * chunks + k].
template <typename T, Pass P>
__global__ void channel_partials_kernel(const T* x, const T* g, const double* sum_x,
                                        const double* mean, const double* invstd,
                                        int64_t channels, int64_t inner, int64_t count,
                                        int64_t chunk_len, int64_t chunks, Sums* partial) {
  __shared__ Sums scratch[32];
  const int64_t c = blockIdx.x, k = blockIdx.y;
  const int64_t begin = k * chunk_len;
  const int64_t end = begin + chunk_len < count ? begin + chunk_len : count;
  Sums acc{0.0, 0.0};
  const int64_t i0 = begin + threadIdx.x;
  if (i0 < end) {  // so count > 0 and inner >= 1 below
    double mu = 0.0, is = 1.0;
    if constexpr (P == Pass::kSquaredDev) mu = sum_x[c] / static_cast<double>(count);
    if constexpr (P == Pass::kGrad) {
      mu = mean[c];
      is = invstd[c];
    }
    // (n, s) of element i, advanced by the block size without a division
    // per element: step = q * inner + r with r < inner.
    const int64_t step = blockDim.x;
    const int64_t q = step / inner, r = step - q * inner;
    int64_t n = i0 / inner, s = i0 - n * inner;
    for (int64_t i = i0; i < end; i += step) {
      const int64_t off = (n * channels + c) * inner + s;
      const double v = convert<double>(x[off]);
      if constexpr (P == Pass::kSum) {
        acc.a += v;
      } else if constexpr (P == Pass::kSquaredDev) {
        const double d = v - mu;
        acc.a += d * d;
      } else {
        const double gv = convert<double>(g[off]);
        acc.a += gv;
        acc.b += gv * (v - mu) * is;
      }
      s += r;
      n += q;
      if (s >= inner) {
        s -= inner;
        ++n;
      }
    }
  }
  acc = block_combine(acc, AddSums{}, scratch);  // every thread takes part
  if (threadIdx.x == 0) partial[c * chunks + k] = acc;
}

// a[c], b[c] (b may be null) = the sums of channel c's chunks, in order.
__global__ void channel_totals_kernel(const Sums* partial, int64_t channels, int64_t chunks,
                                      double* a, double* b) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += stride) {
    Sums t{0.0, 0.0};
    for (int64_t k = 0; k < chunks; ++k) t = AddSums{}(t, partial[c * chunks + k]);
    a[c] = t.a;
    if (b != nullptr) b[c] = t.b;
  }
}

// Per-channel values of the forward, in double. Null inputs take the CPU's
// defaults (weight 1, bias 0, running mean 0, running var 1); null running
// outputs are not updated.
struct ForwardChannels {
  const double *sum_x, *sum_sq;              // training
  const double *running_mean, *running_var;  // old values
  const double *weight, *bias;
  double *mean, *invstd;                     // training: the saved statistics
  double *new_running_mean, *new_running_var;
  double *scale, *shift;                     // out = x * scale + shift
};

__global__ void batch_norm_channels_kernel(ForwardChannels p, int64_t channels, bool training,
                                           double count, double momentum, double eps) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += stride) {
    const double rm = p.running_mean != nullptr ? p.running_mean[c] : 0.0;
    const double rv = p.running_var != nullptr ? p.running_var[c] : 1.0;
    double mean, invstd;
    if (training) {
      mean = p.sum_x[c] / count;
      const double var = p.sum_sq[c] / count;
      invstd = 1.0 / ::sqrt(var + eps);
      p.mean[c] = mean;
      p.invstd[c] = invstd;
      // The running variance tracks the unbiased estimate.
      const double unbiased = var * count / (count - 1.0);
      if (p.new_running_mean != nullptr) {
        p.new_running_mean[c] = (1.0 - momentum) * rm + momentum * mean;
      }
      if (p.new_running_var != nullptr) {
        p.new_running_var[c] = (1.0 - momentum) * rv + momentum * unbiased;
      }
    } else {
      mean = rm;
      invstd = 1.0 / ::sqrt(rv + eps);
    }
    const double w = p.weight != nullptr ? p.weight[c] : 1.0;
    const double b = p.bias != nullptr ? p.bias[c] : 0.0;
    p.scale[c] = invstd * w;
    p.shift[c] = b - mean * p.scale[c];
  }
}

// Backward statistics: training uses save_mean / save_invstd (defaults 0
// and 1); eval the running stats, invstd = 1 / sqrt(var + eps).
__global__ void backward_stats_kernel(const double* mean_src, const double* var_src,
                                      int64_t channels, bool training, double eps, double* mean,
                                      double* invstd) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += stride) {
    mean[c] = mean_src != nullptr ? mean_src[c] : 0.0;
    const double v = var_src != nullptr ? var_src[c] : 1.0;
    invstd[c] = training ? v : 1.0 / ::sqrt(v + eps);
  }
}

// grad_input coefficients: k = w * invstd, and in training the means
// mg = sum_g / count and mgx = sum_gxh / count.
__global__ void grad_input_coefs_kernel(const double* weight, const double* invstd,
                                        const double* sum_g, const double* sum_gxh,
                                        int64_t channels, bool training, double count, double* k,
                                        double* mg, double* mgx) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += stride) {
    k[c] = (weight != nullptr ? weight[c] : 1.0) * invstd[c];
    mg[c] = training ? sum_g[c] / count : 0.0;
    mgx[c] = training ? sum_gxh[c] / count : 0.0;
  }
}

// Elementwise functors (compute types in, the engine converts).
template <typename C>
struct Affine {
  __device__ C operator()(C x, double scale, double shift) const {
    return x * static_cast<C>(scale) + static_cast<C>(shift);
  }
};
template <typename C>
struct GradInputTraining {
  __device__ double operator()(C g, C x, double k, double mg, double mean, double invstd,
                               double mgx) const {
    const double xh = (static_cast<double>(x) - mean) * invstd;
    return k * (static_cast<double>(g) - mg - xh * mgx);
  }
};
template <typename C>
struct GradInputEval {
  __device__ double operator()(C g, double k) const { return k * static_cast<double>(g); }
};

// ---------------------------------------------------------------------------
// Host side.

struct NCS {
  int64_t n = 0, c = 0, s = 1;
};

NCS ncs_of(const Tensor& x) {
  NCS d{x.sizes()[0], x.sizes()[1], 1};
  for (int64_t i = 2; i < x.dim(); ++i) d.s *= x.sizes()[static_cast<size_t>(i)];
  return d;
}

void check_input(const char* name, const Tensor& x) {
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, name,
                ": the cuda kernel takes floating dtypes, got input ", describe(x));
  TESSERA_CHECK(x.dim() >= 2, ValueError, name,
                ": expected an input of at least 2 dims [N, C, ...], got ", describe(x));
}

void check_channel_vecs(const char* name, const Tensor& x, int64_t channels,
                        std::initializer_list<const Tensor*> vecs) {
  for (const Tensor* t : vecs) {
    TESSERA_CHECK(!t->defined() || (is_floating(t->dtype()) && t->numel() == channels),
                  ValueError, name, ": per-channel tensors must be floating with ", channels,
                  " elements, got ", describe(*t), " for input ", describe(x));
  }
}

// A per-channel input as contiguous doubles (undefined stays undefined).
Tensor channel_f64(const Tensor& t) {
  if (!t.defined()) return t;
  return t.to(DType::kF64).contiguous().reshape({-1});
}

const double* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<double>() : nullptr; }

// Row j of a [rows * C] double buffer.
double* row_ptr(const Tensor& buf, int64_t j, int64_t channels) {
  return buf.data<double>() + j * channels;
}

// A [C] double vector broadcast over x's [N, C, ...] sizes.
Tensor broadcast_channels(const Tensor& buf, int64_t j, int64_t channels, const Tensor& x) {
  Shape shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = channels;
  return buf.narrow(0, j * channels, channels).view(shape).expand(x.sizes());
}

// Copies row j of buf into a per-channel output (any floating dtype).
void store_channels(Tensor& target, const Tensor& buf, int64_t j, int64_t channels) {
  if (!target.defined() || target.numel() == 0) return;
  target.copy_(buf.narrow(0, j * channels, channels).view(target.sizes()));
}

// The sums of pass P for every channel into a[c] (and b[c] when b is
// given): partial sums per (channel, chunk), then the chunks in order.
template <typename T, Pass P>
void channel_sums(const KernelContext& ctx, const char* name, const NCS& d, const T* x,
                  const T* g, const double* sum_x, const double* mean, const double* invstd,
                  double* a, double* b) {
  const int64_t count = d.n * d.s;
  const int64_t wanted = std::clamp<int64_t>(kTargetBlocks / d.c, 1, kTargetBlocks);
  const int64_t chunk_len = std::max<int64_t>(kMinChunk, ceil_div(count, wanted));
  const int64_t chunks = std::max<int64_t>(1, ceil_div(count, chunk_len));
  Tensor scratch = empty({2 * d.c * chunks}, TensorOptions(DType::kF64, ctx.device));
  Sums* partial = reinterpret_cast<Sums*>(scratch.data<double>());
  cudaStream_t stream = stream_of(ctx);
  const dim3 grid(static_cast<unsigned>(d.c), static_cast<unsigned>(chunks));
  channel_partials_kernel<T, P><<<grid, kBlockSize, 0, stream>>>(
      x, g, sum_x, mean, invstd, d.c, d.s, count, chunk_len, chunks, partial);
  after_launch(ctx, name);
  channel_totals_kernel<<<grid_for(d.c), kBlockSize, 0, stream>>>(partial, d.c, chunks, a, b);
  after_launch(ctx, name);
}

void batch_norm_kernel(const KernelContext& ctx, Tensor& out, Tensor& save_mean,
                       Tensor& save_invstd, Tensor& running_mean, Tensor& running_var,
                       const Tensor& x, const Tensor& weight, const Tensor& bias, bool training,
                       double momentum, double eps) {
  const char* name = "batch_norm";
  check_input(name, x);
  TESSERA_CHECK(out.dtype() == x.dtype() && out.sizes() == x.sizes(), TypeError, name,
                ": the cuda kernel needs an output of the input's dtype and sizes, got ",
                describe(out), " for input ", describe(x));
  const NCS d = ncs_of(x);
  check_channel_vecs(name, x, d.c, {&weight, &bias, &running_mean, &running_var});
  if (training) check_channel_vecs(name, x, d.c, {&save_mean, &save_invstd});
  TESSERA_CHECK(training || (running_mean.defined() && running_var.defined()), ValueError, name,
                ": evaluation mode needs running_mean and running_var, got input ", describe(x));
  if (d.c == 0) return;
  const TensorOptions f64(DType::kF64, ctx.device);
  // Rows of chan: sum_x, sum_sq, mean, invstd, new running mean / var,
  // scale, shift.
  enum { kSumX, kSumSq, kMean, kInvstd, kNewMean, kNewVar, kScale, kShift, kRows };
  const Tensor chan = empty({kRows * d.c}, f64);
  const Tensor w = channel_f64(weight), b = channel_f64(bias);
  const Tensor rm = channel_f64(running_mean), rv = channel_f64(running_var);
  const double count = static_cast<double>(d.n * d.s);
  dispatch_float_dtype(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if (training) {
      const Tensor xd = x.contiguous();
      double* sum_x = row_ptr(chan, kSumX, d.c);
      channel_sums<T, Pass::kSum>(ctx, name, d, xd.data<T>(), nullptr, nullptr, nullptr, nullptr,
                                  sum_x, nullptr);
      channel_sums<T, Pass::kSquaredDev>(ctx, name, d, xd.data<T>(), nullptr, sum_x, nullptr,
                                         nullptr, row_ptr(chan, kSumSq, d.c), nullptr);
    }
    ForwardChannels p{};
    p.sum_x = row_ptr(chan, kSumX, d.c);
    p.sum_sq = row_ptr(chan, kSumSq, d.c);
    p.running_mean = ptr_or_null(rm);
    p.running_var = ptr_or_null(rv);
    p.weight = ptr_or_null(w);
    p.bias = ptr_or_null(b);
    p.mean = row_ptr(chan, kMean, d.c);
    p.invstd = row_ptr(chan, kInvstd, d.c);
    p.new_running_mean = running_mean.defined() ? row_ptr(chan, kNewMean, d.c) : nullptr;
    p.new_running_var = running_var.defined() ? row_ptr(chan, kNewVar, d.c) : nullptr;
    p.scale = row_ptr(chan, kScale, d.c);
    p.shift = row_ptr(chan, kShift, d.c);
    batch_norm_channels_kernel<<<grid_for(d.c), kBlockSize, 0, stream_of(ctx)>>>(
        p, d.c, training, count, momentum, eps);
    after_launch(ctx, name);
    elementwise<T, T, double, double>(ctx, name, out,
                                      {x, broadcast_channels(chan, kScale, d.c, x),
                                       broadcast_channels(chan, kShift, d.c, x)},
                                      Affine<C>{});
  });
  if (training) {
    store_channels(save_mean, chan, kMean, d.c);
    store_channels(save_invstd, chan, kInvstd, d.c);
    store_channels(running_mean, chan, kNewMean, d.c);
    store_channels(running_var, chan, kNewVar, d.c);
  }
}

void batch_norm_backward_kernel(const KernelContext& ctx, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& x, const Tensor& weight,
                                const Tensor& running_mean, const Tensor& running_var,
                                const Tensor& save_mean, const Tensor& save_invstd,
                                bool training, double eps) {
  const char* name = "batch_norm_backward";
  check_input(name, x);
  TESSERA_CHECK(grad_out.dtype() == x.dtype() && grad_out.sizes() == x.sizes(), TypeError, name,
                ": grad_out must have the input's dtype and sizes, got ", describe(grad_out),
                " for input ", describe(x));
  TESSERA_CHECK(!grad_input.defined() ||
                    (grad_input.dtype() == x.dtype() && grad_input.sizes() == x.sizes()),
                TypeError, name, ": grad_input must have the input's dtype and sizes, got ",
                describe(grad_input), " for input ", describe(x));
  const NCS d = ncs_of(x);
  check_channel_vecs(name, x, d.c, {&weight, &grad_weight, &grad_bias});
  if (training) check_channel_vecs(name, x, d.c, {&save_mean, &save_invstd});
  else check_channel_vecs(name, x, d.c, {&running_mean, &running_var});
  if (d.c == 0) return;
  const TensorOptions f64(DType::kF64, ctx.device);
  // Rows of chan: mean, invstd, sum_g, sum_gxh, k, mg, mgx.
  enum { kMean, kInvstd, kSumG, kSumGxh, kK, kMg, kMgx, kRows };
  const Tensor chan = empty({kRows * d.c}, f64);
  const Tensor w = channel_f64(weight);
  const Tensor mean_src = channel_f64(training ? save_mean : running_mean);
  const Tensor var_src = channel_f64(training ? save_invstd : running_var);
  cudaStream_t stream = stream_of(ctx);
  backward_stats_kernel<<<grid_for(d.c), kBlockSize, 0, stream>>>(
      ptr_or_null(mean_src), ptr_or_null(var_src), d.c, training, eps, row_ptr(chan, kMean, d.c),
      row_ptr(chan, kInvstd, d.c));
  after_launch(ctx, name);
  const bool want_gi = grad_input.defined() && grad_input.numel() > 0;
  const bool need_sums = grad_weight.defined() || grad_bias.defined() || (want_gi && training);
  const double count = static_cast<double>(d.n * d.s);
  dispatch_float_dtype(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if (need_sums) {
      const Tensor xd = x.contiguous(), gd = grad_out.contiguous();
      channel_sums<T, Pass::kGrad>(ctx, name, d, xd.data<T>(), gd.data<T>(), nullptr,
                                   row_ptr(chan, kMean, d.c), row_ptr(chan, kInvstd, d.c),
                                   row_ptr(chan, kSumG, d.c), row_ptr(chan, kSumGxh, d.c));
    }
    if (!want_gi) return;
    grad_input_coefs_kernel<<<grid_for(d.c), kBlockSize, 0, stream>>>(
        ptr_or_null(w), row_ptr(chan, kInvstd, d.c), row_ptr(chan, kSumG, d.c),
        row_ptr(chan, kSumGxh, d.c), d.c, training && need_sums, count, row_ptr(chan, kK, d.c),
        row_ptr(chan, kMg, d.c), row_ptr(chan, kMgx, d.c));
    after_launch(ctx, name);
    const Tensor k = broadcast_channels(chan, kK, d.c, x);
    if (training) {
      elementwise<T, T, T, double, double, double, double, double>(
          ctx, name, grad_input,
          {grad_out, x, k, broadcast_channels(chan, kMg, d.c, x),
           broadcast_channels(chan, kMean, d.c, x), broadcast_channels(chan, kInvstd, d.c, x),
           broadcast_channels(chan, kMgx, d.c, x)},
          GradInputTraining<C>{});
    } else {
      elementwise<T, T, double>(ctx, name, grad_input, {grad_out, k}, GradInputEval<C>{});
    }
  });
  store_channels(grad_weight, chan, kSumGxh, d.c);
  store_channels(grad_bias, chan, kSumG, d.c);
}

}  // namespace

void register_batch_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::BatchNorm>(type, &batch_norm_kernel);
  registry.register_kernel<kernels::BatchNormBackward>(type, &batch_norm_backward_kernel);
}

}  // namespace tessera::cuda
