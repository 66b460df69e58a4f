// linalg.cross and cdist (with its backward) against naive double
// references, and their error cases.
#include <cmath>
#include <limits>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// -- cross. dims: {dim}.
std::vector<Sample> cross_samples(DType t) {
  uint64_t seed = 301;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -5, 5); };
  return {
      sample_of("[4, 3] dim -1", {in({4, 3}), in({4, 3})}, {-1}),
      sample_of("[3, 5] dim 0", {in({3, 5}), in({3, 5})}, {0}),
      sample_of("broadcast [2, 1, 3] with [1, 4, 3]", {in({2, 1, 3}), in({1, 4, 3})}, {2}),
      sample_of("transposed [3, 6] viewed as [6, 3]", {in({3, 6}).t(), in({6, 3})}, {1}),
      sample_of("0 rows [0, 3]", {in({0, 3}), in({0, 3})}, {-1}),
      sample_of("larger [4096, 3]", {in({4096, 3}), in({4096, 3})}, {1}),
  };
}

Expected cross_reference(const Sample& s) {
  const Tensor& a = s.inputs[0];
  const Tensor& b = s.inputs[1];
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "reference");
  const int64_t dim = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(shape.size()) : s.dims[0];
  const Nd va(a.expand(shape)), vb(b.expand(shape));
  return build_expected(shape, a.dtype(), [&](const Shape& c) {
    auto at = [&](const Nd& v, int64_t k) {
      Shape cc = c;
      cc[dim] = k;
      return v.at(cc);
    };
    const int64_t i = c[dim], j = (i + 1) % 3, k = (i + 2) % 3;
    // Each product rounded to the dtype, then the difference: what the
    // kernels (and PyTorch's CPU, for 16-bit floats) compute.
    auto r = [&](double v) { return round_to_dtype(v, a.dtype()); };
    return r(at(va, j) * at(vb, k)) - r(at(va, k) * at(vb, j));
  });
}

// -- cdist. scalars: {p}; inputs: x1, x2, grad (of the result's shape).
Shape cdist_shape(const Tensor& x1, const Tensor& x2) {
  const Shape b1(x1.sizes().begin(), x1.sizes().end() - 2);
  const Shape b2(x2.sizes().begin(), x2.sizes().end() - 2);
  Shape s = broadcast_shapes(b1, b2, "reference");
  s.push_back(x1.size(-2));
  s.push_back(x2.size(-2));
  return s;
}

Sample cdist_sample(std::string description, DType t, uint64_t seed, const Shape& s1,
                    const Shape& s2, double p, bool duplicate_rows = false) {
  Tensor x1 = make_input(s1, t, seed, -3, 3);
  Tensor x2 = make_input(s2, t, seed + 1, -3, 3);
  if (duplicate_rows) {
    // Row 0 of x2 equals row 0 of x1: a zero distance, whose gradient is 0.
    x2.select(-2, 0).copy_(x1.select(-2, 0));
  }
  Tensor grad = make_input(cdist_shape(x1, x2), t, seed + 2, -2, 2);
  return sample_of(std::move(description), {x1, x2, grad}, {}, {p});
}

std::vector<Sample> cdist_samples(DType t) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Sample> out = {
      cdist_sample("p 2 [5, 3] [4, 3]", t, 1, {5, 3}, {4, 3}, 2.0, true),
      cdist_sample("p 1", t, 11, {5, 3}, {4, 3}, 1.0, true),
      cdist_sample("p 0", t, 21, {5, 3}, {4, 3}, 0.0, true),
      cdist_sample("p inf", t, 31, {5, 3}, {4, 3}, inf, true),
      cdist_sample("p 0.5", t, 41, {5, 3}, {4, 3}, 0.5, true),
      cdist_sample("p 1.5", t, 51, {5, 3}, {4, 3}, 1.5, true),
      cdist_sample("p 3", t, 61, {5, 3}, {4, 3}, 3.0, true),
      cdist_sample("batch broadcast [2, 1, 5, 3] [3, 4, 3]", t, 71, {2, 1, 5, 3}, {3, 4, 3}, 2.0),
      cdist_sample("no columns [2, 0] [3, 0]", t, 81, {2, 0}, {3, 0}, 2.0),
      cdist_sample("no rows [0, 3] [4, 3]", t, 91, {0, 3}, {4, 3}, 2.0),
  };
  // Several row blocks of x1 (the difference tensor is [R1, R2, M]).
  if (t == DType::kF32) out.push_back(cdist_sample("blocks [600, 128] [300, 128]", t, 101, {600, 128}, {300, 128}, 2.0));
  return out;
}

double sign_of(double v) { return (0 < v) - (v < 0); }

// The distances (grad == false) or the gradient of x1 for the sample's grad,
// over flat row-major values of the inputs expanded to the batch shape.
Expected cdist_reference(const Sample& s, bool grad) {
  const Tensor& x1 = s.inputs[0];
  const Tensor& x2 = s.inputs[1];
  const double p = s.scalars[0].to<double>();
  const Shape out = cdist_shape(x1, x2);
  const Shape batch(out.begin(), out.end() - 2);
  const int64_t nb = numel_of(batch), r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  auto expanded = [&](const Tensor& x, int64_t r) {
    Shape sh = batch;
    sh.insert(sh.end(), {r, m});
    return values_of(x.expand(sh));
  };
  const std::vector<double> a = expanded(x1, r1), b = expanded(x2, r2), g = values_of(s.inputs[2]);
  auto diff = [&](int64_t n, int64_t i, int64_t j, int64_t k) {
    return a[(n * r1 + i) * m + k] - b[(n * r2 + j) * m + k];
  };
  std::vector<double> dist(static_cast<size_t>(nb * r1 * r2));
  for (int64_t n = 0; n < nb; ++n) {
    for (int64_t i = 0; i < r1; ++i) {
      for (int64_t j = 0; j < r2; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < m; ++k) {
          const double d = std::fabs(diff(n, i, j, k));
          if (p == 0) acc += d != 0;
          else if (std::isinf(p)) acc = std::max(acc, d);
          else acc += std::pow(d, p);
        }
        dist[(n * r1 + i) * r2 + j] = p == 0 || std::isinf(p) ? acc : std::pow(acc, 1 / p);
      }
    }
  }
  const DType t = x1.dtype();
  if (!grad) {
    Expected e{out, t, dist};
    for (double& v : e.values) v = round_to_dtype(v, t);
    return e;
  }
  Shape grad_shape = batch;
  grad_shape.insert(grad_shape.end(), {r1, m});
  Expected e{grad_shape, t, std::vector<double>(static_cast<size_t>(nb * r1 * m), 0.0)};
  for (int64_t n = 0; n < nb; ++n) {
    for (int64_t i = 0; i < r1; ++i) {
      for (int64_t j = 0; j < r2; ++j) {
        const double d = dist[(n * r1 + i) * r2 + j];
        if (d == 0 || p == 0) continue;  // a zero distance has a zero gradient
        const double gij = g[(n * r1 + i) * r2 + j];
        for (int64_t k = 0; k < m; ++k) {
          const double x = diff(n, i, j, k);
          double term;
          if (p == 1) term = sign_of(x);
          else if (p == 2) term = x / d;
          else if (std::isinf(p)) term = std::fabs(x) == d ? sign_of(x) : 0;
          else if (p < 2) term = x == 0 ? 0 : sign_of(x) * std::pow(std::fabs(x), p - 1) / std::pow(d, p - 1);
          else term = x * std::pow(std::fabs(x), p - 2) / std::pow(d, p - 1);
          e.values[(n * r1 + i) * m + k] += term * gij;
        }
      }
    }
  }
  for (double& v : e.values) v = round_to_dtype(v, t);
  return e;
}

Tolerance cdist_tolerance(DType t, const Sample& s) {
  // Sums over the columns (and, for the gradient, over x2's rows).
  Tolerance d = default_tolerance(t);
  const double n = static_cast<double>(std::max<int64_t>(s.inputs[0].size(-1), 1));
  return Tolerance{d.rtol * 10, d.atol * 10 * std::sqrt(n)};
}

}  // namespace

TESSERA_CONFORMANCE_OP("linalg_cross") {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = cross_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{linalg_cross(in[0], in[1], s.dims[0])};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{cross_reference(s)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("linalg_cross_out") {
  OpCase c;
  c.dtypes = {DType::kI32, DType::kF32};
  c.samples = cross_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Tensor out = empty({0}, TensorOptions(in[0].dtype(), in[0].device()));
    linalg_cross_out(out, in[0], in[1], s.dims[0]);
    return std::vector<Tensor>{out};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{cross_reference(s)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("cdist") {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64};
  c.samples = cdist_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{cdist(in[0], in[1], s.scalars[0].to<double>())};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{cdist_reference(s, false)}; };
  c.tolerance = cdist_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("cdist_backward") {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64};
  c.samples = cdist_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const double p = s.scalars[0].to<double>();
    return std::vector<Tensor>{cdist_backward(in[2], in[0], in[1], p, cdist(in[0], in[1], p))};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{cdist_reference(s, true)}; };
  c.tolerance = cdist_tolerance;
  return c;
}

TESSERA_CONFORMANCE_ERRORS("distance") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"cross of different ranks", [f32](Device d) { linalg_cross(f32(d, {2, 3}), f32(d, {3})); },
       ErrorKind::kValue, {"linalg.cross", "same number of dimensions"}},
      {"cross along a dim of 2", [f32](Device d) { linalg_cross(f32(d, {2, 2}), f32(d, {2, 2})); },
       ErrorKind::kValue, {"linalg.cross", "length 3", "Got 2 and 2"}},
      {"cross of bool",
       [](Device d) {
         Tensor b = ones({3}, TensorOptions(DType::kBool, d));
         linalg_cross(b, b);
       },
       ErrorKind::kType, {"linalg.cross", "bool"}},
      {"cross of two dtypes",
       [f32](Device d) { linalg_cross(f32(d, {3}), ones({3}, TensorOptions(DType::kF64, d))); },
       ErrorKind::kType, {"linalg.cross", "float32", "float64"}},
      {"cdist of a 1-D input", [f32](Device d) { cdist(f32(d, {3}), f32(d, {2, 3})); },
       ErrorKind::kValue, {"cdist", "at least 2D"}},
      {"cdist column mismatch", [f32](Device d) { cdist(f32(d, {2, 3}), f32(d, {2, 4})); },
       ErrorKind::kValue, {"cdist", "X1: 3 X2: 4"}},
      {"cdist negative p", [f32](Device d) { cdist(f32(d, {2, 3}), f32(d, {2, 3}), -1.0); },
       ErrorKind::kValue, {"cdist", "non-negative p"}},
      {"cdist of integers",
       [](Device d) {
         Tensor x = ones({2, 3}, TensorOptions(DType::kI64, d));
         cdist(x, x);
       },
       ErrorKind::kType, {"cdist", "int64"}},
      {"cdist batch mismatch", [f32](Device d) { cdist(f32(d, {2, 2, 3}), f32(d, {3, 2, 3})); },
       ErrorKind::kValue, {"cdist", "[2]", "[3]"}},
  };
}

}  // namespace tessera::conformance
