// binary_cross_entropy_with_logits and adaptive_avg_pool2d, forward and
// backward, against naive double references, and their error cases.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// -- binary_cross_entropy_with_logits. dims: {reduction (0 none, 1 mean,
// 2 sum), has weight, has pos_weight}; inputs: logits, target, [weight],
// [pos_weight], grad_output (for the backward; of the loss's shape).
const char* reduction_name(const Sample& s) {
  static const char* names[] = {"none", "mean", "sum"};
  return names[s.dims[0]];
}

Sample bce_sample(std::string description, DType t, uint64_t seed, const Shape& shape,
                  int64_t reduction, const Shape& weight, const Shape& pos_weight,
                  bool transposed = false) {
  Sample s;
  s.description = std::move(description);
  Tensor x = make_input(shape, t, seed, -30, 30);
  Tensor y = make_input(shape, t, seed + 1, 0, 1);
  if (transposed && shape.size() == 2) {
    x = make_input({shape[1], shape[0]}, t, seed, -30, 30).t();
    y = make_input({shape[1], shape[0]}, t, seed + 1, 0, 1).t();
  }
  s.inputs = {x, y};
  s.dims = {reduction, weight.empty() ? 0 : 1, pos_weight.empty() ? 0 : 1};
  if (!weight.empty()) s.inputs.push_back(make_input(weight, t, seed + 2, 0, 2));
  if (!pos_weight.empty()) s.inputs.push_back(make_input(pos_weight, t, seed + 3, 0.5, 3));
  s.inputs.push_back(make_input(reduction == 0 ? shape : Shape{}, t, seed + 4, -2, 2));
  return s;
}

// Shapes with an empty weight list mean "no weight"; [1] is a real weight.
std::vector<Sample> bce_samples(DType t) {
  std::vector<Sample> out = {
      bce_sample("none [5, 7]", t, 1, {5, 7}, 0, {}, {}),
      bce_sample("mean [5, 7]", t, 11, {5, 7}, 1, {}, {}),
      bce_sample("sum, weight [7], pos_weight [7]", t, 21, {5, 7}, 2, {7}, {7}),
      bce_sample("none, weight [5, 1], pos_weight [7]", t, 31, {5, 7}, 0, {5, 1}, {7}),
      bce_sample("mean, pos_weight only, transposed", t, 41, {6, 4}, 1, {}, {4}, true),
      bce_sample("0-d, mean", t, 51, {}, 1, {}, {}),
      bce_sample("zero-size [0, 3], sum", t, 61, {0, 3}, 2, {}, {}),
      bce_sample("3-d [2, 3, 4], weight [1], none", t, 71, {2, 3, 4}, 0, {1}, {}),
  };
  if (t == DType::kF32) out.push_back(bce_sample("larger [256, 1000], mean", t, 81, {256, 1000}, 1, {1000}, {1000}));
  return out;
}

struct BceInputs {
  Tensor x, y, weight, pos_weight, grad;
};

BceInputs bce_inputs(const std::vector<Tensor>& in, const Sample& s) {
  BceInputs b{in[0], in[1], {}, {}, in.back()};
  size_t k = 2;
  if (s.dims[1]) b.weight = in[k++];
  if (s.dims[2]) b.pos_weight = in[k++];
  return b;
}

// The unreduced loss (backward = false) or its gradient with respect to
// the logits, per element, in double; weights broadcast.
std::vector<Expected> bce_reference(const Sample& s, bool backward) {
  const BceInputs b = bce_inputs(s.inputs, s);
  const Shape shape = b.x.sizes();
  const int64_t n = numel_of(shape);
  auto expand_values = [&](const Tensor& t) {
    return t.defined() ? values_of(t.expand(shape)) : std::vector<double>(n, 1.0);
  };
  const std::vector<double> x = values_of(b.x), y = values_of(b.y), w = expand_values(b.weight),
                            pw = expand_values(b.pos_weight), g = values_of(b.grad);
  const DType t = b.x.dtype();
  const int64_t r = s.dims[0];
  std::vector<double> v(n);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double lw = 1 + (pw[i] - 1) * y[i];
    if (backward) {
      const double sig = 1 / (1 + std::exp(-x[i]));
      const double grad_out = r == 0 ? g[i] : g[0];
      v[i] = (lw * sig - pw[i] * y[i]) * w[i] * grad_out / (r == 1 ? n : 1);
    } else {
      const double log_sig = std::min(x[i], 0.0) - std::log1p(std::exp(-std::fabs(x[i])));
      v[i] = ((1 - y[i]) * x[i] - lw * log_sig) * w[i];
      total += v[i];
    }
  }
  if (!backward && r != 0) {
    const double reduced = r == 1 ? total / static_cast<double>(n) : total;
    return {Expected{{}, t, {round_to_dtype(reduced, t)}}};
  }
  for (double& e : v) e = round_to_dtype(e, t);
  return {Expected{shape, t, v}};
}

Tolerance bce_tolerance(DType t, const Sample& s) {
  // Logits up to 30 give losses up to ~30; the reductions add n roundings.
  Tolerance d = default_tolerance(t);
  const double n = static_cast<double>(std::max<int64_t>(numel_of(s.inputs[0].sizes()), 1));
  return Tolerance{d.rtol * 4, d.atol * 4 + (s.dims[0] == 0 ? 0 : d.rtol * std::sqrt(n))};
}

// -- adaptive_avg_pool2d. dims: output size (oh, ow).
std::vector<Sample> adaptive_samples(DType t) {
  uint64_t seed = 201;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  std::vector<Sample> out = {
      sample_of("[2, 3, 7, 9] to (3, 5): windows overlap", {in({2, 3, 7, 9})}, {3, 5}),
      sample_of("[2, 3, 8, 8] to (4, 4): divisible", {in({2, 3, 8, 8})}, {4, 4}),
      sample_of("unbatched [3, 5, 6] to (2, 4)", {in({3, 5, 6})}, {2, 4}),
      sample_of("upsampling [1, 2, 3, 3] to (5, 4)", {in({1, 2, 3, 3})}, {5, 4}),
      sample_of("global [2, 4, 5, 6] to (1, 1)", {in({2, 4, 5, 6})}, {1, 1}),
      sample_of("channels last [2, 3, 6, 5] to (4, 3)", {in({2, 6, 5, 3}).permute({0, 3, 1, 2})}, {4, 3}),
      sample_of("zero-size batch [0, 2, 4, 4] to (2, 2)", {in({0, 2, 4, 4})}, {2, 2}),
      sample_of("zero output (0, 2)", {in({1, 2, 4, 4})}, {0, 2}),
  };
  if (t == DType::kF32) out.push_back(sample_of("ResNet head [8, 64, 14, 14] to (7, 7)", {in({8, 64, 14, 14})}, {7, 7}));
  // inf and NaN stay in the windows that hold them.
  Tensor special = in({1, 1, 6, 6}).to(DType::kF64);
  special.data<double>()[0] = INFINITY;
  special.data<double>()[35] = NAN;
  out.push_back(sample_of("inf and NaN [1, 1, 6, 6] to (4, 4)", {special.to(t)}, {4, 4}));
  return out;
}

// The pooled values (grad == nullptr) or the gradient of input for
// grad_output values *grad.
Expected adaptive_reference(const Sample& s, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const Tensor x4 = x.dim() == 4 ? x : x.unsqueeze(0);
  const std::vector<double> v = values_of(x4);
  const int64_t planes = x4.size(0) * x4.size(1), H = x4.size(2), W = x4.size(3);
  const int64_t OH = s.dims[0], OW = s.dims[1];
  Shape os = x.sizes();
  os[os.size() - 2] = OH;
  os[os.size() - 1] = OW;
  Expected out{os, x.dtype(), {}};
  std::vector<double> gin(v.size(), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      const int64_t y0 = oy * H / OH, y1 = ((oy + 1) * H + OH - 1) / OH;
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t x0 = ox * W / OW, x1 = ((ox + 1) * W + OW - 1) / OW;
        const double count = static_cast<double>((y1 - y0) * (x1 - x0));
        double sum = 0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) sum += v[(p * H + iy) * W + ix];
        out.values.push_back(round_to_dtype(sum / count, x.dtype()));
        if (grad) {
          const double g = (*grad)[out.values.size() - 1] / count;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) gin[(p * H + iy) * W + ix] += g;
        }
      }
    }
  }
  if (!grad) return out;
  for (double& g : gin) g = round_to_dtype(g, x.dtype());
  return Expected{x.sizes(), x.dtype(), gin};
}

Tolerance pool_tolerance(DType t, const Sample&) {
  Tolerance d = default_tolerance(t);
  return Tolerance{d.rtol * 4, d.atol * 10};
}

}  // namespace

TESSERA_CONFORMANCE_OP("binary_cross_entropy_with_logits") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = bce_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const BceInputs b = bce_inputs(in, s);
    return std::vector<Tensor>{binary_cross_entropy_with_logits(b.x, b.y, b.weight, b.pos_weight,
                                                                reduction_name(s))};
  };
  c.reference = [](const Sample& s) { return bce_reference(s, false); };
  c.tolerance = bce_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("binary_cross_entropy_with_logits_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = bce_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const BceInputs b = bce_inputs(in, s);
    return std::vector<Tensor>{binary_cross_entropy_with_logits_backward(
        b.grad, b.x, b.y, b.weight, b.pos_weight, reduction_name(s))};
  };
  c.reference = [](const Sample& s) { return bce_reference(s, true); };
  c.tolerance = bce_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("adaptive_avg_pool2d") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = adaptive_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{adaptive_avg_pool2d(in[0], s.dims)};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{adaptive_reference(s, nullptr)}; };
  c.tolerance = pool_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("adaptive_avg_pool2d_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = adaptive_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    // grad_output = the pooled values: deterministic and varied.
    const Tensor g = adaptive_avg_pool2d(in[0], s.dims);
    return std::vector<Tensor>{adaptive_avg_pool2d_backward(g, in[0])};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> g = adaptive_reference(s, nullptr).values;
    return std::vector<Expected>{adaptive_reference(s, &g)};
  };
  c.tolerance = pool_tolerance;
  return c;
}

TESSERA_CONFORMANCE_ERRORS("loss and pool ext") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"bce target of another shape",
       [f32](Device d) { binary_cross_entropy_with_logits(f32(d, {2, 3}), f32(d, {3, 2})); },
       ErrorKind::kValue, {"binary_cross_entropy_with_logits", "[3, 2]", "[2, 3]"}},
      {"bce bad reduction",
       [f32](Device d) { binary_cross_entropy_with_logits(f32(d, {2}), f32(d, {2}), {}, {}, "avg"); },
       ErrorKind::kValue, {"binary_cross_entropy_with_logits", "avg", "reduction"}},
      {"bce pos_weight that does not broadcast",
       [f32](Device d) { binary_cross_entropy_with_logits(f32(d, {2, 3}), f32(d, {2, 3}), {}, f32(d, {2})); },
       ErrorKind::kValue, {"binary_cross_entropy_with_logits", "pos_weight", "[2]", "[2, 3]"}},
      {"bce integer logits",
       [](Device d) {
         Tensor x = ones({2}, TensorOptions(DType::kI64, d));
         binary_cross_entropy_with_logits(x, x);
       },
       ErrorKind::kType, {"binary_cross_entropy_with_logits", "floating", "int64"}},
      {"bce backward grad_output of the wrong shape",
       [f32](Device d) {
         binary_cross_entropy_with_logits_backward(f32(d, {3}), f32(d, {2}), f32(d, {2}), {}, {}, "none");
       },
       ErrorKind::kValue, {"binary_cross_entropy_with_logits_backward", "grad_output", "[2]"}},
      {"adaptive pool of a 2-D input", [f32](Device d) { adaptive_avg_pool2d(f32(d, {3, 3}), {1, 1}); },
       ErrorKind::kValue, {"adaptive_avg_pool2d", "3-D or 4-D", "[3, 3]"}},
      {"adaptive pool of an empty plane",
       [f32](Device d) { adaptive_avg_pool2d(f32(d, {1, 2, 0, 3}), {2, 2}); }, ErrorKind::kValue,
       {"adaptive_avg_pool2d", "non-zero size", "[1, 2, 0, 3]"}},
      {"adaptive pool negative output size",
       [f32](Device d) { adaptive_avg_pool2d(f32(d, {1, 2, 3, 3}), {-1, 2}); }, ErrorKind::kValue,
       {"adaptive_avg_pool2d", "output_size", "[-1, 2]"}},
      {"adaptive pool output_size of three",
       [f32](Device d) { adaptive_avg_pool2d(f32(d, {1, 2, 3, 3}), {1, 2, 3}); }, ErrorKind::kValue,
       {"adaptive_avg_pool2d", "output_size"}},
      {"adaptive pool of integers",
       [](Device d) { adaptive_avg_pool2d(ones({1, 2, 3, 3}, TensorOptions(DType::kI64, d)), {1, 1}); },
       ErrorKind::kType, {"adaptive_avg_pool2d", "floating", "int64"}},
      {"adaptive pool backward grad of another batch",
       [f32](Device d) { adaptive_avg_pool2d_backward(f32(d, {2, 2, 1, 1}), f32(d, {1, 2, 3, 3})); },
       ErrorKind::kValue, {"adaptive_avg_pool2d_backward", "[2, 2, 1, 1]", "[1, 2, 3, 3]"}},
  };
}

}  // namespace tessera::conformance
