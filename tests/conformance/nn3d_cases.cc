// conv3d, max_pool3d and avg_pool3d (with their backward): op cases
// against naive double references written from the ops' definitions
// (PyTorch semantics), and error cases. The adaptive poolings are in
// adaptive_pool_cases.cc; the pooling reference both use is in
// pooling_cases.h.
#include <array>
#include <cmath>
#include <optional>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pooling_cases.h"

namespace tessera::conformance {
namespace {

// -- conv3d. scalars: stride (d h w), padding (d h w), dilation (d h w),
// groups; flag: no bias; dims: conv3d_backward's output_mask (empty: all).
// inputs: input, weight, bias (the backward: grad_output in its place).
struct Conv3dArgs {
  Shape stride, padding, dilation;
  int64_t groups;
};

Conv3dArgs conv3d_args(const Sample& s) {
  auto v = [&](size_t i) { return s.scalars[i].to<int64_t>(); };
  return {{v(0), v(1), v(2)}, {v(3), v(4), v(5)}, {v(6), v(7), v(8)}, v(9)};
}

Sample conv3d_sample(std::string description, std::vector<Tensor> inputs, const Conv3dArgs& a,
                     bool no_bias = false) {
  std::vector<Scalar> scalars;
  for (const Shape* s : {&a.stride, &a.padding, &a.dilation})
    for (int64_t v : *s) scalars.push_back(v);
  scalars.push_back(a.groups);
  return sample_of(std::move(description), std::move(inputs), {}, std::move(scalars), no_bias);
}

// x [N, C, D, H, W] (an unbatched input as N = 1), weight [OC, C/groups, KD,
// KH, KW]: the output sizes.
Shape conv3d_out_sizes(const Shape& x, const Shape& w, const Conv3dArgs& a) {
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i < 3; ++i) {
    out.push_back((x[2 + i] + 2 * a.padding[i] - a.dilation[i] * (w[2 + i] - 1) - 1) / a.stride[i] + 1);
  }
  return out;
}

// Calls f(out_flat, input_flat, weight_flat) for every tap of the direct
// convolution sum that lands in the input (not in the padding).
template <typename F>
void for_each_conv3d_tap(const Shape& x, const Shape& w, const Conv3dArgs& a, F&& f) {
  const Shape o = conv3d_out_sizes(x, w, a);
  const int64_t icg = w[1], ocg = w[0] / a.groups;
  for (int64_t n = 0; n < o[0]; ++n)
    for (int64_t oc = 0; oc < o[1]; ++oc)
      for (int64_t od = 0; od < o[2]; ++od)
        for (int64_t oh = 0; oh < o[3]; ++oh)
          for (int64_t ow = 0; ow < o[4]; ++ow) {
            const int64_t out_flat = (((n * o[1] + oc) * o[2] + od) * o[3] + oh) * o[4] + ow;
            for (int64_t ic = 0; ic < icg; ++ic) {
              const int64_t c = (oc / ocg) * icg + ic;
              for (int64_t kd = 0; kd < w[2]; ++kd) {
                const int64_t id = od * a.stride[0] - a.padding[0] + kd * a.dilation[0];
                if (id < 0 || id >= x[2]) continue;
                for (int64_t kh = 0; kh < w[3]; ++kh) {
                  const int64_t ih = oh * a.stride[1] - a.padding[1] + kh * a.dilation[1];
                  if (ih < 0 || ih >= x[3]) continue;
                  for (int64_t kw = 0; kw < w[4]; ++kw) {
                    const int64_t iw = ow * a.stride[2] - a.padding[2] + kw * a.dilation[2];
                    if (iw < 0 || iw >= x[4]) continue;
                    f(out_flat, (((n * x[1] + c) * x[2] + id) * x[3] + ih) * x[4] + iw,
                      (((oc * icg + ic) * w[2] + kd) * w[3] + kh) * w[4] + kw);
                  }
                }
              }
            }
          }
}

Shape batched_sizes(const Tensor& x) {
  Shape s = x.sizes();
  if (x.dim() == 4) s.insert(s.begin(), 1);
  return s;
}

std::vector<Sample> conv3d_samples(DType t) {
  uint64_t seed = 401;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
  std::vector<Sample> out;
  out.push_back(conv3d_sample("basic [2, 3, 4, 5, 5] x [4, 3, 2, 3, 3]",
                              {in({2, 3, 4, 5, 5}), in({4, 3, 2, 3, 3}), in({4})},
                              {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}));
  out.push_back(conv3d_sample("stride (2, 1, 3), padding (1, 0, 2), dilation (1, 2, 1)",
                              {in({1, 2, 6, 7, 8}), in({3, 2, 3, 2, 3}), in({3})},
                              {{2, 1, 3}, {1, 0, 2}, {1, 2, 1}, 1}));
  out.push_back(conv3d_sample("depth dilation 2, padding (2, 1, 0), stride (1, 2, 1)",
                              {in({1, 2, 7, 5, 5}), in({2, 2, 3, 2, 2}), in({2})},
                              {{1, 2, 1}, {2, 1, 0}, {2, 1, 2}, 1}));
  out.push_back(conv3d_sample("groups 2, no bias", {in({2, 4, 3, 4, 4}), in({6, 2, 2, 3, 2}), in({6})},
                              {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2}, true));
  out.push_back(conv3d_sample("depthwise", {in({1, 3, 4, 5, 5}), in({3, 1, 3, 3, 3}), in({3})},
                              {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 3}));
  out.push_back(conv3d_sample("transposed input, weight and strided bias",
                              {in({2, 3, 4, 6, 5}).transpose(3, 4), in({3, 2, 2, 2, 2}).transpose(0, 1),
                               in({4}).slice(0, 0, std::nullopt, 2)},
                              {{1, 1, 1}, {0, 1, 0}, {1, 1, 1}, 1}));
  out.push_back(conv3d_sample("input sliced with step 2 in depth",
                              {in({1, 2, 9, 5, 5}).slice(2, 1, std::nullopt, 2), in({2, 2, 2, 2, 2}), in({2})},
                              {{1, 1, 1}, {1, 0, 0}, {1, 1, 1}, 1}));
  out.push_back(conv3d_sample("zero-size batch", {in({0, 3, 3, 4, 4}), in({2, 3, 2, 2, 2}), in({2})},
                              {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}));
  out.push_back(conv3d_sample("unbatched [2, 4, 5, 5]", {in({2, 4, 5, 5}), in({3, 2, 3, 3, 3}), in({3})},
                              {{1, 2, 1}, {1, 1, 1}, {1, 1, 1}, 1}));
  if (t == DType::kF32) {
    out.push_back(conv3d_sample("[1, 8, 6, 12, 12] x [16, 8, 3, 3, 3]",
                                {in({1, 8, 6, 12, 12}), in({16, 8, 3, 3, 3}), in({16})},
                                {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}));
  }
  return out;
}

Tolerance conv3d_tolerance(DType t, const Sample& s) {
  Tolerance d = default_tolerance(t);
  const Tensor& w = s.inputs[1];
  const double k = static_cast<double>(w.size(1) * w.size(2) * w.size(3) * w.size(4));
  return {d.rtol, d.atol + d.rtol * k};
}

std::array<bool, 3> output_mask_of(const Sample& s) {
  if (s.dims.empty()) return {true, true, true};
  return {s.dims[0] != 0, s.dims[1] != 0, s.dims[2] != 0};
}

// -- max_pool3d and avg_pool3d. scalars: kernel (d h w), stride (d h w),
// padding (d h w), dilation (d h w), count_include_pad, divisor_override
// (0: none); flag: ceil_mode. inputs: input, [grad_output].
struct Pool3dArgs {
  Shape kernel, stride, padding, dilation = {1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor = 0;
};

Pool3dArgs pool3d_args(const Sample& s) {
  auto v = [&](size_t i) { return s.scalars[i].to<int64_t>(); };
  return {{v(0), v(1), v(2)}, {v(3), v(4), v(5)}, {v(6), v(7), v(8)}, {v(9), v(10), v(11)},
          v(12) != 0, v(13)};
}

Sample pool3d_sample(std::string description, Tensor input, const Pool3dArgs& a,
                     bool ceil_mode = false) {
  std::vector<Scalar> scalars;
  for (const Shape* s : {&a.kernel, &a.stride, &a.padding, &a.dilation})
    for (int64_t v : *s) scalars.push_back(v);
  scalars.push_back(static_cast<int64_t>(a.count_include_pad));
  scalars.push_back(a.divisor);
  return sample_of(std::move(description), {std::move(input)}, {}, std::move(scalars), ceil_mode);
}

std::vector<PoolDim> pool3d_windows(const Sample& s) {
  const Pool3dArgs a = pool3d_args(s);
  const Tensor& x = s.inputs[0];
  std::vector<PoolDim> dims;
  for (int64_t i = 0; i < 3; ++i) {
    dims.push_back(sliding_windows(x.size(x.dim() - 3 + i), a.kernel[i], a.stride[i], a.padding[i],
                                   a.dilation[i], s.flag));
  }
  return dims;
}

PoolResult pool3d_reference(const Sample& s, PoolKind kind, const std::vector<double>* grad) {
  const Pool3dArgs a = pool3d_args(s);
  return pool_reference(s.inputs[0], pool3d_windows(s), kind, a.count_include_pad, a.divisor, grad);
}

std::vector<Sample> max_pool3d_samples(DType t) {
  uint64_t seed = 501;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -50, 50); };
  // Values in {-1, 0, 1}: most windows hold their maximum more than once.
  auto ties = [&](const Shape& s) { return make_input(s, DType::kI64, seed++, -1, 1).to(t); };
  return {
      pool3d_sample("2x2x2 stride 2", in({2, 3, 4, 6, 6}), {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}}),
      pool3d_sample("kernel (3, 2, 3), stride (1, 2, 2), padding (1, 0, 1)", in({1, 2, 5, 6, 7}),
                    {{3, 2, 3}, {1, 2, 2}, {1, 0, 1}}),
      pool3d_sample("dilation (2, 1, 2), padding (1, 1, 2)", in({1, 2, 7, 5, 9}),
                    {{2, 3, 3}, {1, 2, 2}, {1, 1, 2}, {2, 1, 2}}),
      pool3d_sample("ceil_mode", in({1, 2, 4, 6, 7}), {{3, 3, 2}, {2, 2, 2}, {1, 1, 0}}, true),
      pool3d_sample("unbatched, transposed", in({3, 4, 6, 5}).transpose(2, 3), {{2, 2, 2}, {1, 2, 2}, {0, 0, 0}}),
      pool3d_sample("input sliced with step 2 in depth", in({1, 2, 9, 5, 5}).slice(2, 0, std::nullopt, 2),
                    {{2, 2, 2}, {1, 1, 1}, {1, 0, 1}}),
      pool3d_sample("zero-size batch", in({0, 2, 3, 4, 4}), {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}}),
      pool3d_sample("ties, 3x3x3 stride 1 padding 1", ties({1, 2, 4, 5, 5}), {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}}),
      pool3d_sample("ties, ceil_mode and dilation 2 in depth", ties({2, 1, 6, 4, 5}),
                    {{2, 2, 3}, {2, 1, 2}, {1, 1, 1}, {2, 1, 1}}, true),
  };
}

std::vector<Sample> avg_pool3d_samples(DType t) {
  uint64_t seed = 601;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -50, 50); };
  Pool3dArgs exclude = {{3, 2, 3}, {1, 2, 2}, {1, 1, 1}};
  exclude.count_include_pad = false;
  // ceil_mode adds a last window that the padded input clips, in each dim.
  Pool3dArgs ceil_include = {{3, 3, 2}, {2, 2, 2}, {1, 1, 0}};
  Pool3dArgs ceil_exclude = ceil_include;
  ceil_exclude.count_include_pad = false;
  Pool3dArgs divisor = {{2, 3, 2}, {2, 1, 2}, {1, 1, 1}};
  divisor.divisor = 7;
  Pool3dArgs divisor_exclude = divisor;
  divisor_exclude.count_include_pad = false;
  return {
      pool3d_sample("2x2x2 stride 2", in({2, 3, 4, 6, 6}), {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}}),
      pool3d_sample("kernel (3, 2, 3), stride (1, 2, 2), padding 1, count_include_pad",
                    in({1, 2, 5, 6, 7}), {{3, 2, 3}, {1, 2, 2}, {1, 1, 1}}),
      pool3d_sample("kernel (3, 2, 3), stride (1, 2, 2), padding 1, exclude pad", in({1, 2, 5, 6, 7}), exclude),
      pool3d_sample("ceil_mode, count_include_pad", in({1, 2, 4, 6, 7}), ceil_include, true),
      pool3d_sample("ceil_mode, exclude pad", in({1, 2, 4, 6, 7}), ceil_exclude, true),
      pool3d_sample("divisor_override 7", in({1, 2, 4, 5, 6}), divisor),
      pool3d_sample("divisor_override 7, exclude pad, ceil_mode", in({1, 2, 4, 5, 6}), divisor_exclude, true),
      pool3d_sample("unbatched, transposed", in({3, 4, 6, 5}).transpose(2, 3), {{2, 2, 2}, {1, 2, 2}, {0, 0, 0}}),
      pool3d_sample("input sliced with step 2 in depth", in({1, 2, 9, 5, 5}).slice(2, 0, std::nullopt, 2),
                    {{2, 2, 2}, {1, 1, 1}, {1, 0, 1}}),
      pool3d_sample("zero-size batch", in({0, 2, 3, 4, 4}), {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}}),
  };
}

std::optional<int64_t> divisor_of(const Pool3dArgs& a) {
  return a.divisor ? std::optional<int64_t>(a.divisor) : std::nullopt;
}

Tensor run_avg_pool3d(const Tensor& x, const Sample& s) {
  const Pool3dArgs a = pool3d_args(s);
  return avg_pool3d(x, a.kernel, a.stride, a.padding, s.flag, a.count_include_pad, divisor_of(a));
}

Tolerance avg_tolerance(DType t, const Sample&) {
  Tolerance d = default_tolerance(t);
  return {d.rtol * 4, d.atol * 10};
}

}  // namespace

TESSERA_CONFORMANCE_OP("conv3d") {
  OpCase c;
  c.dtypes = numeric_dtypes();  // integers too, as conv2d's (PyTorch's CPU)
  c.samples = conv3d_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Conv3dArgs a = conv3d_args(s);
    return std::vector<Tensor>{
        conv3d(in[0], in[1], s.flag ? Tensor() : in[2], a.stride, a.padding, a.dilation, a.groups)};
  };
  c.reference = [](const Sample& s) {
    const Conv3dArgs a = conv3d_args(s);
    const Tensor &x = s.inputs[0], &w = s.inputs[1];
    const std::vector<double> xv = values_of(x), wv = values_of(w), bv = values_of(s.inputs[2]);
    const Shape xs = batched_sizes(x), os = conv3d_out_sizes(xs, w.sizes(), a);
    const int64_t volume = os[2] * os[3] * os[4];
    std::vector<double> out(static_cast<size_t>(numel_of(os)));
    for (size_t i = 0; i < out.size(); ++i) out[i] = s.flag ? 0.0 : bv[(i / volume) % os[1]];
    for_each_conv3d_tap(xs, w.sizes(), a, [&](int64_t o, int64_t xi, int64_t wi) { out[o] += xv[xi] * wv[wi]; });
    for (double& v : out) v = round_to_dtype(v, x.dtype());
    return std::vector<Expected>{{x.dim() == 5 ? os : Shape(os.begin() + 1, os.end()), x.dtype(), out}};
  };
  c.tolerance = conv3d_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("conv3d_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    uint64_t seed = 451;
    for (Sample s : conv3d_samples(t)) {
      if (s.inputs[0].dim() != 5) continue;  // the backward takes batched inputs only
      const Shape os = conv3d_out_sizes(s.inputs[0].sizes(), s.inputs[1].sizes(), conv3d_args(s));
      s.inputs[2] = make_input(os, t, seed++, -1, 1);  // grad_output in place of bias
      out.push_back(std::move(s));
    }
    // Partial output_masks on the strided, padded, dilated sample: without
    // grad_weight the folded input is never built.
    for (const Shape& mask : {Shape{1, 0, 0}, Shape{0, 1, 1}}) {
      Sample masked = out[1];
      masked.description += ", output_mask " + shape_to_string(mask);
      masked.dims = mask;
      out.push_back(std::move(masked));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Conv3dArgs a = conv3d_args(s);
    auto [gi, gw, gb] =
        conv3d_backward(in[2], in[0], in[1], a.stride, a.padding, a.dilation, a.groups, output_mask_of(s));
    std::vector<Tensor> out;
    for (const Tensor& g : {gi, gw, gb})
      if (g.defined()) out.push_back(g);
    return out;
  };
  c.reference = [](const Sample& s) {
    const Conv3dArgs a = conv3d_args(s);
    const Tensor &x = s.inputs[0], &w = s.inputs[1], &g = s.inputs[2];
    const std::vector<double> xv = values_of(x), wv = values_of(w), gv = values_of(g);
    // The adjoint of the forward sum: each tap out += x * w sends g[out] * w
    // to x and g[out] * x to w; the bias gets every g of its channel.
    std::vector<double> gi(xv.size(), 0.0), gw(wv.size(), 0.0), gb(static_cast<size_t>(w.size(0)), 0.0);
    const int64_t volume = g.size(2) * g.size(3) * g.size(4);
    for (size_t i = 0; i < gv.size(); ++i) gb[(i / volume) % g.size(1)] += gv[i];
    for_each_conv3d_tap(x.sizes(), w.sizes(), a, [&](int64_t o, int64_t xi, int64_t wi) {
      gi[xi] += gv[o] * wv[wi];
      gw[wi] += gv[o] * xv[xi];
    });
    const std::array<bool, 3> mask = output_mask_of(s);
    std::vector<Expected> out;
    const std::pair<Shape, std::vector<double>*> grads[] = {{x.sizes(), &gi}, {w.sizes(), &gw}, {{w.size(0)}, &gb}};
    for (size_t k = 0; k < 3; ++k) {
      if (!mask[k]) continue;
      for (double& v : *grads[k].second) v = round_to_dtype(v, x.dtype());
      out.push_back({grads[k].first, x.dtype(), *grads[k].second});
    }
    return out;
  };
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance d = default_tolerance(t);
    // grad_weight and grad_bias sum over the batch and the output volume,
    // grad_input over the output channels of a group and the kernel.
    const Tensor &w = s.inputs[1], &g = s.inputs[2];
    const double per_channel = static_cast<double>(g.numel() / std::max<int64_t>(g.size(1), 1));
    const double per_input = static_cast<double>(w.numel() / std::max<int64_t>(w.size(1), 1));
    return Tolerance{d.rtol, d.atol + d.rtol * (per_channel + per_input)};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("max_pool3d_with_indices") {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = max_pool3d_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Pool3dArgs a = pool3d_args(s);
    auto [values, indices] = max_pool3d_with_indices(in[0], a.kernel, a.stride, a.padding, a.dilation, s.flag);
    return std::vector<Tensor>{values, indices};
  };
  c.reference = [](const Sample& s) {
    const PoolResult r = pool3d_reference(s, PoolKind::kMax, nullptr);
    return std::vector<Expected>{r.values, r.indices};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("max_pool3d_with_indices_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    return with_grad_outputs(max_pool3d_samples(t), t, [](const Sample& s) {
      return pool3d_reference(s, PoolKind::kMax, nullptr).values.sizes;
    });
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Pool3dArgs a = pool3d_args(s);
    auto [values, indices] = max_pool3d_with_indices(in[0], a.kernel, a.stride, a.padding, a.dilation, s.flag);
    return std::vector<Tensor>{max_pool3d_with_indices_backward(in[1], in[0], indices)};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> g = values_of(s.inputs[1]);
    return std::vector<Expected>{pool3d_reference(s, PoolKind::kMax, &g).grad_input};
  };
  c.tolerance = avg_tolerance;  // overlapping windows add gradients
  return c;
}

TESSERA_CONFORMANCE_OP("avg_pool3d") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = avg_pool3d_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{run_avg_pool3d(in[0], s)};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{pool3d_reference(s, PoolKind::kAvg, nullptr).values};
  };
  c.tolerance = avg_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("avg_pool3d_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    return with_grad_outputs(avg_pool3d_samples(t), t, [](const Sample& s) {
      return pool3d_reference(s, PoolKind::kAvg, nullptr).values.sizes;
    });
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Pool3dArgs a = pool3d_args(s);
    return std::vector<Tensor>{avg_pool3d_backward(in[1], in[0], a.kernel, a.stride, a.padding, s.flag,
                                                   a.count_include_pad, divisor_of(a))};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> g = values_of(s.inputs[1]);
    return std::vector<Expected>{pool3d_reference(s, PoolKind::kAvg, &g).grad_input};
  };
  c.tolerance = avg_tolerance;
  return c;
}

TESSERA_CONFORMANCE_ERRORS("conv3d") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"channel mismatch", [f32](Device d) { conv3d(f32(d, {1, 2, 4, 4, 4}), f32(d, {4, 3, 2, 2, 2})); },
       ErrorKind::kValue, {"conv3d", "[4, 3, 2, 2, 2]", "[1, 2, 4, 4, 4]", "3 channels"}},
      {"3-D input", [f32](Device d) { conv3d(f32(d, {4, 4, 4}), f32(d, {1, 1, 2, 2, 2})); }, ErrorKind::kValue,
       {"conv3d", "4D (unbatched) or 5D", "[4, 4, 4]"}},
      {"4-D weight", [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), f32(d, {1, 1, 2, 2})); }, ErrorKind::kValue,
       {"conv3d", "5-D weight", "[1, 1, 2, 2]"}},
      {"kernel larger than padded input",
       [f32](Device d) { conv3d(f32(d, {1, 1, 2, 4, 4}), f32(d, {1, 1, 3, 3, 3})); }, ErrorKind::kValue,
       {"conv3d", "kernel size", "[1, 1, 2, 4, 4]", "[1, 1, 3, 3, 3]"}},
      {"zero stride",
       [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), f32(d, {1, 1, 2, 2, 2}), {}, {1, 0, 1}); },
       ErrorKind::kValue, {"conv3d", "stride", "[1, 0, 1]"}},
      {"stride of two entries",
       [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), f32(d, {1, 1, 2, 2, 2}), {}, {2, 2}); },
       ErrorKind::kValue, {"conv3d", "stride", "[2, 2]"}},
      {"negative padding",
       [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), f32(d, {1, 1, 2, 2, 2}), {}, {1}, {0, -1, 0}); },
       ErrorKind::kValue, {"conv3d", "padding", "[0, -1, 0]"}},
      {"groups do not divide out channels",
       [f32](Device d) { conv3d(f32(d, {1, 4, 3, 3, 3}), f32(d, {3, 2, 1, 1, 1}), {}, {1}, {0}, {1}, 2); },
       ErrorKind::kValue, {"conv3d", "groups=2", "[3, 2, 1, 1, 1]"}},
      {"bias of the wrong size",
       [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), f32(d, {2, 1, 2, 2, 2}), f32(d, {3})); },
       ErrorKind::kValue, {"conv3d", "bias", "[3]"}},
      {"dtype mismatch",
       [f32](Device d) { conv3d(f32(d, {1, 1, 4, 4, 4}), ones({1, 1, 2, 2, 2}, TensorOptions(DType::kF64, d))); },
       ErrorKind::kType, {"conv3d", "float32", "float64"}},
      {"bool input",
       [](Device d) {
         TensorOptions o(DType::kBool, d);
         conv3d(ones({1, 1, 4, 4, 4}, o), ones({1, 1, 2, 2, 2}, o));
       },
       ErrorKind::kType, {"conv3d", "bool"}},
      {"backward grad_output of the wrong size",
       [f32](Device d) {
         conv3d_backward(f32(d, {1, 2, 2, 2, 2}), f32(d, {1, 1, 4, 4, 4}), f32(d, {2, 1, 2, 2, 2}), {1}, {0}, {1}, 1);
       },
       ErrorKind::kValue, {"conv3d_backward", "[1, 2, 3, 3, 3]", "[1, 2, 2, 2, 2]"}},
      {"backward of an unbatched input",
       [f32](Device d) {
         conv3d_backward(f32(d, {2, 3, 3, 3}), f32(d, {1, 4, 4, 4}), f32(d, {2, 1, 2, 2, 2}), {1}, {0}, {1}, 1);
       },
       ErrorKind::kValue, {"conv3d_backward", "5-D", "[1, 4, 4, 4]"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("max_pool3d and avg_pool3d") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  auto i64 = [](Device d, const Shape& s, int64_t v) { return full(s, v, TensorOptions(DType::kI64, d)); };
  return std::vector<ErrorCase>{
      {"padding more than half the kernel",
       [f32](Device d) { max_pool3d(f32(d, {1, 1, 4, 4, 4}), {2}, {}, {0, 2, 0}); }, ErrorKind::kValue,
       {"max_pool3d", "pad should be at most half", "[0, 2, 0]"}},
      {"output too small", [f32](Device d) { max_pool3d(f32(d, {1, 1, 2, 4, 4}), {3}); }, ErrorKind::kValue,
       {"max_pool3d", "[1, 1, 2, 4, 4]", "too small"}},
      {"bool input", [](Device d) { max_pool3d(ones({1, 1, 4, 4, 4}, TensorOptions(DType::kBool, d)), {2}); },
       ErrorKind::kType, {"max_pool3d", "bool"}},
      {"3-D input", [f32](Device d) { max_pool3d(f32(d, {4, 4, 4}), {2}); }, ErrorKind::kValue,
       {"max_pool3d", "4D or 5D", "[4, 4, 4]"}},
      {"kernel of two entries", [f32](Device d) { max_pool3d(f32(d, {1, 1, 4, 4, 4}), {2, 2}); },
       ErrorKind::kValue, {"max_pool3d", "kernel_size", "[2, 2]"}},
      {"zero stride", [f32](Device d) { max_pool3d(f32(d, {1, 1, 4, 4, 4}), {2}, {2, 0, 2}); },
       ErrorKind::kValue, {"max_pool3d", "stride", "[2, 0, 2]"}},
      {"zero-size channel", [f32](Device d) { max_pool3d(f32(d, {1, 0, 4, 4, 4}), {2}); }, ErrorKind::kValue,
       {"max_pool3d", "[1, 0, 4, 4, 4]"}},
      {"backward index past the volume",
       [f32, i64](Device d) {
         max_pool3d_with_indices_backward(f32(d, {1, 1, 2, 2, 2}), f32(d, {1, 1, 4, 4, 4}), i64(d, {1, 1, 2, 2, 2}, 64));
       },
       ErrorKind::kIndex, {"max_pool3d_with_indices_backward", "64"}},
      {"negative backward index",
       [f32, i64](Device d) {
         max_pool3d_with_indices_backward(f32(d, {1, 1, 2, 2, 2}), f32(d, {1, 1, 4, 4, 4}), i64(d, {1, 1, 2, 2, 2}, -1));
       },
       ErrorKind::kIndex, {"max_pool3d_with_indices_backward", "-1"}},
      {"backward grad_output and indices of other sizes",
       [f32, i64](Device d) {
         max_pool3d_with_indices_backward(f32(d, {1, 1, 2, 2, 2}), f32(d, {1, 1, 4, 4, 4}), i64(d, {1, 1, 2, 2, 1}, 0));
       },
       ErrorKind::kValue, {"max_pool3d_with_indices_backward", "[1, 1, 2, 2, 2]", "[1, 1, 2, 2, 1]"}},
      {"avg_pool3d divisor_override 0",
       [f32](Device d) { avg_pool3d(f32(d, {1, 1, 4, 4, 4}), {2}, {}, {0}, false, true, 0); }, ErrorKind::kValue,
       {"avg_pool3d", "divisor"}},
      {"avg_pool3d int64 input", [i64](Device d) { avg_pool3d(i64(d, {1, 1, 4, 4, 4}, 1), {2}); },
       ErrorKind::kType, {"avg_pool3d", "floating", "int64"}},
      {"avg_pool3d padding more than half the kernel",
       [f32](Device d) { avg_pool3d(f32(d, {1, 1, 4, 4, 4}), {3, 2, 2}, {}, {1, 2, 1}); }, ErrorKind::kValue,
       {"avg_pool3d", "pad should be at most half", "[1, 2, 1]"}},
      {"avg_pool3d output too small", [f32](Device d) { avg_pool3d(f32(d, {1, 1, 4, 4, 1}), {2}); },
       ErrorKind::kValue, {"avg_pool3d", "[1, 1, 4, 4, 1]", "too small"}},
      {"avg_pool3d backward grad_output of the wrong size",
       [f32](Device d) { avg_pool3d_backward(f32(d, {1, 1, 3, 2, 2}), f32(d, {1, 1, 4, 4, 4}), {2}); },
       ErrorKind::kValue, {"avg_pool3d_backward", "[1, 1, 2, 2, 2]", "[1, 1, 3, 2, 2]"}},
  };
}

}  // namespace tessera::conformance
