// tessera.nn.functional's activations, softmax and its relatives, with
// torch.nn.functional's names, parameters and inplace= forms (an in-place
// call returns the input's own object). The runtime's pointwise ops are
// used where it has them; the rest (relu6, selu, celu, shrinkages,
// softsign, glu, prelu, rrelu, threshold, gumbel_softmax) are composed.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "bindings/csrc/nn_args.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;

// SELU's constants (Klambauer et al.), as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

Tensor celu(const Tensor& x, double alpha) {
  TESSERA_CHECK(alpha != 0, ValueError, "celu: alpha must not be 0 (it divides the input)");
  return tessera::elu(x, alpha, 1, 1.0 / alpha);
}

// x where x > threshold, else value; the input's dtype.
Tensor threshold(const Tensor& x, Scalar threshold, Scalar value) {
  return tessera::where(tessera::gt(x, threshold), x, value).to(x.dtype());
}

Tensor hardshrink(const Tensor& x, double lambd) {
  return tessera::where(tessera::gt(tessera::abs(x), lambd), x, 0.0);
}

Tensor softshrink(const Tensor& x, double lambd) {
  TESSERA_CHECK(lambd >= 0, ValueError, "softshrink: lambd must be at least 0, got ", lambd);
  return tessera::where(tessera::gt(x, lambd), tessera::sub(x, lambd),
                        tessera::where(tessera::lt(x, -lambd), tessera::add(x, lambd), 0.0));
}

Tensor softsign(const Tensor& x) { return tessera::div(x, tessera::add(tessera::abs(x), 1)); }

Tensor glu(const Tensor& x, int64_t dim) {
  TESSERA_CHECK(x.dim() > 0, ValueError, "glu: does not support 0-d tensors (the halved dim "
                "must have an even size)");
  const int64_t d = tessera::wrap_dim(dim, x.dim(), "glu");
  const int64_t n = x.size(d);
  TESSERA_CHECK(n % 2 == 0, ValueError, "glu: halving dimension must be even, but dimension ", d,
                " is size ", n);
  return tessera::mul(x.narrow(d, 0, n / 2), tessera::sigmoid(x.narrow(d, n / 2, n / 2)));
}

// weight: one slope, or one per channel (dim 1; a 0- or 1-D input has one).
Tensor prelu(const Tensor& x, const Tensor& weight) {
  TESSERA_CHECK(weight.dim() <= 1, ValueError,
                "prelu: expected weight to be a scalar or 1-D tensor, got ",
                tessera::describe(weight));
  const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  TESSERA_CHECK(weight.numel() == 1 || weight.numel() == channels, ValueError,
                "prelu: mismatch of parameter numbers and input channel size: found ",
                weight.numel(), " parameters and ", channels, " channels in ",
                tessera::describe(x));
  Tensor w;
  if (weight.numel() == 1) {
    w = weight.reshape({});
  } else {
    Shape per_channel(static_cast<size_t>(x.dim() - 1), 1);
    per_channel[0] = channels;
    w = weight.reshape(per_channel);
  }
  return tessera::where(tessera::ge(x, 0), x, tessera::mul(w, x));
}

// Training: each negative element's slope uniform in [lower, upper];
// evaluation: the mean slope.
Tensor rrelu(const Tensor& x, double lower, double upper, bool training) {
  TESSERA_CHECK(lower <= upper, ValueError, "rrelu: lower bound ", lower,
                " must not exceed upper bound ", upper);
  if (!training) return tessera::leaky_relu(x, (lower + upper) / 2);
  TESSERA_CHECK(tessera::is_floating(x.dtype()), TypeError, "rrelu: expected a floating input, got ",
                tessera::describe(x));
  Tensor slopes = tessera::empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  tessera::uniform_(slopes, lower, upper);
  return tessera::where(tessera::ge(x, 0), x, tessera::mul(x, slopes));
}

Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, int64_t dim) {
  TESSERA_CHECK(tessera::is_floating(logits.dtype()), TypeError,
                "gumbel_softmax: expected floating logits, got ", tessera::describe(logits));
  // Gumbel noise -log(E), E ~ Exp(1) = -log(U); E is kept off 0, where the
  // noise would be infinite.
  Tensor u = tessera::empty(logits.sizes(), TensorOptions(logits.dtype(), logits.device()));
  tessera::uniform_(u);
  const Tensor e = tessera::clamp_min(tessera::neg(tessera::log1p(tessera::neg(u))),
                                      std::numeric_limits<float>::min());
  const Tensor gumbels = tessera::neg(tessera::log(e));
  const Tensor soft = tessera::softmax(tessera::div(tessera::add(logits, gumbels), tau), dim);
  if (!hard) return soft;
  const Tensor index = tessera::argmax(soft, dim, /*keepdim=*/true);
  return tessera::scatter(tessera::zeros(soft.sizes(), TensorOptions(soft.dtype(), soft.device())),
                          dim, index, 1.0);
}

void register_inplace_pair(py::module_& f, const char* name, auto op, auto op_inplace,
                           const char* doc) {
  f.def(name, [op, op_inplace](Tensor& input, bool inplace) {
    return result_or_self(input, inplace, [&] { return op(input); }, [&] { op_inplace(input); });
  }, "input"_a, "inplace"_a = false, doc);
}

}  // namespace

void register_nn_activations(py::module_& f) {
  // -- With an in-place kernel.
  register_inplace_pair(f, "relu", [](const Tensor& x) { return tessera::relu(x); },
                        [](Tensor& x) { tessera::relu_(x); }, "max(x, 0).");
  register_inplace_pair(f, "silu", [](const Tensor& x) { return tessera::silu(x); },
                        [](Tensor& x) { tessera::silu_(x); }, "x * sigmoid(x).");
  register_inplace_pair(f, "hardswish", [](const Tensor& x) { return tessera::hardswish(x); },
                        [](Tensor& x) { tessera::hardswish_(x); }, "x * relu6(x + 3) / 6.");
  register_inplace_pair(f, "hardsigmoid", [](const Tensor& x) { return tessera::hardsigmoid(x); },
                        [](Tensor& x) { tessera::hardsigmoid_(x); }, "relu6(x + 3) / 6.");
  register_inplace_pair(f, "mish", [](const Tensor& x) { return tessera::mish(x); },
                        [](Tensor& x) { x.copy_(tessera::mish(x)); }, "x * tanh(softplus(x)).");
  f.def("relu_", [](Tensor& x) -> Tensor& { return tessera::relu_(x); }, "input"_a,
        ReleaseGil());
  f.def("relu6", [](Tensor& input, bool inplace) {
    return result_or_copy_into(input, inplace, [&] { return tessera::hardtanh(input, 0, 6); });
  }, "input"_a, "inplace"_a = false, "min(max(x, 0), 6).");
  f.def("gelu", [](const Tensor& x, const std::string& approximate) {
    return tessera::gelu(x, approximate);
  }, "input"_a, "approximate"_a = "none", ReleaseGil(),
     "x * Phi(x); approximate='tanh' for the tanh form.");
  f.def("sigmoid", [](const Tensor& x) { return tessera::sigmoid(x); }, "input"_a, ReleaseGil());
  f.def("tanh", [](const Tensor& x) { return tessera::tanh(x); }, "input"_a, ReleaseGil());
  f.def("logsigmoid", &tessera::log_sigmoid, "input"_a, ReleaseGil(), "log(sigmoid(x)), stable.");

  // -- Composed; inplace copies the result into the input.
  auto def_scaled_elu = [&](const char* name, auto op, const char* doc) {
    f.def(name, [op](Tensor& input, double alpha, bool inplace) {
      return result_or_copy_into(input, inplace, [&] { return op(input, alpha); });
    }, "input"_a, "alpha"_a = 1.0, "inplace"_a = false, doc);
    f.def((std::string(name) + "_").c_str(), [op](Tensor& input, double alpha) -> Tensor& {
      return input.copy_(op(input, alpha));
    }, "input"_a, "alpha"_a = 1.0, ReleaseGil());
  };
  def_scaled_elu("elu", [](const Tensor& x, double alpha) { return tessera::elu(x, alpha); },
                 "x > 0 ? x : alpha * (exp(x) - 1).");
  def_scaled_elu("celu", &celu, "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).");
  auto selu = [](const Tensor& x) { return tessera::elu(x, kSeluAlpha, kSeluScale); };
  f.def("selu", [selu](Tensor& input, bool inplace) {
    return result_or_copy_into(input, inplace, [&] { return selu(input); });
  }, "input"_a, "inplace"_a = false, "scale * elu(x, alpha) with SELU's constants.");
  f.def("selu_", [selu](Tensor& input) -> Tensor& { return input.copy_(selu(input)); },
        "input"_a, ReleaseGil());
  f.def("leaky_relu", [](Tensor& input, double negative_slope, bool inplace) {
    return result_or_copy_into(input, inplace, [&] {
      return tessera::leaky_relu(input, negative_slope);
    });
  }, "input"_a, "negative_slope"_a = 0.01, "inplace"_a = false);
  f.def("leaky_relu_", [](Tensor& input, double negative_slope) -> Tensor& {
    return input.copy_(tessera::leaky_relu(input, negative_slope));
  }, "input"_a, "negative_slope"_a = 0.01, ReleaseGil());
  f.def("hardtanh", [](Tensor& input, Scalar min_val, Scalar max_val, bool inplace) {
    return result_or_copy_into(input, inplace, [&] {
      return tessera::hardtanh(input, min_val, max_val);
    });
  }, "input"_a, "min_val"_a = -1.0, "max_val"_a = 1.0, "inplace"_a = false,
     "x clamped to [min_val, max_val].");
  f.def("hardtanh_", [](Tensor& input, Scalar min_val, Scalar max_val) -> Tensor& {
    return input.copy_(tessera::hardtanh(input, min_val, max_val));
  }, "input"_a, "min_val"_a = -1.0, "max_val"_a = 1.0, ReleaseGil());
  f.def("threshold", [](Tensor& input, Scalar th, Scalar value, bool inplace) {
    return result_or_copy_into(input, inplace, [&] { return threshold(input, th, value); });
  }, "input"_a, "threshold"_a, "value"_a, "inplace"_a = false,
     "x where x > threshold, else value.");
  f.def("threshold_", [](Tensor& input, Scalar th, Scalar value) -> Tensor& {
    return input.copy_(threshold(input, th, value));
  }, "input"_a, "threshold"_a, "value"_a, ReleaseGil());
  f.def("rrelu", [](Tensor& input, double lower, double upper, bool training, bool inplace) {
    return result_or_copy_into(input, inplace, [&] {
      return rrelu(input, lower, upper, training);
    });
  }, "input"_a, "lower"_a = 1.0 / 8, "upper"_a = 1.0 / 3, "training"_a = false,
     "inplace"_a = false, "Leaky ReLU with a random slope in [lower, upper] when training, "
     "their mean otherwise.");
  f.def("rrelu_", [](Tensor& input, double lower, double upper, bool training) -> Tensor& {
    return input.copy_(rrelu(input, lower, upper, training));
  }, "input"_a, "lower"_a = 1.0 / 8, "upper"_a = 1.0 / 3, "training"_a = false, ReleaseGil());
  f.def("softplus", [](const Tensor& x, double beta, double threshold) {
    return tessera::softplus(x, beta, threshold);
  }, "input"_a, "beta"_a = 1.0, "threshold"_a = 20.0, ReleaseGil(),
     "log(1 + exp(beta x)) / beta, x itself where beta x > threshold.");
  f.def("hardshrink", &hardshrink, "input"_a, "lambd"_a = 0.5, ReleaseGil());
  f.def("softshrink", &softshrink, "input"_a, "lambd"_a = 0.5, ReleaseGil());
  f.def("tanhshrink", [](const Tensor& x) { return tessera::sub(x, tessera::tanh(x)); },
        "input"_a, ReleaseGil(), "x - tanh(x).");
  f.def("softsign", &softsign, "input"_a, ReleaseGil(), "x / (1 + |x|).");
  f.def("glu", &glu, "input"_a, "dim"_a = -1, ReleaseGil(),
        "a * sigmoid(b) for the halves a, b of dim.");
  f.def("prelu", &prelu, "input"_a, "weight"_a, ReleaseGil(),
        "x >= 0 ? x : weight * x, weight one slope or one per channel.");

  // -- Softmax family; dim=None picks PyTorch's implicit dim.
  f.def("softmax", [](const Tensor& x, std::optional<int64_t> dim, int64_t,
                      std::optional<DType> dtype) {
    return tessera::softmax(x, implicit_softmax_dim(dim, x), dtype);
  }, "input"_a, "dim"_a = py::none(), "_stacklevel"_a = 3, "dtype"_a = py::none(), ReleaseGil());
  f.def("log_softmax", [](const Tensor& x, std::optional<int64_t> dim, int64_t,
                          std::optional<DType> dtype) {
    return tessera::log_softmax(x, implicit_softmax_dim(dim, x), dtype);
  }, "input"_a, "dim"_a = py::none(), "_stacklevel"_a = 3, "dtype"_a = py::none(), ReleaseGil());
  f.def("softmin", [](const Tensor& x, std::optional<int64_t> dim, int64_t,
                      std::optional<DType> dtype) {
    const Tensor in = dtype ? x.to(*dtype) : x;
    return tessera::softmax(tessera::neg(in), implicit_softmax_dim(dim, x));
  }, "input"_a, "dim"_a = py::none(), "_stacklevel"_a = 3, "dtype"_a = py::none(), ReleaseGil(),
     "softmax(-x).");
  f.def("gumbel_softmax", [](const Tensor& logits, double tau, bool hard, double, int64_t dim) {
    return gumbel_softmax(logits, tau, hard, dim);
  }, "logits"_a, "tau"_a = 1.0, "hard"_a = false, "eps"_a = 1e-10, "dim"_a = -1, ReleaseGil(),
     "softmax((logits + Gumbel noise) / tau); hard: the one-hot of its argmax.");
}

}  // namespace tessera_py
