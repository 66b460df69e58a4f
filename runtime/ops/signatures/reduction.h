// Kernel signatures: reductions, scans (cumsum, cumprod), softmax, log_softmax, layer_norm, rms_norm, batch_norm and their backward. See kernel_signatures.h for the conventions.
//
// Common to the reductions here: `out` is in keepdim layout (in's rank,
// size 1 in every reduced dim), `dims` are sorted, unique and non-empty
// unless in is 0-d, and the front end has already rejected empty
// reductions that have no identity.
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/random/philox.h"

namespace tessera::kernels {

enum class ReduceExtOp : uint8_t {
  kProd,       // product; identity 1
  kAmax,       // maximum, NaN propagates
  kAmin,       // minimum, NaN propagates
  kAll,        // out is bool (or u8 for u8 in): every element non-zero
  kAny,        // some element non-zero
  kNorm1,      // sum |x|
  kNorm2,      // sqrt(sum x^2)
  kNormInf,    // max |x|
  kLogSumExp,  // log(sum exp(x)), stable (shifted by the max)
};

// out = op over the reduced dims of in. in and out have one dtype except for
// kAll/kAny (out bool or u8) and kProd (out int64 for integral in).
// Accumulates in double for f64, float for the other floats, int64 for ints.
struct ReduceExt {
  static constexpr const char* name = "reduce_ext";
  using Fn = void (*)(const KernelContext&, ReduceExtOp op, Tensor& out, const Tensor& in,
                      const Shape& dims);
};

// values / indices (int64) = max or min of in over dim, keepdim layout; the
// first index of the extreme wins, and the first NaN wins over everything.
// `values` may be undefined (argmax / argmin). in's dim is non-empty.
struct ArgReduce {
  static constexpr const char* name = "arg_reduce";
  using Fn = void (*)(const KernelContext&, bool is_max, Tensor& values, Tensor& indices,
                      const Tensor& in, int64_t dim);
};

// out = var (or std when take_sqrt) of floating in over dims, with
// divisor max(N - correction, 0); one dtype.
struct VarStd {
  static constexpr const char* name = "var_std";
  using Fn = void (*)(const KernelContext&, bool take_sqrt, Tensor& out, const Tensor& in,
                      const Shape& dims, double correction);
};

enum class ScanOp : uint8_t { kSum, kProd };

// out = inclusive scan of in along dim; same sizes and dtype.
struct Scan {
  static constexpr const char* name = "scan";
  using Fn = void (*)(const KernelContext&, ScanOp op, Tensor& out, const Tensor& in,
                      int64_t dim);
};

// out = softmax (or log_softmax when log) of floating in along dim; same
// sizes, one floating dtype.
struct Softmax {
  static constexpr const char* name = "softmax";
  using Fn = void (*)(const KernelContext&, bool log, Tensor& out, const Tensor& in,
                      int64_t dim);
};

// grad_in from grad_out and the forward's output along dim:
//   softmax:     grad_in = y * (g - sum(g * y))
//   log_softmax: grad_in = g - exp(y) * sum(g)
struct SoftmaxBackward {
  static constexpr const char* name = "softmax_backward";
  using Fn = void (*)(const KernelContext&, bool log, Tensor& grad_in, const Tensor& grad_out,
                      const Tensor& output, int64_t dim);
};

// Layer norm over the last `norm_dims` dims of x, viewed as [M, N]:
//   out = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps)
// weight and bias are undefined or hold N elements (contiguous); mean and
// rstd hold M elements (x's leading sizes with 1s). When rms, mean is
// undefined and out = x * rstd * weight with rstd = 1 / sqrt(mean(x^2) + eps).
struct LayerNorm {
  static constexpr const char* name = "layer_norm";
  using Fn = void (*)(const KernelContext&, bool rms, Tensor& out, Tensor& mean, Tensor& rstd,
                      const Tensor& x, const Tensor& weight, const Tensor& bias,
                      int64_t norm_dims, double eps);
};

// Backward of LayerNorm (rms: mean undefined, bias unused). Each output
// may be undefined (not asked for). grad_weight and grad_bias hold N.
struct LayerNormBackward {
  static constexpr const char* name = "layer_norm_backward";
  using Fn = void (*)(const KernelContext&, bool rms, Tensor& grad_input, Tensor& grad_weight,
                      Tensor& grad_bias, const Tensor& grad_out, const Tensor& x,
                      const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                      int64_t norm_dims);
};

// Batch norm over dim 1 (channels C) of x [N, C, ...]. training: uses the
// batch statistics, writes save_mean / save_invstd (C, f32 or f64) and, when
// defined, updates running_mean / running_var in place with momentum (the
// running var uses the unbiased variance). Eval: uses the running stats and
// leaves save_mean / save_invstd alone. weight / bias may be undefined.
struct BatchNorm {
  static constexpr const char* name = "batch_norm";
  using Fn = void (*)(const KernelContext&, Tensor& out, Tensor& save_mean, Tensor& save_invstd,
                      Tensor& running_mean, Tensor& running_var, const Tensor& x,
                      const Tensor& weight, const Tensor& bias, bool training, double momentum,
                      double eps);
};

// Backward of BatchNorm. training: save_mean / save_invstd are used;
// otherwise running_mean / running_var with eps. Outputs may be undefined.
struct BatchNormBackward {
  static constexpr const char* name = "batch_norm_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_input, Tensor& grad_weight,
                      Tensor& grad_bias, const Tensor& grad_out, const Tensor& x,
                      const Tensor& weight, const Tensor& running_mean,
                      const Tensor& running_var, const Tensor& save_mean,
                      const Tensor& save_invstd, bool training, double eps);
};

}  // namespace tessera::kernels
