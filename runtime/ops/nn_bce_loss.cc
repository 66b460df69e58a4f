// binary_cross_entropy_with_logits and its backward: composites over the
// pointwise ops and reductions, so every device runs them natively.
//
// With w_p = 1 + (pos_weight - 1) t, the loss of logit x and target t is
//   (1 - t) x - w_p log(sigmoid(x)),
//   log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)),
// which overflows for no x (PyTorch's formulation), times weight, then
// reduced. Its gradient is w_p sigmoid(x) - pos_weight t (sigmoid(x) - t
// without pos_weight). 16-bit floats compute in float32 and round once, so
// the chain of ops does not accumulate 16-bit roundings.
#include <string_view>

#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

constexpr const char* kOp = "binary_cross_entropy_with_logits";

enum class Reduction { kNone, kMean, kSum };

Reduction parse_reduction(const char* op, std::string_view reduction) {
  if (reduction == "none") return Reduction::kNone;
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  throw ValueError(detail::concat(op, ": ", reduction, " is not a valid value for reduction"));
}

// A floating tensor that broadcasts to the input's shape, on its device.
void check_factor(const char* op, const char* name, const Tensor& factor, const Tensor& input) {
  if (!factor.defined()) return;
  nn_detail::check_same_device(op, input, factor);
  TESSERA_CHECK(is_floating(factor.dtype()), TypeError, op, ": expected a floating '", name,
                "', got ", describe(factor));
  TESSERA_CHECK(nn_detail::broadcasts_to(factor.sizes(), input.sizes()), ValueError, op, ": '",
                name, "' of shape ", shape_to_string(factor.sizes()),
                " does not broadcast to the input's shape ", shape_to_string(input.sizes()));
}

void check_arguments(const char* op, const Tensor& input, const Tensor& target,
                     const Tensor& weight, const Tensor& pos_weight) {
  TESSERA_CHECK(input.defined() && target.defined(), ValueError, op,
                ": undefined input or target");
  nn_detail::check_same_device(op, input, target);
  TESSERA_CHECK(is_floating(input.dtype()) && is_floating(target.dtype()), TypeError, op,
                ": expected floating input and target, got ", describe(input), " and ",
                describe(target));
  TESSERA_CHECK(target.sizes() == input.sizes(), ValueError, op, ": target size ",
                shape_to_string(target.sizes()), " must be the same as input size ",
                shape_to_string(input.sizes()));
  check_factor(op, "weight", weight, input);
  check_factor(op, "pos_weight", pos_weight, input);
}

// The dtype of the result: every operand's, promoted (as PyTorch's chain of
// ops promotes them).
DType result_dtype(const Tensor& input, const Tensor& target, const Tensor& weight,
                   const Tensor& pos_weight) {
  DType d = promote_types(input.dtype(), target.dtype());
  if (weight.defined()) d = promote_types(d, weight.dtype());
  if (pos_weight.defined()) d = promote_types(d, pos_weight.dtype());
  return d;
}

Tensor in_dtype(const Tensor& t, DType dtype) {
  return !t.defined() || t.dtype() == dtype ? t : t.to(dtype);
}

}  // namespace

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        std::string_view reduction) {
  check_arguments(kOp, input, target, weight, pos_weight);
  const Reduction r = parse_reduction(kOp, reduction);
  const DType out_dtype = result_dtype(input, target, weight, pos_weight);
  const DType cdt = nn_detail::compute_dtype(out_dtype);
  const Tensor x = in_dtype(input, cdt), t = in_dtype(target, cdt);

  Tensor log_sigmoid = sub(clamp_max(x, 0), log1p(exp(neg(abs(x)))));
  if (pos_weight.defined()) {
    const Tensor log_weight = add(mul(sub(in_dtype(pos_weight, cdt), 1), t), 1);
    log_sigmoid = mul(log_sigmoid, log_weight);
  }
  Tensor loss = sub(sub(x, mul(t, x)), log_sigmoid);
  if (weight.defined()) loss = mul(loss, in_dtype(weight, cdt));
  if (r == Reduction::kMean) loss = mean(loss);
  if (r == Reduction::kSum) loss = sum(loss);
  return in_dtype(loss, out_dtype);
}

Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad_output, const Tensor& input,
                                                 const Tensor& target, const Tensor& weight,
                                                 const Tensor& pos_weight,
                                                 std::string_view reduction) {
  const char* op = "binary_cross_entropy_with_logits_backward";
  check_arguments(op, input, target, weight, pos_weight);
  const Reduction r = parse_reduction(op, reduction);
  TESSERA_CHECK(grad_output.defined(), ValueError, op, ": undefined grad_output");
  nn_detail::check_same_device(op, input, grad_output);
  if (r == Reduction::kNone) {
    TESSERA_CHECK(grad_output.sizes() == input.sizes(), ValueError, op,
                  ": expected grad_output of the input's shape ",
                  shape_to_string(input.sizes()), " (reduction 'none'), got ",
                  describe(grad_output));
  } else {
    TESSERA_CHECK(grad_output.numel() == 1, ValueError, op,
                  ": expected a one-element grad_output (reduction '", reduction, "'), got ",
                  describe(grad_output));
  }
  const DType out_dtype =
      promote_types(result_dtype(input, target, weight, pos_weight), grad_output.dtype());
  const DType cdt = nn_detail::compute_dtype(out_dtype);
  const Tensor x = in_dtype(input, cdt), t = in_dtype(target, cdt);

  Tensor grad;
  if (pos_weight.defined()) {
    const Tensor pt = mul(in_dtype(pos_weight, cdt), t);
    grad = sub(mul(sub(add(pt, 1), t), sigmoid(x)), pt);
  } else {
    grad = sub(sigmoid(x), t);
  }
  grad = mul(grad, in_dtype(r == Reduction::kNone ? grad_output : grad_output.reshape({}), cdt));
  if (weight.defined()) grad = mul(grad, in_dtype(weight, cdt));
  if (r == Reduction::kMean) grad = div(grad, Scalar(static_cast<double>(input.numel())));
  return in_dtype(grad, out_dtype);  // input's shape: every factor broadcasts to it
}

}  // namespace tessera
