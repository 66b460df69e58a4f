// embedding and nll_loss with their backward: front ends over the
// Embedding / EmbeddingDenseBackward / NllLoss / NllLossBackward kernels.
// Index values are checked by the kernels (they live on the device).
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

void check_indices(const char* op, const Tensor& indices) {
  TESSERA_CHECK(indices.dtype() == DType::kI64 || indices.dtype() == DType::kI32, TypeError, op,
                ": expected indices of dtype int64 or int32, got ", describe(indices));
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  const char* op = "embedding";
  (void)padding_idx;  // only the backward skips padding_idx
  nn_detail::check_same_device(op, weight, indices);
  TESSERA_CHECK(weight.dim() == 2, ValueError, op, ": 'weight' must be 2-D, got ", describe(weight));
  check_indices(op, indices);
  Shape out_sizes = indices.sizes();
  out_sizes.push_back(weight.size(1));
  Tensor out = empty({indices.numel(), weight.size(1)}, TensorOptions(weight.dtype(), weight.device()));
  if (indices.numel() > 0) {
    call_kernel<kernels::Embedding>(weight.device(), out, weight, indices);
  }
  return out.view(out_sizes);
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx) {
  const char* op = "embedding_dense_backward";
  nn_detail::check_same_device(op, grad_output, indices);
  check_indices(op, indices);
  TESSERA_CHECK(is_floating(grad_output.dtype()), TypeError, op,
                ": expected a floating grad_output, got ", describe(grad_output));
  TESSERA_CHECK(num_weights >= 0, ValueError, op, ": num_weights must be non-negative, got ",
                num_weights);
  TESSERA_CHECK(grad_output.dim() == indices.dim() + 1 &&
                    Shape(grad_output.sizes().begin(), grad_output.sizes().end() - 1) ==
                        indices.sizes(),
                ValueError, op, ": grad_output ", shape_to_string(grad_output.sizes()),
                " does not match indices ", shape_to_string(indices.sizes()));
  const int64_t d = grad_output.size(-1);
  Tensor grad_weight = empty({num_weights, d}, TensorOptions(grad_output.dtype(), grad_output.device()));
  if (grad_weight.numel() == 0) return grad_weight;
  if (indices.numel() == 0) return grad_weight.zero_();
  call_kernel<kernels::EmbeddingDenseBackward>(grad_output.device(), grad_weight,
                                               grad_output.reshape({indices.numel(), d}),
                                               indices, padding_idx);
  return grad_weight;
}

namespace {

kernels::Reduction parse_reduction(const char* op, std::string_view reduction) {
  if (reduction == "none") return kernels::Reduction::kNone;
  if (reduction == "mean") return kernels::Reduction::kMean;
  if (reduction == "sum") return kernels::Reduction::kSum;
  TESSERA_CHECK(false, ValueError, op, ": ", reduction, " is not a valid value for reduction");
  return kernels::Reduction::kNone;
}

// input viewed as [N, C, S], target as [N, S], after the checks.
struct NllViews {
  Tensor input, target;
  Shape loss_sizes;  // the shape of the unreduced loss
};

NllViews check_nll(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight) {
  nn_detail::check_same_device(op, input, target);
  TESSERA_CHECK(is_floating(input.dtype()), TypeError, op,
                ": expected a floating input, got ", describe(input));
  TESSERA_CHECK(target.dtype() == DType::kI64, TypeError, op,
                ": expected target of dtype int64, got ", describe(target));
  TESSERA_CHECK(input.dim() >= 1, ValueError, op, ": input must be at least 1-D, got ",
                describe(input));
  NllViews v;
  if (input.dim() == 1) {
    TESSERA_CHECK(target.dim() == 0, ValueError, op, ": expected a 0-D target for a 1-D input ",
                  shape_to_string(input.sizes()), ", got target ", shape_to_string(target.sizes()));
    v.input = input.view({1, input.size(0), 1});
    v.target = target.view({1, 1});
  } else {
    TESSERA_CHECK(target.dim() == input.dim() - 1, ValueError, op, ": expected target of ",
                  input.dim() - 1, "-D for input ", shape_to_string(input.sizes()), ", got ",
                  shape_to_string(target.sizes()));
    TESSERA_CHECK(input.size(0) == target.size(0), ValueError, op, ": expected input batch_size (",
                  input.size(0), ") to match target batch_size (", target.size(0), ")");
    Shape spatial_in(input.sizes().begin() + 2, input.sizes().end());
    Shape spatial_t(target.sizes().begin() + 1, target.sizes().end());
    TESSERA_CHECK(spatial_in == spatial_t, ValueError, op, ": input ",
                  shape_to_string(input.sizes()), " and target ", shape_to_string(target.sizes()),
                  " do not match");
    int64_t s = 1;  // explicit, as -1 cannot be inferred for zero-size inputs
    for (int64_t x : spatial_in) s *= x;
    v.input = input.reshape({input.size(0), input.size(1), s});
    v.target = target.reshape({target.size(0), s});
  }
  v.loss_sizes = target.sizes();
  const int64_t classes = input.dim() == 1 ? input.size(0) : input.size(1);
  if (weight.defined()) {
    nn_detail::check_same_device(op, input, weight);
    TESSERA_CHECK(weight.dtype() == input.dtype(), TypeError, op,
                  ": weight and input must have the same dtype, got ", describe(weight), " and ",
                  describe(input));
    TESSERA_CHECK(weight.dim() == 1 && weight.size(0) == classes, ValueError, op,
                  ": weight tensor should be defined either for all ", classes,
                  " classes or no classes but got weight tensor of shape: ",
                  shape_to_string(weight.sizes()));
  }
  return v;
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& input, const Tensor& target,
                                            const Tensor& weight, std::string_view reduction,
                                            int64_t ignore_index) {
  const char* op = "nll_loss";
  const kernels::Reduction r = parse_reduction(op, reduction);
  NllViews v = check_nll(op, input, target, weight);
  TensorOptions opts(input.dtype(), input.device());
  Tensor out = r == kernels::Reduction::kNone ? empty(v.target.sizes(), opts) : empty({}, opts);
  Tensor total_weight = empty({}, opts);
  call_kernel<kernels::NllLoss>(input.device(), out, total_weight, v.input, v.target, weight, r,
                                ignore_index);
  if (r == kernels::Reduction::kNone) out = out.view(v.loss_sizes);
  return {out, total_weight};
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                std::string_view reduction, int64_t ignore_index) {
  return std::get<0>(nll_loss_forward(input, target, weight, reduction, ignore_index));
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                         const Tensor& weight, std::string_view reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  const char* op = "nll_loss_backward";
  const kernels::Reduction r = parse_reduction(op, reduction);
  NllViews v = check_nll(op, input, target, weight);
  nn_detail::check_same_device(op, input, grad_output);
  nn_detail::check_same_device(op, input, total_weight);
  TESSERA_CHECK(grad_output.dtype() == input.dtype() && total_weight.dtype() == input.dtype(),
                TypeError, op, ": grad_output and total_weight must have input's dtype, got ",
                describe(grad_output), ", ", describe(total_weight), " and ", describe(input));
  TESSERA_CHECK(total_weight.numel() == 1, ValueError, op,
                ": expected total_weight to be a single element tensor, got ",
                describe(total_weight));
  if (r == kernels::Reduction::kNone) {
    TESSERA_CHECK(grad_output.sizes() == v.loss_sizes, ValueError, op,
                  ": expected grad_output of size ", shape_to_string(v.loss_sizes), ", got ",
                  shape_to_string(grad_output.sizes()));
  } else {
    TESSERA_CHECK(grad_output.numel() == 1, ValueError, op,
                  ": expected a single element grad_output, got ", describe(grad_output));
  }
  Tensor grad_input = empty(v.input.sizes(), TensorOptions(input.dtype(), input.device()));
  if (grad_input.numel() > 0) {
    Tensor g = r == kernels::Reduction::kNone ? grad_output.reshape(v.target.sizes())
                                              : grad_output.reshape({});
    call_kernel<kernels::NllLossBackward>(input.device(), grad_input, g, v.target, weight, r,
                                          ignore_index, total_weight.reshape({}));
  }
  return grad_input.view(input.sizes());
}

}  // namespace tessera
