// Op front ends: linear algebra beyond mm/bmm/matmul, conv2d, pooling, embedding, nll_loss, scaled_dot_product_attention and their backward.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"

namespace tessera {

// -- Linear algebra (composites over the Bmm kernel). One dtype for all
// operands (as PyTorch's CPU), bool rejected.
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b);
// beta * self + alpha * (a @ b); self broadcasts to [M, N]; with beta == 0
// self's values are ignored (NaN included).
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
Tensor& addmm_(Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = 1,
                  Scalar alpha = 1);
// beta * self + alpha * bmm(a, b); self broadcasts to [B, M, N].
Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
Tensor& baddbmm_(Tensor& self, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);
Tensor& baddbmm_out(Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b,
                    Scalar beta = 1, Scalar alpha = 1);
Tensor dot(const Tensor& a, const Tensor& b);  // 1-D . 1-D -> 0-d
Tensor& dot_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& v);  // [M, K] @ [K] -> [M]
Tensor& mv_out(Tensor& out, const Tensor& a, const Tensor& v);
Tensor outer(const Tensor& a, const Tensor& b);  // [M] x [N] -> [M, N], types promote
Tensor& outer_out(Tensor& out, const Tensor& a, const Tensor& b);
// input [..., in] @ weight [out, in]^T + bias [out]; weight may be 1-D.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
// torch.linalg.cross: a x b along dim, where both have size 3; a and b of
// one dtype (not bool) and rank, the other dims broadcast.
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
Tensor& linalg_cross_out(Tensor& out, const Tensor& a, const Tensor& b, int64_t dim = -1);
// torch.cdist: the p-norm distances between the rows of x1 [..., R1, M] and
// x2 [..., R2, M] -> [..., R1, R2], batch dims broadcast; float32 or
// float64 (as PyTorch); p >= 0, infinity for the max norm.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
// The gradient with respect to x1 (aten::_cdist_backward), with the batch
// dims broadcast; dist is cdist's result, grad its gradient.
Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist);

// -- Convolution. input [N, Cin, H, W] or [Cin, H, W]; weight
// [Cout, Cin/groups, kh, kw]; bias [Cout] or undefined. Floating dtypes.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              const Shape& stride = {1, 1}, const Shape& padding = {0, 0},
              const Shape& dilation = {1, 1}, int64_t groups = 1);
// torch.ops.aten.convolution_backward for 2-D convolutions:
// (grad_input, grad_weight, grad_bias); an entry of output_mask that is
// false leaves that result undefined.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, const Shape& stride,
    const Shape& padding, const Shape& dilation, int64_t groups,
    std::array<bool, 3> output_mask = {true, true, true});
// 3-D convolution: input [N, Cin, D, H, W] or [Cin, D, H, W]; weight
// [Cout, Cin/groups, kd, kh, kw]; single-entry Shapes apply to all dims.
// Composed of conv2d (see nn_conv3d.cc), so every device runs it.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              const Shape& stride = {1}, const Shape& padding = {0},
              const Shape& dilation = {1}, int64_t groups = 1);
// (grad_input, grad_weight, grad_bias) of conv3d for a 5-D input.
std::tuple<Tensor, Tensor, Tensor> conv3d_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, const Shape& stride,
    const Shape& padding, const Shape& dilation, int64_t groups,
    std::array<bool, 3> output_mask = {true, true, true});

// -- Pooling. input [N, C, H, W] or [C, H, W]; stride {} means kernel.
// A single-entry Shape applies to both dims.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride = {},
                                                   const Shape& padding = {0},
                                                   const Shape& dilation = {1},
                                                   bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, const Shape& dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& input,
                                        const Tensor& indices);
Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& input,
                           const Shape& kernel_size, const Shape& stride = {},
                           const Shape& padding = {0}, bool ceil_mode = false,
                           bool count_include_pad = true,
                           std::optional<int64_t> divisor_override = std::nullopt);

// 3-D pooling: input [N, C, D, H, W] or [C, D, H, W]; single-entry Shapes
// apply to all three dims; indices are positions in the flattened
// (D, H, W) volume, as PyTorch's. Composed of the 2-D ops (nn_pool3d.cc).
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride = {},
                                                   const Shape& padding = {0},
                                                   const Shape& dilation = {1},
                                                   bool ceil_mode = false);
Tensor max_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, const Shape& dilation = {1}, bool ceil_mode = false);
Tensor max_pool3d_with_indices_backward(const Tensor& grad_output, const Tensor& input,
                                        const Tensor& indices);
// Floating inputs only (16-bit floats average in float32).
Tensor avg_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d_backward(const Tensor& grad_output, const Tensor& input,
                           const Shape& kernel_size, const Shape& stride = {},
                           const Shape& padding = {0}, bool ceil_mode = false,
                           bool count_include_pad = true,
                           std::optional<int64_t> divisor_override = std::nullopt);

// input [N, C, H, W] or [C, H, W] (floating) averaged over adaptive windows
// into output_size [OH, OW] (one entry: both): output row i covers rows
// [floor(i H / OH), ceil((i + 1) H / OH)), likewise for columns, so any
// output size works, windows overlapping where OH does not divide H.
Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size);
// The gradient with respect to input; grad_output [..., OH, OW].
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& input);
// The same over (D, H, W): input [N, C, D, H, W] or [C, D, H, W].
Tensor adaptive_avg_pool3d(const Tensor& input, const Shape& output_size);
Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Tensor& input);
// The maximum over the same adaptive windows, with the index of the first
// maximum in the flattened spatial volume (PyTorch's indices); the
// backward adds each gradient at its index.
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, const Shape& output_size);
Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& input,
                                    const Tensor& indices);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, const Shape& output_size);
Tensor adaptive_max_pool3d_backward(const Tensor& grad_output, const Tensor& input,
                                    const Tensor& indices);

// torch.nn.functional.unfold: the sliding kernel_size blocks of input [N,
// C, H, W] or [C, H, W] (any dtype) as columns [N, C*kh*kw, L]; fold is its
// adjoint, adding the columns [N, C*kh*kw, L] back into [N, C, H, W] for
// output_size [H, W] (so it is unfold's backward). Single-entry Shapes
// apply to both dims.
Tensor im2col(const Tensor& input, const Shape& kernel_size, const Shape& dilation = {1},
              const Shape& padding = {0}, const Shape& stride = {1});
Tensor col2im(const Tensor& columns, const Shape& output_size, const Shape& kernel_size,
              const Shape& dilation = {1}, const Shape& padding = {0}, const Shape& stride = {1});
// The backward of Tensor.unfold(dim, size, step) (windows of `size`
// elements every `step` along dim): grad [..., windows, ..., size] summed
// back into a tensor of input_sizes.
Tensor unfold_backward(const Tensor& grad, const Shape& input_sizes, int64_t dim, int64_t size,
                       int64_t step);

// Upsampling of input [N, C, H, W] to output_size [OH, OW], as PyTorch's
// kernels: nearest reads row floor(i * scale) (scale = 1 / scale_h when
// given, else H / OH); bilinear interpolates the two nearest rows and
// columns (align_corners maps the corner pixels onto each other). The
// backward forms take the forward's input_size [N, C, H, W].
Tensor upsample_nearest2d(const Tensor& input, const Shape& output_size,
                          std::optional<double> scale_h = std::nullopt,
                          std::optional<double> scale_w = std::nullopt);
Tensor upsample_nearest2d_backward(const Tensor& grad_output, const Shape& output_size,
                                   const Shape& input_size,
                                   std::optional<double> scale_h = std::nullopt,
                                   std::optional<double> scale_w = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& input, const Shape& output_size, bool align_corners,
                           std::optional<double> scale_h = std::nullopt,
                           std::optional<double> scale_w = std::nullopt);
Tensor upsample_bilinear2d_backward(const Tensor& grad_output, const Shape& output_size,
                                    const Shape& input_size, bool align_corners,
                                    std::optional<double> scale_h = std::nullopt,
                                    std::optional<double> scale_w = std::nullopt);

// Every mode of torch.nn.functional.interpolate but antialias, over 1, 2
// or 3 spatial dims (the size of output_size): input [N, C, spatial...]
// resized one dim at a time. kNearest reads source floor(i * s) (PyTorch's
// "nearest"), kNearestExact floor((i + 0.5) * s), kLinear interpolates the
// two nearest sources (linear, bilinear, trilinear), kCubic four with
// A = -0.75 cubic convolution, clamped to the border (bicubic). scales:
// none or one per spatial dim (s = 1 / scale when given and positive, else
// in / out); align_corners, for kLinear and kCubic only, maps the corner
// pixels onto each other. kLinear and kCubic take floating input and
// compute in float32 (float64 for float64), as PyTorch's CPU kernels;
// errors name the aten op (upsample_trilinear3d, _upsample_nearest_exact1d,
// ...). The backward takes the forward's input_size [N, C, spatial...].
enum class Interpolation { kNearest, kNearestExact, kLinear, kCubic };
Tensor upsample(const Tensor& input, const Shape& output_size, Interpolation mode,
                bool align_corners = false, const std::vector<std::optional<double>>& scales = {});
Tensor upsample_backward(const Tensor& grad_output, const Shape& output_size,
                         const Shape& input_size, Interpolation mode, bool align_corners = false,
                         const std::vector<std::optional<double>>& scales = {});

// -- Embedding. weight [V, D]; indices int32/int64 of any shape -> [..., D].
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx = -1);

// -- EmbeddingBag (torch.embedding_bag; aten's _embedding_bag and its
// backward). weight [V, D] floating; indices 1-D with offsets 1-D (bag b is
// indices[offsets[b] : offsets[b + 1]], the last bag running to the end, or
// to offsets' last entry with include_last_offset), or 2-D [B, L] with no
// offsets (one bag per row); indices and offsets int32/int64. Indices equal
// to padding_idx (negative: counted from V's end) are left out of every bag.
// Empty bags give zeros. kMax keeps a bag's first NaN only when it is the
// bag's first row, and ties go to the first row, as PyTorch's kernels do.
enum class EmbeddingBagMode { kSum = 0, kMean = 1, kMax = 2 };
struct EmbeddingBagResult {
  Tensor output;       // [B, D], weight's dtype
  Tensor offset2bag;   // [n]: the bag of each index
  Tensor bag_size;     // [B]: the indices each bag reduced (zeros in kSum)
  Tensor max_indices;  // kMax: [B, D] the weight row of each max; else bag_size
};
// per_sample_weights (1-D, one per index, weight's dtype; kSum only) scale
// the rows before they are summed. float16/bfloat16 sum in float.
EmbeddingBagResult embedding_bag(const Tensor& weight, const Tensor& indices,
                                 const Tensor& offsets, EmbeddingBagMode mode,
                                 const Tensor& per_sample_weights = {},
                                 bool include_last_offset = false,
                                 std::optional<int64_t> padding_idx = std::nullopt);
// The gradient of weight, [num_weights, D], from grad [B, D] and the
// forward's indices (1-D) and results. scale_grad_by_freq divides each
// row's gradient by how often its index occurs in indices.
Tensor embedding_bag_dense_backward(const Tensor& grad, const Tensor& indices,
                                    const Tensor& offset2bag, const Tensor& bag_size,
                                    const Tensor& max_indices, int64_t num_weights,
                                    bool scale_grad_by_freq, EmbeddingBagMode mode,
                                    const Tensor& per_sample_weights = {},
                                    std::optional<int64_t> padding_idx = std::nullopt);
// The gradient of per_sample_weights (kSum): grad[offset2bag[i]] . weight[indices[i]].
Tensor embedding_bag_per_sample_weights_backward(const Tensor& grad, const Tensor& weight,
                                                 const Tensor& indices, const Tensor& offset2bag,
                                                 EmbeddingBagMode mode,
                                                 std::optional<int64_t> padding_idx = std::nullopt);

// -- Losses. reduction: "none", "mean" or "sum". input [N, C, d...], [N, C]
// or [C]; target int64 [N, d...], [N] or 0-d.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                std::string_view reduction = "mean", int64_t ignore_index = -100);
// (loss, total_weight) as torch.ops.aten.nll_loss_forward.
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& input, const Tensor& target,
                                            const Tensor& weight, std::string_view reduction,
                                            int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                         const Tensor& weight, std::string_view reduction, int64_t ignore_index,
                         const Tensor& total_weight);

// binary_cross_entropy_with_logits: input (logits) and target of one shape,
// floating; weight and pos_weight (the positive class's weight, usually
// [C] for the last dim) broadcast to it. Stable for every logit (through
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))); the result has the
// operands' promoted dtype (16-bit floats compute in float32).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        std::string_view reduction = "mean");
// The gradient with respect to input; grad_output has the input's shape
// (reduction "none") or one element.
Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad_output, const Tensor& input,
                                                 const Tensor& target, const Tensor& weight,
                                                 const Tensor& pos_weight,
                                                 std::string_view reduction);

// -- Attention (math path). query [..., L, E], key [..., S, E], value
// [..., S, Ev]; attn_mask bool (true = attend) or additive, broadcast to
// [..., L, S]; dropout_p applied with the dropout op.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// -- Attention over blocks of queries (nn_attention_blocked.cc): the same
// softmax(q k^T * scale + bias) v without the [L, S] score matrix (memory
// grows with the sequence). query [B, H, L, E], key [B, Hk, S, E], value
// [B, Hk, S, Ev] with Hk dividing H (grouped-query attention); attn_bias
// additive, of query's dtype, broadcast to [B, H, L, S], or undefined;
// is_causal lets query i attend keys j <= i. Returns the output and each
// row's logsumexp [B, H, L] (in the compute dtype: float32 for 16-bit
// inputs, else the input's; +inf for a row with no key to attend, whose
// output is zeros), which the backward takes in any floating dtype.
std::tuple<Tensor, Tensor> attention_blocked(const Tensor& query, const Tensor& key,
                                             const Tensor& value, const Tensor& attn_bias = {},
                                             bool is_causal = false,
                                             std::optional<double> scale = std::nullopt);
// (grad_query, grad_key, grad_value, grad_attn_bias); an entry of
// output_mask that is false leaves that gradient undefined.
std::tuple<Tensor, Tensor, Tensor, Tensor> attention_blocked_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& attn_bias, const Tensor& out, const Tensor& logsumexp, bool is_causal,
    std::optional<double> scale, std::array<bool, 4> output_mask = {true, true, true, true});

}  // namespace tessera
