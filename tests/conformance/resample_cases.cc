// upsample_nearest2d / upsample_bilinear2d and im2col / col2im (unfold and
// fold), forward and backward, Tensor.unfold's backward, against naive
// double references; and masked_scatter. Error cases last.
#include <cmath>
#include <optional>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// -- Upsampling. dims: {OH, OW}; scalars: {scale_h, scale_w} (0: none);
// flag: align_corners.
std::vector<Sample> upsample_samples(DType t) {
  uint64_t seed = 501;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  std::vector<Sample> out = {
      sample_of("[2, 3, 4, 5] to (8, 10)", {in({2, 3, 4, 5})}, {8, 10}, {0.0, 0.0}),
      sample_of("[1, 2, 5, 7] to (7, 3), align_corners", {in({1, 2, 5, 7})}, {7, 3}, {0.0, 0.0}, true),
      sample_of("[1, 2, 6, 6] to (4, 9)", {in({1, 2, 6, 6})}, {4, 9}, {0.0, 0.0}),
      sample_of("scale factors 1.7, 2.5 to (6, 10)", {in({1, 1, 4, 4})}, {6, 10}, {1.7, 2.5}),
      sample_of("same size (copy)", {in({1, 2, 3, 3})}, {3, 3}, {0.0, 0.0}),
      sample_of("to one pixel, align_corners", {in({1, 2, 3, 4})}, {1, 1}, {0.0, 0.0}, true),
      sample_of("channels last [2, 3, 5, 4] to (9, 7)", {in({2, 5, 4, 3}).permute({0, 3, 1, 2})}, {9, 7}, {0.0, 0.0}),
      sample_of("zero batch", {in({0, 2, 3, 3})}, {6, 6}, {0.0, 0.0}),
  };
  if (t == DType::kF32) out.push_back(sample_of("larger [4, 16, 32, 32] to (64, 64)", {in({4, 16, 32, 32})}, {64, 64}, {0.0, 0.0}));
  return out;
}

std::optional<double> scale_arg(const Sample& s, size_t i) {
  const double v = s.scalars[i].to<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

template <typename C = float>
C scale_of(std::optional<double> scale, int64_t in, int64_t out) {
  return scale ? static_cast<C>(1.0 / *scale) : static_cast<C>(in) / static_cast<C>(out);
}

// PyTorch's source row of each output row, computed in float as it does.
std::vector<int64_t> nearest_ref(int64_t in, int64_t out, std::optional<double> scale) {
  std::vector<int64_t> r;
  const float s = scale_of(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    r.push_back(std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1));
  }
  return r;
}

struct Taps {
  int64_t i0, i1;
  double l0, l1;
};

// PyTorch's two source rows and weights (area_pixel_compute_source_index
// and guard_index_and_lambda, in its compute type C: float, double for f64).
template <typename C>
std::vector<Taps> linear_ref(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  std::vector<Taps> r;
  const C ratio = align ? (out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0))
                        : scale_of<C>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    if (in == out) {
      r.push_back({i, i, 1.0, 0.0});
      continue;
    }
    C real = align ? ratio * static_cast<C>(i) : ratio * (static_cast<C>(i) + C(0.5)) - C(0.5);
    if (!align && real < 0) real = 0;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const C l1 = std::min(std::max(real - static_cast<C>(i0), C(0)), C(1));
    r.push_back({i0, i0 + (i0 < in - 1 ? 1 : 0), 1.0 - l1, l1});
  }
  return r;
}

// Forward values (grad == nullptr) or the input gradient for *grad.
Expected upsample_reference(const Sample& s, bool bilinear, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const std::vector<double> v = values_of(x);
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = s.dims[0], OW = s.dims[1];
  std::vector<Taps> rows, cols;
  if (bilinear) {
    const bool f64 = x.dtype() == DType::kF64;
    rows = f64 ? linear_ref<double>(H, OH, s.flag, scale_arg(s, 0)) : linear_ref<float>(H, OH, s.flag, scale_arg(s, 0));
    cols = f64 ? linear_ref<double>(W, OW, s.flag, scale_arg(s, 1)) : linear_ref<float>(W, OW, s.flag, scale_arg(s, 1));
  } else {
    for (int64_t r : nearest_ref(H, OH, scale_arg(s, 0))) rows.push_back({r, r, 1.0, 0.0});
    for (int64_t c : nearest_ref(W, OW, scale_arg(s, 1))) cols.push_back({c, c, 1.0, 0.0});
  }
  Expected out{{x.size(0), x.size(1), OH, OW}, x.dtype(), {}};
  std::vector<double> gin(v.size(), 0.0);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < OH; ++i) {
      for (int64_t j = 0; j < OW; ++j) {
        const Taps& r = rows[i];
        const Taps& c = cols[j];
        auto at = [&](int64_t y, int64_t xx) { return v[(p * H + y) * W + xx]; };
        // Zero weights are skipped: a 0 * inf term is not in the result.
        auto row = [&](int64_t y) {
          return c.l1 == 0 ? at(y, c.i0) * c.l0 : c.l0 * at(y, c.i0) + c.l1 * at(y, c.i1);
        };
        const double value = r.l1 == 0 ? r.l0 * row(r.i0) : r.l0 * row(r.i0) + r.l1 * row(r.i1);
        out.values.push_back(round_to_dtype(value, x.dtype()));
        if (grad) {
          const double g = (*grad)[out.values.size() - 1];
          gin[(p * H + r.i0) * W + c.i0] += r.l0 * c.l0 * g;
          gin[(p * H + r.i0) * W + c.i1] += r.l0 * c.l1 * g;
          gin[(p * H + r.i1) * W + c.i0] += r.l1 * c.l0 * g;
          gin[(p * H + r.i1) * W + c.i1] += r.l1 * c.l1 * g;
        }
      }
    }
  }
  if (!grad) return out;
  for (double& g : gin) g = round_to_dtype(g, x.dtype());
  return Expected{x.sizes(), x.dtype(), gin};
}

Tolerance resample_tolerance(DType t, const Sample&) {
  Tolerance d = default_tolerance(t);
  return Tolerance{d.rtol * 4, d.atol * 10};
}

OpCase upsample_case(bool bilinear, bool backward) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = upsample_samples;
  c.run = [bilinear, backward](const std::vector<Tensor>& in, const Sample& s) {
    auto forward = [&](const Tensor& x) {
      return bilinear ? upsample_bilinear2d(x, s.dims, s.flag, scale_arg(s, 0), scale_arg(s, 1))
                      : upsample_nearest2d(x, s.dims, scale_arg(s, 0), scale_arg(s, 1));
    };
    const Tensor y = forward(in[0]);
    if (!backward) return std::vector<Tensor>{y};
    // grad_output = the forward's values: deterministic and varied.
    return std::vector<Tensor>{
        bilinear ? upsample_bilinear2d_backward(y, s.dims, in[0].sizes(), s.flag, scale_arg(s, 0), scale_arg(s, 1))
                 : upsample_nearest2d_backward(y, s.dims, in[0].sizes(), scale_arg(s, 0), scale_arg(s, 1))};
  };
  c.reference = [bilinear, backward](const Sample& s) {
    const Expected y = upsample_reference(s, bilinear, nullptr);
    return std::vector<Expected>{backward ? upsample_reference(s, bilinear, &y.values) : y};
  };
  c.tolerance = resample_tolerance;
  return c;
}

// -- im2col / col2im. scalars: {kh, kw, dh, dw, ph, pw, sh, sw}.
std::vector<Sample> unfold_samples(DType t) {
  uint64_t seed = 601;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  std::vector<Sample> out = {
      sample_of("3x3 [2, 3, 5, 6]", {in({2, 3, 5, 6})}, {}, {3, 3, 1, 1, 0, 0, 1, 1}),
      sample_of("2x3, padding 1, stride 2", {in({1, 2, 6, 7})}, {}, {2, 3, 1, 1, 1, 1, 2, 2}),
      sample_of("dilation 2, stride (1, 2)", {in({1, 2, 7, 7})}, {}, {2, 2, 2, 2, 1, 0, 1, 2}),
      sample_of("unbatched, transposed", {in({3, 6, 5}).transpose(1, 2)}, {}, {2, 2, 1, 1, 0, 0, 1, 1}),
      sample_of("zero batch", {in({0, 2, 4, 4})}, {}, {2, 2, 1, 1, 0, 0, 1, 1}),
  };
  if (t == DType::kF32) out.push_back(sample_of("larger [4, 16, 32, 32] 3x3 padding 1", {in({4, 16, 32, 32})}, {}, {3, 3, 1, 1, 1, 1, 1, 1}));
  return out;
}

Shape pair_of(const Sample& s, size_t i) {
  return {s.scalars[i].to<int64_t>(), s.scalars[i + 1].to<int64_t>()};
}

// Columns of input x (grad == nullptr), or the fold of *grad (columns) back
// into x's shape, in PyTorch's order of kernel offsets.
Expected unfold_reference(const Sample& s, const std::vector<double>* cols) {
  const Tensor& x = s.inputs[0];
  const bool batched = x.dim() == 4;
  const Tensor x4 = batched ? x : x.unsqueeze(0);
  const std::vector<double> v = values_of(x4);
  const int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  const Shape k = pair_of(s, 0), d = pair_of(s, 2), p = pair_of(s, 4), st = pair_of(s, 6);
  const int64_t OH = (H + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) / st[0] + 1;
  const int64_t OW = (W + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / st[1] + 1;
  Shape cs = {N, C * k[0] * k[1], OH * OW};
  if (!batched) cs.erase(cs.begin());
  Expected out{cs, x.dtype(), {}};
  std::vector<double> folded(v.size(), 0.0);
  size_t at = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < k[0]; ++i)
        for (int64_t j = 0; j < k[1]; ++j)
          for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox, ++at) {
              const int64_t y = oy * st[0] - p[0] + i * d[0], xx = ox * st[1] - p[1] + j * d[1];
              const bool inside = y >= 0 && y < H && xx >= 0 && xx < W;
              const size_t src = static_cast<size_t>(((n * C + c) * H + y) * W + xx);
              out.values.push_back(inside ? v[src] : 0.0);
              if (cols && inside) folded[src] += (*cols)[at];
            }
  if (!cols) return out;
  for (double& f : folded) f = round_to_dtype(f, x.dtype());
  return Expected{x.sizes(), x.dtype(), folded};
}

// -- masked_scatter: inputs self, mask, source.
std::vector<Sample> masked_scatter_samples(DType t) {
  uint64_t seed = 701;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  auto mask = [&](const Shape& s) { return make_input(s, DType::kBool, seed++); };
  return {
      sample_of("[5, 7], source [40]", {in({5, 7}), mask({5, 7}), in({40})}),
      sample_of("mask broadcast [7] over [5, 7], source [6, 7]", {in({5, 7}), mask({7}), in({6, 7})}),
      sample_of("self broadcast [1, 7] with mask [4, 7]", {in({1, 7}), mask({4, 7}), in({28})}),
      sample_of("transposed self", {in({7, 5}).t(), mask({5, 7}), in({35})}),
      sample_of("0-d", {in({}), mask({}), in({2})}),
      sample_of("zero-size", {in({0, 3}), mask({0, 3}), in({0})}),
      sample_of("larger [512, 1000]", {in({512, 1000}), mask({512, 1000}), in({512000})}),
  };
}

Expected masked_scatter_reference(const Sample& s) {
  const Tensor& self = s.inputs[0];
  const Tensor& mask = s.inputs[1];
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes(), "reference");
  const std::vector<double> v = values_of(self.expand(shape)), m = values_of(mask.expand(shape));
  const std::vector<double> src = values_of(s.inputs[2]);
  Expected e{shape, self.dtype(), v};
  size_t next = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (m[i] != 0) e.values[i] = src[next++];
  }
  return e;
}

// -- Tensor.unfold's backward. inputs: grad; dims: input sizes; scalars:
// {dim, size, step}.
Sample unfold_backward_sample(std::string description, DType t, uint64_t seed,
                              const Shape& input, int64_t dim, int64_t size, int64_t step) {
  Shape g = input;
  if (!g.empty()) {
    g[dim] = (input[dim] - size) / step + 1;
  }
  g.push_back(size);
  return sample_of(std::move(description), {make_input(g, t, seed, -5, 5)}, input,
                   {dim, size, step});
}

std::vector<Sample> unfold_backward_samples(DType t) {
  return {
      unfold_backward_sample("[5, 9] dim 1 size 3 step 2", t, 801, {5, 9}, 1, 3, 2),
      unfold_backward_sample("[10] size 2 step 3 (gaps)", t, 802, {10}, 0, 2, 3),
      unfold_backward_sample("[4, 7, 3] dim 1 size 4 step 1", t, 803, {4, 7, 3}, 1, 4, 1),
      unfold_backward_sample("0-d", t, 804, {}, 0, 1, 1),
  };
}

Expected unfold_backward_reference(const Sample& s) {
  const Shape& input = s.dims;
  const Nd g(s.inputs[0]);
  Expected e{input, s.inputs[0].dtype(), std::vector<double>(static_cast<size_t>(numel_of(input)), 0.0)};
  if (input.empty()) {
    e.values[0] = g.v[0];
    return e;
  }
  const int64_t dim = s.scalars[0].to<int64_t>(), step = s.scalars[2].to<int64_t>();
  Nd out(zeros(input, TensorOptions(DType::kF64, host_device())));
  for_each_coord(g.shape, [&](const Shape& c) {
    Shape at(c.begin(), c.end() - 1);
    at[dim] = c[dim] * step + c.back();
    out.at(at) += g.at(c);
  });
  for (size_t i = 0; i < out.v.size(); ++i) e.values[i] = round_to_dtype(out.v[i], e.dtype);
  return e;
}

}  // namespace

TESSERA_CONFORMANCE_OP("unfold_backward") {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = unfold_backward_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{unfold_backward(in[0], s.dims, s.scalars[0].to<int64_t>(),
                                               s.scalars[1].to<int64_t>(), s.scalars[2].to<int64_t>())};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{unfold_backward_reference(s)}; };
  c.tolerance = resample_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("upsample_nearest2d") { return upsample_case(false, false); }
TESSERA_CONFORMANCE_OP("upsample_nearest2d_backward") { return upsample_case(false, true); }
TESSERA_CONFORMANCE_OP("upsample_bilinear2d") { return upsample_case(true, false); }
TESSERA_CONFORMANCE_OP("upsample_bilinear2d_backward") { return upsample_case(true, true); }

TESSERA_CONFORMANCE_OP("im2col") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = unfold_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{im2col(in[0], pair_of(s, 0), pair_of(s, 2), pair_of(s, 4), pair_of(s, 6))};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{unfold_reference(s, nullptr)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("col2im") {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = unfold_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    // The columns of the input itself, folded back.
    const Tensor cols = im2col(in[0], pair_of(s, 0), pair_of(s, 2), pair_of(s, 4), pair_of(s, 6));
    const Shape hw = {in[0].size(-2), in[0].size(-1)};
    return std::vector<Tensor>{col2im(cols, hw, pair_of(s, 0), pair_of(s, 2), pair_of(s, 4), pair_of(s, 6))};
  };
  c.reference = [](const Sample& s) {
    const Expected cols = unfold_reference(s, nullptr);
    return std::vector<Expected>{unfold_reference(s, &cols.values)};
  };
  c.tolerance = resample_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("masked_scatter") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = masked_scatter_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{masked_scatter(in[0], in[1], in[2])};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{masked_scatter_reference(s)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("masked_scatter_ in place") {
  OpCase c;
  c.dtypes = {DType::kI64, DType::kF32};
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : masked_scatter_samples(t)) {
      if (broadcast_shapes(s.inputs[0].sizes(), s.inputs[1].sizes(), "sample") == s.inputs[0].sizes()) {
        out.push_back(std::move(s));
      }
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    Tensor self = in[0].clone();
    masked_scatter_(self, in[1], in[2]);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{masked_scatter_reference(s)}; };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("resample and masked_scatter") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  auto mask = [](Device d, const Shape& s) { return ones(s, TensorOptions(DType::kBool, d)); };
  return std::vector<ErrorCase>{
      {"upsample of a 3-D input", [f32](Device d) { upsample_nearest2d(f32(d, {2, 3, 3}), {4, 4}); },
       ErrorKind::kValue, {"upsample_nearest2d", "4-D"}},
      {"upsample to an empty size", [f32](Device d) { upsample_bilinear2d(f32(d, {1, 1, 3, 3}), {0, 4}, false); },
       ErrorKind::kValue, {"upsample_bilinear2d", "greater than 0"}},
      {"bilinear of integers",
       [](Device d) { upsample_bilinear2d(ones({1, 1, 2, 2}, TensorOptions(DType::kI64, d)), {4, 4}, false); },
       ErrorKind::kType, {"upsample_bilinear2d", "int64"}},
      {"im2col kernel larger than the input", [f32](Device d) { im2col(f32(d, {1, 1, 2, 2}), {3, 3}); },
       ErrorKind::kValue, {"im2col", "at least one"}},
      {"col2im columns not a multiple of the kernel",
       [f32](Device d) { col2im(f32(d, {1, 5, 4}), {3, 3}, {2, 2}); }, ErrorKind::kValue,
       {"col2im", "divisible"}},
      {"col2im wrong number of blocks", [f32](Device d) { col2im(f32(d, {1, 4, 5}), {3, 3}, {2, 2}); },
       ErrorKind::kValue, {"col2im", "sliding blocks"}},
      {"masked_scatter short source",
       [f32, mask](Device d) { masked_scatter(f32(d, {2, 3}), mask(d, {2, 3}), f32(d, {5})); },
       ErrorKind::kValue, {"masked_scatter", "source", "5 < 6"}},
      {"masked_scatter integer mask",
       [f32](Device d) { masked_scatter(f32(d, {3}), ones({3}, TensorOptions(DType::kI32, d)), f32(d, {3})); },
       ErrorKind::kType, {"masked_scatter", "boolean"}},
      {"masked_scatter source of another dtype",
       [f32, mask](Device d) { masked_scatter(f32(d, {3}), mask(d, {3}), ones({3}, TensorOptions(DType::kF64, d))); },
       ErrorKind::kType, {"masked_scatter", "float32", "float64"}},
      {"masked_scatter_ mask larger than self",
       [f32, mask](Device d) { Tensor t = f32(d, {2, 1}); masked_scatter_(t, mask(d, {3}), f32(d, {6})); },
       ErrorKind::kValue, {"masked_scatter_", "[3]", "[2, 1]"}},
  };
}

}  // namespace tessera::conformance
