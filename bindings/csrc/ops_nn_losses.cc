// tessera.nn.functional's losses and distances, with torch.nn.functional's
// signatures (reduction='mean', the deprecated size_average / reduce still
// deciding it when given). nll_loss and binary_cross_entropy_with_logits
// are the runtime's; the rest are composed from its ops with PyTorch's
// formulas (cross_entropy = nll_loss of log_softmax, label smoothing and
// probability targets included).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <variant>

#include "bindings/csrc/linalg_composites.h"
#include "bindings/csrc/nn_args.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;

void check_floating(const char* op, const Tensor& t) {
  TESSERA_CHECK(tessera::is_floating(t.dtype()), TypeError, op, ": expected a floating input, got ",
                tessera::describe(t));
}

void check_same_size(const char* op, const Tensor& input, const Tensor& target) {
  TESSERA_CHECK(input.sizes() == target.sizes(), ValueError, op, ": target of size ",
                tessera::shape_to_string(target.sizes()), " differs from input of size ",
                tessera::shape_to_string(input.sizes()), "; they must have the same size");
}

// loss * weight reduced; mean_by_weight divides the weighted sum by the
// weights' sum (mse_loss, l1_loss) instead of by the element count.
Tensor weighted_loss(const char* op, const Tensor& loss, const Tensor& input,
                     const Tensor* weight, Reduction r, bool mean_by_weight) {
  if (weight == nullptr) return reduce_loss(loss, r);
  TESSERA_CHECK(weight->sizes() == input.sizes(), ValueError, op,
                ": weights and input must have the same size, got ", tessera::describe(*weight),
                " and ", tessera::describe(input));
  const Tensor w = tessera::mul(loss, *weight);
  if (r == Reduction::kMean && mean_by_weight) return tessera::div(tessera::sum(w), tessera::sum(*weight));
  return reduce_loss(w, r);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor* weight,
                     int64_t ignore_index, Reduction r, double label_smoothing) {
  const char* op = "cross_entropy";
  TESSERA_CHECK(input.dim() >= 1, ValueError, op, ": expected an input of at least 1 dim, got ",
                tessera::describe(input));
  TESSERA_CHECK(label_smoothing >= 0 && label_smoothing <= 1, ValueError, op,
                ": label_smoothing must be between 0.0 and 1.0, got ", label_smoothing);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  Tensor class_weight;  // weight shaped to broadcast along the class dim
  if (weight != nullptr) {
    TESSERA_CHECK(weight->dim() == 1 && weight->size(0) == classes, ValueError, op,
                  ": expected a weight of shape [", classes, "], got ", tessera::describe(*weight));
    Shape s(static_cast<size_t>(input.dim()), 1);
    s[class_dim] = classes;
    class_weight = weight->reshape(s);
  }
  const Tensor logp = tessera::log_softmax(input, class_dim);
  const double smoothing = label_smoothing / static_cast<double>(classes);

  if (target.sizes() == input.sizes()) {
    // Class probabilities.
    TESSERA_CHECK(tessera::is_floating(target.dtype()), TypeError, op,
                  ": expected a floating target with class probabilities, got ",
                  tessera::describe(target));
    TESSERA_CHECK(ignore_index < 0, ValueError, op,
                  ": ignore_index is not supported for class probabilities");
    Tensor t = target;
    if (label_smoothing > 0) t = tessera::add(tessera::mul(target, 1 - label_smoothing), smoothing);
    Tensor terms = tessera::mul(logp, t);
    if (class_weight.defined()) terms = tessera::mul(terms, class_weight);
    switch (r) {
      case Reduction::kNone: return tessera::neg(tessera::sum(terms, {class_dim}));
      case Reduction::kSum: return tessera::neg(tessera::sum(terms));
      case Reduction::kMean:
        // Averaged over the samples (every position but the class dim).
        return tessera::div(tessera::neg(tessera::sum(terms)),
                            static_cast<double>(input.numel() / std::max<int64_t>(classes, 1)));
    }
  }

  const Tensor nll = tessera::nll_loss(logp, target, optional_tensor(weight), reduction_name(r),
                                       ignore_index);
  if (label_smoothing == 0) return nll;
  // The smoothing term: each sample's (weighted) sum of -log p over the
  // classes, 0 at ignored targets, averaged as nll_loss averages.
  const Tensor ignored = tessera::eq(target, ignore_index);
  Tensor smooth = tessera::neg(
      tessera::sum(class_weight.defined() ? tessera::mul(logp, class_weight) : logp, {class_dim}));
  smooth = tessera::where(ignored, 0.0, smooth);
  Tensor smooth_reduced;
  switch (r) {
    case Reduction::kNone: smooth_reduced = smooth; break;
    case Reduction::kSum: smooth_reduced = tessera::sum(smooth); break;
    case Reduction::kMean: {
      Tensor denominator;
      if (weight != nullptr) {
        const Tensor safe_target = tessera::where(ignored, Scalar(0), target);
        const Tensor target_weight =
            tessera::index_select(*weight, 0, safe_target.reshape({-1})).reshape(target.sizes());
        denominator = tessera::sum(tessera::where(ignored, 0.0, target_weight));
      } else {
        denominator = tessera::sum(tessera::logical_not(ignored));
      }
      smooth_reduced = tessera::div(tessera::sum(smooth), denominator);
      break;
    }
  }
  return tessera::add(tessera::mul(nll, 1 - label_smoothing),
                      tessera::mul(smooth_reduced, smoothing));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor* weight,
                            Reduction r) {
  const char* op = "binary_cross_entropy";
  check_same_size(op, input, target);
  check_floating(op, input);
  if (input.numel() > 0) {
    const double lo = tessera::amin(input).to(DType::kF64).item<double>();
    const double hi = tessera::amax(input).to(DType::kF64).item<double>();
    TESSERA_CHECK(lo >= 0 && hi <= 1, ValueError, op,
                  ": all elements of input should be between 0 and 1, got values in [", lo, ", ",
                  hi, "]");
  }
  // PyTorch clamps both logs at -100, so that 0 * log(0) is 0.
  const Tensor log_x = tessera::clamp_min(tessera::log(input), -100);
  const Tensor log_1mx = tessera::clamp_min(tessera::log(tessera::add(tessera::neg(input), 1)), -100);
  const Tensor loss = tessera::sub(tessera::mul(tessera::sub(target, 1), log_1mx),
                                   tessera::mul(target, log_x));
  if (weight != nullptr) return reduce_loss(tessera::mul(loss, *weight), r);
  return reduce_loss(loss, r);
}

Tensor smooth_l1(const Tensor& diff_abs, double beta) {
  if (beta == 0) return diff_abs;
  return tessera::where(tessera::lt(diff_abs, beta),
                        tessera::mul(tessera::mul(diff_abs, diff_abs), 0.5 / beta),
                        tessera::sub(diff_abs, 0.5 * beta));
}

Tensor huber(const Tensor& diff_abs, double delta) {
  return tessera::where(tessera::lt(diff_abs, delta),
                        tessera::mul(tessera::mul(diff_abs, diff_abs), 0.5),
                        tessera::mul(tessera::sub(diff_abs, 0.5 * delta), delta));
}

// reduction may also be "batchmean": the sum divided by the batch size.
Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction,
              std::optional<bool> size_average, std::optional<bool> reduce, bool log_target) {
  const char* op = "kl_div";
  check_floating(op, input);
  const bool batchmean = reduction == "batchmean" && !size_average && !reduce;
  const Reduction r = batchmean ? Reduction::kSum
                                : reduction_arg(reduction, size_average, reduce, op);
  Tensor loss;
  if (log_target) {
    loss = tessera::mul(tessera::exp(target), tessera::sub(target, input));
  } else {
    // xlogy(t, t) - t * input: 0 where t == 0.
    const Tensor t_log_t = tessera::where(tessera::eq(target, 0), 0.0,
                                          tessera::mul(target, tessera::log(target)));
    loss = tessera::sub(t_log_t, tessera::mul(target, input));
  }
  Tensor reduced = reduce_loss(loss, r);
  if (batchmean && input.dim() != 0) reduced = tessera::div(reduced, input.size(0));
  return reduced;
}

Tensor poisson_nll(const Tensor& input, const Tensor& target, bool log_input, bool full,
                   double eps, Reduction r) {
  Tensor loss = log_input
                    ? tessera::sub(tessera::exp(input), tessera::mul(target, input))
                    : tessera::sub(input, tessera::mul(target, tessera::log(tessera::add(input, eps))));
  if (full) {
    // Stirling's term t log t - t + log(2 pi t) / 2, for t > 1.
    const Tensor stirling = tessera::add(
        tessera::sub(tessera::mul(target, tessera::log(target)), target),
        tessera::mul(tessera::log(tessera::mul(target, 2 * std::numbers::pi)), 0.5));
    loss = tessera::add(loss, tessera::where(tessera::gt(target, 1), stirling, 0.0));
  }
  return reduce_loss(loss, r);
}

using Variance = std::variant<Tensor, double>;

Tensor gaussian_nll(const Tensor& input, const Tensor& target, const Variance& var_arg, bool full,
                    double eps, const std::string& reduction) {
  const char* op = "gaussian_nll_loss";
  Tensor var;
  if (const double* v = std::get_if<double>(&var_arg)) {
    TESSERA_CHECK(*v >= 0, ValueError, op, ": var has negative entry/entries");
    var = tessera::full(input.sizes(), *v, tessera::TensorOptions(input.dtype(), input.device()));
  } else {
    var = std::get<Tensor>(var_arg);
    TESSERA_CHECK(var.numel() == 0 || tessera::amin(var).to(DType::kF64).item<double>() >= 0,
                  ValueError, op, ": var has negative entry/entries");
  }
  if (var.sizes() != input.sizes()) {
    const Shape lead(input.sizes().begin(), input.sizes().end() - (input.dim() > 0 ? 1 : 0));
    int64_t mismatched = 0;
    if (var.dim() == input.dim()) {
      for (int64_t d = 0; d < var.dim(); ++d) mismatched += var.size(d) != input.size(d);
    }
    if (input.dim() > 0 && var.sizes() == lead) {
      var = var.unsqueeze(-1);  // one variance per sample, over the last dim
    } else {
      TESSERA_CHECK(var.dim() == input.dim() && mismatched == 1, ValueError, op,
                    ": var of size ", tessera::shape_to_string(var.sizes()),
                    " is of incorrect size for input ", tessera::shape_to_string(input.sizes()));
    }
  }
  const Reduction r = reduction_arg(reduction, std::nullopt, std::nullopt, op);
  var = tessera::clamp_min(var, eps);
  const Tensor diff = tessera::sub(input, target);
  Tensor loss = tessera::mul(
      tessera::add(tessera::log(var), tessera::div(tessera::mul(diff, diff), var)), 0.5);
  if (full) loss = tessera::add(loss, 0.5 * std::log(2 * std::numbers::pi));
  return reduce_loss(loss, r);
}

Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t dim, double eps) {
  const Shape shape = tessera::broadcast_shapes(a.sizes(), b.sizes(), "cosine_similarity");
  auto floating = [&](const Tensor& t) {
    return tessera::is_floating(t.dtype()) ? t.expand(shape) : t.to(DType::kF32).expand(shape);
  };
  const Tensor x1 = floating(a), x2 = floating(b);
  const Tensor n1 = tessera::clamp_min(vector_norm(x1, 2, {dim}, true), eps);
  const Tensor n2 = tessera::clamp_min(vector_norm(x2, 2, {dim}, true), eps);
  return tessera::sum(tessera::mul(tessera::div(x1, n1), tessera::div(x2, n2)), {dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t innermost = std::max<int64_t>(x1.dim(), x2.dim()) - 1;
  return vector_norm(tessera::add(tessera::sub(x1, x2), eps), p,
                     innermost >= 0 ? Shape{innermost} : Shape{}, keepdim);
}

Tensor cosine_embedding(const Tensor& x1, const Tensor& x2, const Tensor& target, double margin,
                        Reduction r) {
  const char* op = "cosine_embedding_loss";
  TESSERA_CHECK(target.dim() <= 1, ValueError, op,
                ": 0-D or 1-D target expected (multi-target is not supported), got ",
                tessera::describe(target));
  const int64_t dims = target.dim() + 1;
  TESSERA_CHECK(x1.dim() == dims && x2.dim() == dims, ValueError, op, ": expected ", dims,
                "-D inputs for a ", target.dim(), "-D target, got ", tessera::describe(x1), " and ",
                tessera::describe(x2));
  constexpr double kEpsilon = 1e-12;
  const int64_t d = target.dim();
  const Tensor prod = tessera::sum(tessera::mul(x1, x2), {d});
  const Tensor mag1 = tessera::add(tessera::sum(tessera::mul(x1, x1), {d}), kEpsilon);
  const Tensor mag2 = tessera::add(tessera::sum(tessera::mul(x2, x2), {d}), kEpsilon);
  const Tensor cos = tessera::div(prod, tessera::sqrt(tessera::mul(mag1, mag2)));
  const Tensor pos = tessera::add(tessera::neg(cos), 1);
  const Tensor neg = tessera::clamp_min(tessera::sub(cos, margin), 0);
  const Tensor loss = tessera::add(tessera::where(tessera::eq(target, 1), pos, 0.0),
                                   tessera::where(tessera::eq(target, -1), neg, 0.0));
  return reduce_loss(loss, r);
}

Tensor triplet_margin(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                      double margin, double p, double eps, bool swap, Reduction r) {
  TESSERA_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), ValueError,
                "triplet_margin_loss: the anchor, positive and negative tensors are expected to "
                "have the same number of dims, got ", tessera::describe(anchor), ", ",
                tessera::describe(positive), " and ", tessera::describe(negative));
  const Tensor d_pos = pairwise_distance(anchor, positive, p, eps, false);
  Tensor d_neg = pairwise_distance(anchor, negative, p, eps, false);
  if (swap) d_neg = tessera::minimum(d_neg, pairwise_distance(positive, negative, p, eps, false));
  return reduce_loss(tessera::clamp_min(tessera::add(tessera::sub(d_pos, d_neg), margin), 0), r);
}

Tensor pdist(const Tensor& input, double p) {
  TESSERA_CHECK(input.dim() == 2, ValueError, "pdist: expected a 2-D input [N, M], got ",
                tessera::describe(input));
  const int64_t n = input.size(0);
  const Tensor upper = tessera::triu(
      tessera::ones({n, n}, tessera::TensorOptions(DType::kBool, input.device())), 1);
  return tessera::masked_select(tessera::cdist(input, input, p), upper);
}

}  // namespace

void register_nn_losses(py::module_& f) {
  f.def("nll_loss", [](const Tensor& input, const Tensor& target, const Tensor* weight,
                       std::optional<bool> size_average, int64_t ignore_index,
                       std::optional<bool> reduce, const std::string& reduction) {
    const Reduction r = reduction_arg(reduction, size_average, reduce, "nll_loss");
    return tessera::nll_loss(input, target, optional_tensor(weight), reduction_name(r),
                             ignore_index);
  }, "input"_a, "target"_a, "weight"_a = py::none(), "size_average"_a = py::none(),
     "ignore_index"_a = -100, "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil(),
     "-input[n, target[n]] (times weight[target[n]]); input holds log-probabilities over dim 1.");
  f.def("cross_entropy", [](const Tensor& input, const Tensor& target, const Tensor* weight,
                            std::optional<bool> size_average, int64_t ignore_index,
                            std::optional<bool> reduce, const std::string& reduction,
                            double label_smoothing) {
    const Reduction r = reduction_arg(reduction, size_average, reduce, "cross_entropy");
    return cross_entropy(input, target, weight, ignore_index, r, label_smoothing);
  }, "input"_a, "target"_a, "weight"_a = py::none(), "size_average"_a = py::none(),
     "ignore_index"_a = -100, "reduce"_a = py::none(), "reduction"_a = "mean",
     "label_smoothing"_a = 0.0, ReleaseGil(),
     "nll_loss(log_softmax(input, 1), target); target class indices or, with input's shape, "
     "class probabilities.");
  f.def("binary_cross_entropy", [](const Tensor& input, const Tensor& target, const Tensor* weight,
                                   std::optional<bool> size_average, std::optional<bool> reduce,
                                   const std::string& reduction) {
    return binary_cross_entropy(input, target, weight,
                                reduction_arg(reduction, size_average, reduce,
                                              "binary_cross_entropy"));
  }, "input"_a, "target"_a, "weight"_a = py::none(), "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil(),
     "-(t log x + (1 - t) log(1 - x)), input probabilities in [0, 1].");
  f.def("binary_cross_entropy_with_logits",
        [](const Tensor& input, const Tensor& target, const Tensor* weight,
           std::optional<bool> size_average, std::optional<bool> reduce,
           const std::string& reduction, const Tensor* pos_weight) {
    const Reduction r = reduction_arg(reduction, size_average, reduce,
                                      "binary_cross_entropy_with_logits");
    return tessera::binary_cross_entropy_with_logits(input, target, optional_tensor(weight),
                                                     optional_tensor(pos_weight),
                                                     reduction_name(r));
  }, "input"_a, "target"_a, "weight"_a = py::none(), "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", "pos_weight"_a = py::none(), ReleaseGil(),
     "binary_cross_entropy of sigmoid(input), computed stably.");

  // Elementwise regression losses of (input - target).
  f.def("mse_loss", [](const Tensor& input, const Tensor& target, std::optional<bool> size_average,
                       std::optional<bool> reduce, const std::string& reduction,
                       const Tensor* weight) {
    check_floating("mse_loss", input);
    const Tensor d = tessera::sub(input, target);
    return weighted_loss("mse_loss", tessera::mul(d, d), input, weight,
                         reduction_arg(reduction, size_average, reduce, "mse_loss"), true);
  }, "input"_a, "target"_a, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", "weight"_a = py::none(), ReleaseGil(),
     "(input - target)^2; with weight, mean is sum(weight * loss) / sum(weight).");
  f.def("l1_loss", [](const Tensor& input, const Tensor& target, std::optional<bool> size_average,
                      std::optional<bool> reduce, const std::string& reduction,
                      const Tensor* weight) {
    check_floating("l1_loss", input);
    return weighted_loss("l1_loss", tessera::abs(tessera::sub(input, target)), input, weight,
                         reduction_arg(reduction, size_average, reduce, "l1_loss"), true);
  }, "input"_a, "target"_a, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", "weight"_a = py::none(), ReleaseGil(), "|input - target|.");
  f.def("smooth_l1_loss", [](const Tensor& input, const Tensor& target,
                             std::optional<bool> size_average, std::optional<bool> reduce,
                             const std::string& reduction, double beta) {
    check_floating("smooth_l1_loss", input);
    TESSERA_CHECK(beta >= 0, ValueError,
                  "smooth_l1_loss: does not support negative values for beta, got ", beta);
    return reduce_loss(smooth_l1(tessera::abs(tessera::sub(input, target)), beta),
                       reduction_arg(reduction, size_average, reduce, "smooth_l1_loss"));
  }, "input"_a, "target"_a, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", "beta"_a = 1.0, ReleaseGil(),
     "0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta.");
  f.def("huber_loss", [](const Tensor& input, const Tensor& target, const std::string& reduction,
                         double delta, const Tensor* weight) {
    check_floating("huber_loss", input);
    TESSERA_CHECK(delta > 0, ValueError,
                  "huber_loss: does not support non-positive values for delta, got ", delta);
    return weighted_loss("huber_loss", huber(tessera::abs(tessera::sub(input, target)), delta),
                         input, weight,
                         reduction_arg(reduction, std::nullopt, std::nullopt, "huber_loss"),
                         false);
  }, "input"_a, "target"_a, "reduction"_a = "mean", "delta"_a = 1.0, "weight"_a = py::none(),
     ReleaseGil(), "0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta).");
  f.def("kl_div", [](const Tensor& input, const Tensor& target, std::optional<bool> size_average,
                     std::optional<bool> reduce, const std::string& reduction, bool log_target) {
    return kl_div(input, target, reduction, size_average, reduce, log_target);
  }, "input"_a, "target"_a, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", "log_target"_a = false, ReleaseGil(),
     "target (log target - input), input holding log-probabilities; reduction may be "
     "'batchmean'.");
  f.def("poisson_nll_loss", [](const Tensor& input, const Tensor& target, bool log_input,
                               bool full, std::optional<bool> size_average, double eps,
                               std::optional<bool> reduce, const std::string& reduction) {
    check_floating("poisson_nll_loss", input);
    return poisson_nll(input, target, log_input, full, eps,
                       reduction_arg(reduction, size_average, reduce, "poisson_nll_loss"));
  }, "input"_a, "target"_a, "log_input"_a = true, "full"_a = false,
     "size_average"_a = py::none(), "eps"_a = 1e-8, "reduce"_a = py::none(),
     "reduction"_a = "mean", ReleaseGil());
  f.def("gaussian_nll_loss", [](const Tensor& input, const Tensor& target, const Variance& var,
                                bool full, double eps, const std::string& reduction) {
    check_floating("gaussian_nll_loss", input);
    return gaussian_nll(input, target, var, full, eps, reduction);
  }, "input"_a, "target"_a, "var"_a, "full"_a = false, "eps"_a = 1e-6, "reduction"_a = "mean",
     ReleaseGil(), "0.5 (log var + (input - target)^2 / var), var clamped to eps.");

  // Margin losses.
  f.def("soft_margin_loss", [](const Tensor& input, const Tensor& target,
                               std::optional<bool> size_average, std::optional<bool> reduce,
                               const std::string& reduction) {
    check_floating("soft_margin_loss", input);
    const Tensor loss = tessera::log1p(tessera::exp(tessera::neg(tessera::mul(target, input))));
    return reduce_loss(loss, reduction_arg(reduction, size_average, reduce, "soft_margin_loss"));
  }, "input"_a, "target"_a, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", ReleaseGil(), "log(1 + exp(-target * input)).");
  f.def("margin_ranking_loss", [](const Tensor& input1, const Tensor& input2,
                                  const Tensor& target, double margin,
                                  std::optional<bool> size_average, std::optional<bool> reduce,
                                  const std::string& reduction) {
    TESSERA_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(), ValueError,
                  "margin_ranking_loss: all input tensors should have the same number of dims, "
                  "got ", tessera::describe(input1), ", ", tessera::describe(input2), " and ",
                  tessera::describe(target));
    const Tensor loss = tessera::clamp_min(
        tessera::add(tessera::mul(tessera::neg(target), tessera::sub(input1, input2)), margin), 0);
    return reduce_loss(loss, reduction_arg(reduction, size_average, reduce, "margin_ranking_loss"));
  }, "input1"_a, "input2"_a, "target"_a, "margin"_a = 0.0, "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil(),
     "max(0, -target * (input1 - input2) + margin).");
  f.def("hinge_embedding_loss", [](const Tensor& input, const Tensor& target, double margin,
                                   std::optional<bool> size_average, std::optional<bool> reduce,
                                   const std::string& reduction) {
    const Tensor margin_part = tessera::where(
        tessera::ne(target, 1), tessera::clamp_min(tessera::add(tessera::neg(input), margin), 0),
        0.0);
    const Tensor self_part = tessera::where(tessera::ne(target, -1), input, 0.0);
    return reduce_loss(tessera::add(margin_part, self_part),
                       reduction_arg(reduction, size_average, reduce, "hinge_embedding_loss"));
  }, "input"_a, "target"_a, "margin"_a = 1.0, "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil(),
     "input where target is 1, max(0, margin - input) where it is -1.");
  f.def("cosine_embedding_loss", [](const Tensor& input1, const Tensor& input2,
                                    const Tensor& target, double margin,
                                    std::optional<bool> size_average, std::optional<bool> reduce,
                                    const std::string& reduction) {
    return cosine_embedding(input1, input2, target, margin,
                            reduction_arg(reduction, size_average, reduce,
                                          "cosine_embedding_loss"));
  }, "input1"_a, "input2"_a, "target"_a, "margin"_a = 0.0, "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil(),
     "1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1.");
  f.def("triplet_margin_loss", [](const Tensor& anchor, const Tensor& positive,
                                  const Tensor& negative, double margin, double p, double eps,
                                  bool swap, std::optional<bool> size_average,
                                  std::optional<bool> reduce, const std::string& reduction) {
    return triplet_margin(anchor, positive, negative, margin, p, eps, swap,
                          reduction_arg(reduction, size_average, reduce, "triplet_margin_loss"));
  }, "anchor"_a, "positive"_a, "negative"_a, "margin"_a = 1.0, "p"_a = 2.0, "eps"_a = 1e-6,
     "swap"_a = false, "size_average"_a = py::none(), "reduce"_a = py::none(),
     "reduction"_a = "mean", ReleaseGil(),
     "max(d(anchor, positive) - d(anchor, negative) + margin, 0), d the p-norm distance.");
  f.def("multilabel_soft_margin_loss", [](const Tensor& input, const Tensor& target,
                                          const Tensor* weight, std::optional<bool> size_average,
                                          std::optional<bool> reduce,
                                          const std::string& reduction) {
    const char* op = "multilabel_soft_margin_loss";
    check_floating(op, input);
    TESSERA_CHECK(input.dim() >= 1, ValueError, op, ": expected an input [N, C] or [C], got ",
                  tessera::describe(input));
    Tensor loss = tessera::neg(tessera::add(
        tessera::mul(target, tessera::log_sigmoid(input)),
        tessera::mul(tessera::add(tessera::neg(target), 1), tessera::log_sigmoid(tessera::neg(input)))));
    if (weight != nullptr) loss = tessera::mul(loss, *weight);
    const int64_t class_dim = input.dim() - 1;
    loss = tessera::div(tessera::sum(loss, {class_dim}), input.size(class_dim));
    return reduce_loss(loss, reduction_arg(reduction, size_average, reduce, op));
  }, "input"_a, "target"_a, "weight"_a = py::none(), "size_average"_a = py::none(),
     "reduce"_a = py::none(), "reduction"_a = "mean", ReleaseGil());

  // Distances.
  f.def("cosine_similarity", &cosine_similarity, "x1"_a, "x2"_a, "dim"_a = 1, "eps"_a = 1e-8,
        ReleaseGil(), "sum over dim of (x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)).");
  f.def("pairwise_distance", &pairwise_distance, "x1"_a, "x2"_a, "p"_a = 2.0, "eps"_a = 1e-6,
        "keepdim"_a = false, ReleaseGil(), "||x1 - x2 + eps||_p over the last dim.");
  f.def("pdist", &pdist, "input"_a, "p"_a = 2.0, ReleaseGil(),
        "The p-norm distances between the rows of input [N, M], the pairs i < j in order.");
}

}  // namespace tessera_py
