// Kernel signatures: conv2d, pooling, embedding, nll_loss, fused
// attention and their backward. See kernel_signatures.h for the
// conventions. The linear algebra ops (addmm, baddbmm, dot, mv, outer,
// linear) are composites over Bmm and pointwise ops, so they need no
// kernel of their own; fused attention's kernels are optional (a device
// without them runs attention_blocked's composite over Bmm and softmax).
#pragma once

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/random/philox.h"

namespace tessera::kernels {

// out [N, Cout, Ho, Wo] = conv2d(input [N, Cin, H, W], weight
// [Cout, Cin/groups, kh, kw]) + bias [Cout] (bias may be undefined). One
// floating dtype for all; stride, padding, dilation have 2 entries; out's
// sizes were computed by the front end. Inputs may have any strides.
struct Conv2d {
  static constexpr const char* name = "conv2d";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& input, const Tensor& weight,
                      const Tensor& bias, const Shape& stride, const Shape& padding,
                      const Shape& dilation, int64_t groups);
};

// The gradients of Conv2d given grad_out [N, Cout, Ho, Wo]. Each output
// that is undefined is not wanted; the defined ones have the sizes of
// input, weight and [Cout] and are fully written (not accumulated into).
struct Conv2dBackward {
  static constexpr const char* name = "conv2d_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_input, Tensor& grad_weight,
                      Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                      const Tensor& weight, const Shape& stride, const Shape& padding,
                      const Shape& dilation, int64_t groups);
};

// out [N, C, Ho, Wo] = max over each window of input [N, C, H, W];
// indices (int64, same sizes) = the flat position h * W + w of the max in
// its plane (the first one; NaN wins). Windows are clipped to the input
// (padding counts as -inf). kernel, stride, padding, dilation: 2 entries.
struct MaxPool2d {
  static constexpr const char* name = "max_pool2d_with_indices";
  using Fn = void (*)(const KernelContext&, Tensor& out, Tensor& indices, const Tensor& input,
                      const Shape& kernel, const Shape& stride, const Shape& padding,
                      const Shape& dilation);
};

// grad_input [N, C, H, W] = 0, then += grad_out at each index's position.
struct MaxPool2dBackward {
  static constexpr const char* name = "max_pool2d_with_indices_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                      const Tensor& indices);
};

// out [N, C, Ho, Wo] = mean over each window of input [N, C, H, W]. The
// divisor is divisor_override when it is nonzero, else the window's size
// clipped to input + padding (count_include_pad) or to the input alone.
struct AvgPool2d {
  static constexpr const char* name = "avg_pool2d";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& input, const Shape& kernel,
                      const Shape& stride, const Shape& padding, bool count_include_pad,
                      int64_t divisor_override);
};

// grad_input [N, C, H, W]: each grad_out element spread over its window
// with the forward's divisor. grad_input is fully written.
struct AvgPool2dBackward {
  static constexpr const char* name = "avg_pool2d_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                      const Shape& kernel, const Shape& stride, const Shape& padding,
                      bool count_include_pad, int64_t divisor_override);
};

// out [n, D] = weight [V, D] rows picked by indices (int32 or int64, n
// elements, any shape; read in row-major order). An index outside [0, V)
// raises IndexError.
struct Embedding {
  static constexpr const char* name = "embedding";
  using Fn = void (*)(const KernelContext&, Tensor& out, const Tensor& weight,
                      const Tensor& indices);
};

// grad_weight [V, D] = 0, then row indices[i] += grad [n, D] row i, except
// where indices[i] == padding_idx (padding_idx < 0: none).
struct EmbeddingDenseBackward {
  static constexpr const char* name = "embedding_dense_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_weight, const Tensor& grad,
                      const Tensor& indices, int64_t padding_idx);
};

enum class Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

// Negative log likelihood on input [N, C, S] (log-probabilities) and
// target [N, S] (int64): loss[n, s] = -weight[t] * input[n, t, s] with
// t = target[n, s], 0 where t == ignore_index. reduction kNone: out is
// [N, S]; kSum: out (0-d) = sum; kMean: sum / total weight. total_weight
// (0-d) = sum of weight[t] over non-ignored targets. weight may be
// undefined (all ones). A target outside [0, C) raises IndexError.
struct NllLoss {
  static constexpr const char* name = "nll_loss";
  using Fn = void (*)(const KernelContext&, Tensor& out, Tensor& total_weight, const Tensor& input,
                      const Tensor& target, const Tensor& weight, Reduction reduction,
                      int64_t ignore_index);
};

// grad_input [N, C, S] of NllLoss: fully written (zeros off the targets).
// grad_out is [N, S] for kNone, else 0-d.
struct NllLossBackward {
  static constexpr const char* name = "nll_loss_backward";
  using Fn = void (*)(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                      const Tensor& target, const Tensor& weight, Reduction reduction,
                      int64_t ignore_index, const Tensor& total_weight);
};

// Fused attention, float32 only: out [B, H, L, Ev] = softmax(scale *
// query key^T + bias) value for query [B, H, L, E], key [B, Hk, S, E] and
// value [B, Hk, S, Ev], L and S nonzero; query head h reads key/value
// head h / (H / Hk) (grouped-query attention). query, key, value and out
// are "row-strided": each row of the last dim contiguous (stride 1), the
// row stride (dim 2, where its size exceeds 1) at least the row's length,
// batch and head strides free; a model's transposed view of a [B, L, H,
// E] projection is one, and the front end gives out the query's layout.
// A kernel that needs contiguous tensors makes its own copies. bias is
// undefined or an additive [B, H, L, S] of any strides (0 where it
// broadcasts). With is_causal, query i attends keys j <= i only. lse
// [B, H, L] (contiguous) = each row's logsumexp of its scores, +inf for a
// row that attends no key (every score -inf; its out row is 0); a row
// with a NaN score gives NaN in out and lse. out and lse are fully
// written. Returns false, having written nothing, to decline inputs the
// device runs better (or only) through the front end's composite.
struct AttentionForward {
  static constexpr const char* name = "attention_forward";
  static constexpr bool optional = true;  // composite in the front end
  using Fn = bool (*)(const KernelContext&, Tensor& out, Tensor& lse, const Tensor& query,
                      const Tensor& key, const Tensor& value, const Tensor& bias,
                      bool is_causal, double scale);
};

// The gradients of AttentionForward given grad_out [B, H, L, Ev] and the
// forward's out and lse: grad_query [B, H, L, E], and grad_key [B, H, S,
// E] and grad_value [B, H, S, Ev] per query head (the front end sums each
// key/value head's group). lse contiguous, every other tensor row-strided
// (as AttentionForward); all outputs fully written. The bias's own gradient is not computed here. Returns false,
// having written nothing, to decline (as AttentionForward).
struct AttentionBackward {
  static constexpr const char* name = "attention_backward";
  static constexpr bool optional = true;  // composite in the front end
  using Fn = bool (*)(const KernelContext&, Tensor& grad_query, Tensor& grad_key,
                      Tensor& grad_value, const Tensor& grad_out, const Tensor& query,
                      const Tensor& key, const Tensor& value, const Tensor& bias,
                      const Tensor& out, const Tensor& lse, bool is_causal, double scale);
};

}  // namespace tessera::kernels
