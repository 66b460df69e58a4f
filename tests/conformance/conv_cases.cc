// conv2d and convolution_backward: op cases against a naive double
// reference of the convolution sum, and error cases.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

struct ConvArgs {
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

// scalars: stride h w, padding h w, dilation h w, groups.
ConvArgs conv_args(const Sample& s) {
  auto v = [&](size_t i) { return s.scalars[i].to<int64_t>(); };
  return {v(0), v(1), v(2), v(3), v(4), v(5), v(6)};
}

// Calls f(n, oc, oy, ox, ic, ky, kx, iy, ix) for every tap that lands in
// the input.
template <typename F>
Shape for_each_tap(const Shape& x, const Shape& w, const ConvArgs& a, F&& f) {
  const int64_t N = x[0], C = x[1], H = x[2], W = x[3], OC = w[0], ICg = w[1], KH = w[2], KW = w[3];
  const int64_t OH = (H + 2 * a.ph - a.dh * (KH - 1) - 1) / a.sh + 1;
  const int64_t OW = (W + 2 * a.pw - a.dw * (KW - 1) - 1) / a.sw + 1;
  (void)C;
  const int64_t OCg = OC / a.groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox)
          for (int64_t ic = 0; ic < ICg; ++ic)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t iy = oy * a.sh - a.ph + ky * a.dh, ix = ox * a.sw - a.pw + kx * a.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                f(n, oc, oy, ox, (oc / OCg) * ICg + ic, ky, kx, iy, ix);
              }
  return {N, OC, OH, OW};
}

Sample conv_sample(std::string d, std::vector<Tensor> in, ConvArgs a, bool no_bias = false) {
  Sample s;
  s.description = std::move(d);
  s.inputs = std::move(in);
  s.scalars = {a.sh, a.sw, a.ph, a.pw, a.dh, a.dw, a.groups};
  s.flag = no_bias;
  return s;
}

std::vector<Sample> conv_samples(DType t) {
  uint64_t seed = 71;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
  std::vector<Sample> out;
  out.push_back(conv_sample("basic 3x3", {in({2, 3, 7, 6}), in({4, 3, 3, 3}), in({4})}, {1, 1, 0, 0, 1, 1, 1}));
  out.push_back(conv_sample("stride 2, padding 1", {in({1, 2, 8, 9}), in({3, 2, 3, 3}), in({3})}, {2, 2, 1, 1, 1, 1, 1}));
  out.push_back(conv_sample("uneven stride and padding", {in({1, 2, 7, 8}), in({2, 2, 2, 3}), in({2})}, {3, 2, 0, 1, 1, 1, 1}));
  out.push_back(conv_sample("dilation 2", {in({1, 2, 9, 9}), in({2, 2, 3, 3}), in({2})}, {1, 1, 2, 2, 2, 2, 1}));
  out.push_back(conv_sample("groups 2, no bias", {in({2, 4, 5, 5}), in({6, 2, 3, 3}), in({6})}, {1, 1, 1, 1, 1, 1, 2}, true));
  out.push_back(conv_sample("depthwise", {in({1, 3, 6, 6}), in({3, 1, 3, 3}), in({3})}, {1, 1, 1, 1, 1, 1, 3}));
  out.push_back(conv_sample("non-contiguous input and weight",
                            {in({2, 3, 6, 7}).transpose(2, 3), in({3, 4, 3, 3}).transpose(0, 1), in({8}).slice(0, 0, std::nullopt, 2)},
                            {1, 1, 1, 1, 1, 1, 1}));
  out.push_back(conv_sample("zero-size batch", {in({0, 3, 5, 5}), in({2, 3, 3, 3}), in({2})}, {1, 1, 0, 0, 1, 1, 1}));
  out.push_back(conv_sample("1x1 kernel", {in({2, 5, 4, 4}), in({3, 5, 1, 1}), in({3})}, {1, 1, 0, 0, 1, 1, 1}));
  // Shapes for which oneDNN offers only its reference implementation in
  // the backward (the CPU then unfolds patches into GEMMs): a ViT-style
  // patch embedding with 16 output channels (K = 768 patch rows: several
  // weight-gradient tasks; with 8 channels oneDNN runs its GEMM instead),
  // and a ConvNeXt-style depthwise 7x7 whose 1600 output positions span
  // two blocks of rows.
  out.push_back(conv_sample("patch embedding 16x16 stride 16", {in({2, 3, 32, 48}), in({16, 3, 16, 16}), in({16})},
                            {16, 16, 0, 0, 1, 1, 1}));
  out.push_back(conv_sample("depthwise 7x7 padding 3 [2, 16, 40, 40]", {in({2, 16, 40, 40}), in({16, 1, 7, 7}), in({16})},
                            {1, 1, 3, 3, 1, 1, 16}));
  // wav2vec2-style positional convolution, whose forward too is reference
  // only in oneDNN: a 1-D kernel of 16 over 4 groups of 8 channels.
  out.push_back(conv_sample("grouped 1x16 kernel, 4 groups of 8, padding 8", {in({2, 32, 1, 20}), in({32, 8, 1, 16}), in({32})},
                            {1, 1, 0, 8, 1, 1, 4}));
  if (t == DType::kF32) {
    out.push_back(conv_sample("larger than L2 [4, 32, 64, 64] x [32, 32, 3, 3]",
                              {in({4, 32, 64, 64}), in({32, 32, 3, 3}), in({32})}, {1, 1, 1, 1, 1, 1, 1}));
  }
  return out;
}

Tolerance conv_tolerance(DType t, const Sample& s) {
  Tolerance d = default_tolerance(t);
  const double k = static_cast<double>(s.inputs[1].size(1) * s.inputs[1].size(2) * s.inputs[1].size(3));
  return {d.rtol, d.atol + d.rtol * k};
}

}  // namespace

TESSERA_CONFORMANCE_OP("conv2d") {
  OpCase c;
  c.dtypes = numeric_dtypes();  // integers too, as PyTorch's CPU
  c.samples = conv_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const ConvArgs a = conv_args(s);
    Tensor bias = s.flag ? Tensor() : in[2];
    return std::vector<Tensor>{conv2d(in[0], in[1], bias, {a.sh, a.sw}, {a.ph, a.pw}, {a.dh, a.dw}, a.groups)};
  };
  c.reference = [](const Sample& s) {
    const ConvArgs a = conv_args(s);
    const Tensor &x = s.inputs[0], &w = s.inputs[1];
    const std::vector<double> xv = values_of(x), wv = values_of(w), bv = values_of(s.inputs[2]);
    const Shape xs = x.sizes(), ws = w.sizes();
    Shape os = for_each_tap(xs, ws, a, [](auto...) {});
    Expected e{os, x.dtype(), std::vector<double>(static_cast<size_t>(os[0] * os[1] * os[2] * os[3]), 0.0)};
    for (int64_t i = 0; i < static_cast<int64_t>(e.values.size()); ++i) {
      e.values[i] = s.flag ? 0.0 : bv[(i / (os[2] * os[3])) % os[1]];
    }
    for_each_tap(xs, ws, a, [&](int64_t n, int64_t oc, int64_t oy, int64_t ox, int64_t c, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
      e.values[((n * os[1] + oc) * os[2] + oy) * os[3] + ox] +=
          xv[((n * xs[1] + c) * xs[2] + iy) * xs[3] + ix] * wv[((oc * ws[1] + c % ws[1]) * ws[2] + ky) * ws[3] + kx];
    });
    for (double& v : e.values) v = round_to_dtype(v, x.dtype());
    return std::vector<Expected>{e};
  };
  c.tolerance = conv_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("conv2d unbatched") {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64};
  c.samples = [](DType t) {
    return std::vector<Sample>{conv_sample("[2, 5, 5] x [3, 2, 3, 3]",
                                           {make_input({2, 5, 5}, t, 1, -1, 1), make_input({3, 2, 3, 3}, t, 2, -1, 1)},
                                           {1, 1, 1, 1, 1, 1, 1})};
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{conv2d(in[0], in[1], {}, {1, 1}, {1, 1})};
  };
  c.reference = [](const Sample& s) {
    const ConvArgs a = conv_args(s);
    const Shape xs = {1, 2, 5, 5}, ws = s.inputs[1].sizes();
    const std::vector<double> xv = values_of(s.inputs[0]), wv = values_of(s.inputs[1]);
    Expected e{{3, 5, 5}, s.inputs[0].dtype(), std::vector<double>(75, 0.0)};
    for_each_tap(xs, ws, a, [&](int64_t, int64_t oc, int64_t oy, int64_t ox, int64_t c, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
      e.values[(oc * 5 + oy) * 5 + ox] += xv[(c * 5 + iy) * 5 + ix] * wv[((oc * 2 + c) * 3 + ky) * 3 + kx];
    });
    return std::vector<Expected>{e};
  };
  c.tolerance = conv_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("convolution_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    uint64_t seed = 91;
    for (Sample s : conv_samples(t)) {
      if (s.inputs[0].numel() > 100000) continue;  // the naive backward is slow
      const ConvArgs a = conv_args(s);
      Shape os = for_each_tap(s.inputs[0].sizes(), s.inputs[1].sizes(), a, [](auto...) {});
      s.inputs[2] = make_input(os, t, seed++, -1, 1);  // grad_output in place of bias
      out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const ConvArgs a = conv_args(s);
    auto [gi, gw, gb] = convolution_backward(in[2], in[0], in[1], {a.sh, a.sw}, {a.ph, a.pw}, {a.dh, a.dw}, a.groups);
    return std::vector<Tensor>{gi, gw, gb};
  };
  c.reference = [](const Sample& s) {
    const ConvArgs a = conv_args(s);
    const Tensor &x = s.inputs[0], &w = s.inputs[1], &g = s.inputs[2];
    const std::vector<double> xv = values_of(x), wv = values_of(w), gv = values_of(g);
    const Shape xs = x.sizes(), ws = w.sizes(), gs = g.sizes();
    Expected gi{xs, x.dtype(), std::vector<double>(xv.size(), 0.0)};
    Expected gw{ws, x.dtype(), std::vector<double>(wv.size(), 0.0)};
    Expected gb{{ws[0]}, x.dtype(), std::vector<double>(static_cast<size_t>(ws[0]), 0.0)};
    for (size_t i = 0; i < gv.size(); ++i) gb.values[(i / (gs[2] * gs[3])) % gs[1]] += gv[i];
    for_each_tap(xs, ws, a, [&](int64_t n, int64_t oc, int64_t oy, int64_t ox, int64_t c, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
      const double go = gv[((n * gs[1] + oc) * gs[2] + oy) * gs[3] + ox];
      const int64_t xi = ((n * xs[1] + c) * xs[2] + iy) * xs[3] + ix;
      const int64_t wi = ((oc * ws[1] + c % ws[1]) * ws[2] + ky) * ws[3] + kx;
      gi.values[xi] += go * wv[wi];
      gw.values[wi] += go * xv[xi];
    });
    for (Expected* e : {&gi, &gw, &gb})
      for (double& v : e->values) v = round_to_dtype(v, x.dtype());
    return std::vector<Expected>{gi, gw, gb};
  };
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance d = default_tolerance(t);
    // Sums run over the batch and the output plane too.
    const double k = static_cast<double>(s.inputs[2].numel() / std::max<int64_t>(s.inputs[2].size(1), 1) + 9 * 8);
    return Tolerance{d.rtol, d.atol + d.rtol * k};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("conv2d") {
  return std::vector<ErrorCase>{
      {"channel mismatch", [](Device d) { conv2d(ones({1, 2, 5, 5}, d), ones({4, 3, 3, 3}, d)); }, ErrorKind::kValue,
       {"conv2d", "[4, 3, 3, 3]", "[1, 2, 5, 5]", "3 channels"}},
      {"2-D input", [](Device d) { conv2d(ones({5, 5}, d), ones({1, 1, 3, 3}, d)); }, ErrorKind::kValue,
       {"conv2d", "[5, 5]"}},
      {"kernel larger than padded input", [](Device d) { conv2d(ones({1, 1, 2, 2}, d), ones({1, 1, 3, 3}, d)); },
       ErrorKind::kValue, {"conv2d", "kernel size"}},
      {"groups do not divide out channels", [](Device d) { conv2d(ones({1, 4, 5, 5}, d), ones({3, 2, 3, 3}, d), {}, {1, 1}, {0, 0}, {1, 1}, 2); },
       ErrorKind::kValue, {"conv2d", "groups"}},
      {"zero stride", [](Device d) { conv2d(ones({1, 1, 5, 5}, d), ones({1, 1, 3, 3}, d), {}, {0, 1}); },
       ErrorKind::kValue, {"conv2d", "stride"}},
      {"bias of the wrong size", [](Device d) { conv2d(ones({1, 1, 5, 5}, d), ones({2, 1, 3, 3}, d), ones({3}, d)); },
       ErrorKind::kValue, {"conv2d", "bias", "[3]"}},
      {"dtype mismatch", [](Device d) { conv2d(ones({1, 1, 5, 5}, d), ones({1, 1, 3, 3}, TensorOptions(DType::kF64, d))); },
       ErrorKind::kType, {"conv2d", "float32", "float64"}},
      {"bool input", [](Device d) { TensorOptions o(DType::kBool, d); conv2d(ones({1, 1, 5, 5}, o), ones({1, 1, 3, 3}, o)); },
       ErrorKind::kType, {"conv2d", "bool"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("convolution_backward") {
  return std::vector<ErrorCase>{
      {"grad_output of the wrong size",
       [](Device d) { convolution_backward(ones({1, 2, 4, 4}, d), ones({1, 1, 5, 5}, d), ones({2, 1, 3, 3}, d), {1, 1}, {0, 0}, {1, 1}, 1); },
       ErrorKind::kValue, {"convolution_backward", "[1, 2, 3, 3]", "[1, 2, 4, 4]"}},
  };
}

}  // namespace tessera::conformance
