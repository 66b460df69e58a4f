// max_pool2d, avg_pool2d, embedding, nll_loss (with their backward) and
// scaled_dot_product_attention: op cases against naive double references,
// and error cases.
#include <cmath>
#include <limits>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Sample make_sample(std::string d, std::vector<Tensor> in, std::vector<Scalar> scalars = {}, bool flag = false) {
  Sample s;
  s.description = std::move(d);
  s.inputs = std::move(in);
  s.scalars = std::move(scalars);
  s.flag = flag;
  return s;
}

int64_t sc(const Sample& s, size_t i) { return s.scalars[i].to<int64_t>(); }

// Output length of a pooled dim, as PyTorch computes it.
int64_t pooled(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  const int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = num / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// -- max_pool2d. scalars: kh kw sh sw ph pw dh dw; flag: ceil_mode.
std::vector<Sample> max_pool_samples(DType t) {
  uint64_t seed = 101;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -50, 50); };
  // NaN is the maximum of every window it is in (PyTorch's rule).
  Tensor with_nan = make_input({1, 2, 5, 5}, DType::kF64, 199, -50, 50);
  with_nan.select(0, 0).select(0, 1).select(0, 2).select(0, 1).fill_(
      Scalar(std::numeric_limits<double>::quiet_NaN()));
  with_nan = with_nan.to(t);
  return {
      make_sample("2x2 stride 2", {in({2, 3, 6, 8})}, {2, 2, 2, 2, 0, 0, 1, 1}),
      make_sample("3x3 stride 1 padding 1", {in({1, 2, 5, 5})}, {3, 3, 1, 1, 1, 1, 1, 1}),
      make_sample("ceil_mode, uneven", {in({1, 2, 7, 6})}, {3, 2, 2, 2, 1, 0, 1, 1}, true),
      make_sample("dilation 2", {in({1, 1, 9, 9})}, {3, 3, 2, 2, 1, 1, 2, 2}),
      make_sample("unbatched, transposed", {in({3, 7, 6}).transpose(1, 2)}, {2, 2, 2, 2, 0, 0, 1, 1}),
      make_sample("zero-size batch", {in({0, 2, 4, 4})}, {2, 2, 2, 2, 0, 0, 1, 1}),
      make_sample("larger than L2 [8, 16, 64, 64]", {in({8, 16, 64, 64})}, {2, 2, 2, 2, 0, 0, 1, 1}),
      make_sample("a NaN in nine overlapping windows", {with_nan}, {3, 3, 1, 1, 1, 1, 1, 1}),
  };
}

// (values, indices) of max_pool2d, and the backward of grad (same shape).
std::vector<Expected> max_pool_reference(const Sample& s, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const bool batched = x.dim() == 4;
  Tensor x4 = batched ? x : x.unsqueeze(0);
  const std::vector<double> v = values_of(x4);
  const int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  const int64_t kh = sc(s, 0), kw = sc(s, 1), sh = sc(s, 2), sw = sc(s, 3), ph = sc(s, 4), pw = sc(s, 5),
                dh = sc(s, 6), dw = sc(s, 7);
  const int64_t OH = pooled(H, kh, ph, sh, dh, s.flag), OW = pooled(W, kw, pw, sw, dw, s.flag);
  Shape os = batched ? Shape{N, C, OH, OW} : Shape{C, OH, OW};
  Expected vals{os, x.dtype(), {}}, idx{os, DType::kI64, {}};
  Expected gin{x.sizes(), x.dtype(), std::vector<double>(v.size(), 0.0)};
  for (int64_t p = 0; p < N * C; ++p) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t bi = -1;
        for (int64_t ky = 0; ky < kh; ++ky) {
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const double a = v[(p * H + iy) * W + ix];
            if (bi < 0 || a > best || (std::isnan(a) && !std::isnan(best))) {
              best = a;
              bi = iy * W + ix;
            }
          }
        }
        vals.values.push_back(best);
        idx.values.push_back(static_cast<double>(bi));
        if (grad) gin.values[p * H * W + bi] += (*grad)[vals.values.size() - 1];
      }
    }
  }
  if (grad) {
    for (double& g : gin.values) g = round_to_dtype(g, x.dtype());
    return {gin};
  }
  return {vals, idx};
}

Shape pair(const Sample& s, size_t i) { return {sc(s, i), sc(s, i + 1)}; }

// -- avg_pool2d. scalars: kh kw sh sw ph pw count_include_pad divisor; flag: ceil_mode.
std::vector<Sample> avg_pool_samples(DType t) {
  uint64_t seed = 131;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -50, 50); };
  std::vector<Sample> out = {
      make_sample("2x2 stride 2", {in({2, 3, 6, 8})}, {2, 2, 2, 2, 0, 0, 1, 0}),
      make_sample("3x3 padding 1, count_include_pad", {in({1, 2, 5, 5})}, {3, 3, 1, 1, 1, 1, 1, 0}),
      make_sample("3x3 padding 1, exclude pad", {in({1, 2, 5, 5})}, {3, 3, 1, 1, 1, 1, 0, 0}),
      make_sample("ceil_mode, uneven", {in({1, 2, 7, 6})}, {3, 2, 2, 2, 1, 0, 1, 0}, true),
      make_sample("divisor_override 5", {in({1, 2, 6, 6})}, {2, 3, 2, 1, 1, 1, 1, 5}),
      make_sample("unbatched, transposed", {in({3, 7, 6}).transpose(1, 2)}, {2, 2, 2, 2, 0, 0, 1, 0}),
      make_sample("zero-size batch", {in({0, 2, 4, 4})}, {2, 2, 2, 2, 0, 0, 1, 0}),
  };
  if (t == DType::kF32) out.push_back(make_sample("larger than L2 [8, 16, 64, 64]", {in({8, 16, 64, 64})}, {2, 2, 2, 2, 0, 0, 1, 0}));
  return out;
}

std::vector<Expected> avg_pool_reference(const Sample& s, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const bool batched = x.dim() == 4;
  Tensor x4 = batched ? x : x.unsqueeze(0);
  const std::vector<double> v = values_of(x4);
  const int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  const int64_t kh = sc(s, 0), kw = sc(s, 1), sh = sc(s, 2), sw = sc(s, 3), ph = sc(s, 4), pw = sc(s, 5);
  const bool include = sc(s, 6) != 0;
  const int64_t divisor = sc(s, 7);
  const int64_t OH = pooled(H, kh, ph, sh, 1, s.flag), OW = pooled(W, kw, pw, sw, 1, s.flag);
  Shape os = batched ? Shape{N, C, OH, OW} : Shape{C, OH, OW};
  Expected out{os, x.dtype(), {}};
  Expected gin{x.sizes(), x.dtype(), std::vector<double>(v.size(), 0.0)};
  const bool integral = !is_floating(x.dtype());
  for (int64_t p = 0; p < N * C; ++p) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t y0 = oy * sh - ph, x0 = ox * sw - pw;
        const int64_t y1 = std::min(y0 + kh, H + ph), x1 = std::min(x0 + kw, W + pw);
        const int64_t padded = (y1 - y0) * (x1 - x0);
        const int64_t cy0 = std::max<int64_t>(y0, 0), cx0 = std::max<int64_t>(x0, 0);
        const int64_t cy1 = std::min(y1, H), cx1 = std::min(x1, W);
        const int64_t div = divisor ? divisor : include ? padded : (cy1 - cy0) * (cx1 - cx0);
        double sum = 0;
        for (int64_t iy = cy0; iy < cy1; ++iy)
          for (int64_t ix = cx0; ix < cx1; ++ix) sum += v[(p * H + iy) * W + ix];
        // int64 divides with truncation, as PyTorch's integer avg_pool2d.
        out.values.push_back(integral ? std::trunc(sum / div) : round_to_dtype(sum / div, x.dtype()));
        if (grad) {
          const double g = (*grad)[out.values.size() - 1] / div;
          for (int64_t iy = cy0; iy < cy1; ++iy)
            for (int64_t ix = cx0; ix < cx1; ++ix) gin.values[(p * H + iy) * W + ix] += g;
        }
      }
    }
  }
  if (grad) {
    for (double& g : gin.values) g = round_to_dtype(g, x.dtype());
    return {gin};
  }
  return {out};
}

std::optional<int64_t> divisor_of(const Sample& s) {
  return sc(s, 7) ? std::optional<int64_t>(sc(s, 7)) : std::nullopt;
}

}  // namespace

TESSERA_CONFORMANCE_OP("max_pool2d_with_indices") {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = max_pool_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = max_pool2d_with_indices(in[0], pair(s, 0), pair(s, 2), pair(s, 4), pair(s, 6), s.flag);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [](const Sample& s) { return max_pool_reference(s, nullptr); };
  return c;
}

TESSERA_CONFORMANCE_OP("max_pool2d_with_indices_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = max_pool_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = max_pool2d_with_indices(in[0], pair(s, 0), pair(s, 2), pair(s, 4), pair(s, 6), s.flag);
    // grad_output = the pooled values themselves: deterministic and varied.
    return std::vector<Tensor>{max_pool2d_with_indices_backward(v, in[0], i)};
  };
  c.reference = [](const Sample& s) {
    std::vector<double> g = max_pool_reference(s, nullptr)[0].values;
    return max_pool_reference(s, &g);
  };
  return c;
}

TESSERA_CONFORMANCE_OP("avg_pool2d") {
  OpCase c;
  c.dtypes = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI64};
  c.samples = avg_pool_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{avg_pool2d(in[0], pair(s, 0), pair(s, 2), pair(s, 4), s.flag, sc(s, 6) != 0, divisor_of(s))};
  };
  c.reference = [](const Sample& s) { return avg_pool_reference(s, nullptr); };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol, d.atol * 10};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("avg_pool2d_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = avg_pool_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    // grad_output = the pooled values (rounded to the dtype).
    Tensor g = avg_pool2d(in[0], pair(s, 0), pair(s, 2), pair(s, 4), s.flag, sc(s, 6) != 0, divisor_of(s));
    return std::vector<Tensor>{
        avg_pool2d_backward(g, in[0], pair(s, 0), pair(s, 2), pair(s, 4), s.flag, sc(s, 6) != 0, divisor_of(s))};
  };
  c.reference = [](const Sample& s) {
    std::vector<double> g = avg_pool_reference(s, nullptr)[0].values;
    return avg_pool_reference(s, &g);
  };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol * 4, d.atol * 10};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("embedding") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    auto idx = [](const Shape& s, int64_t hi, DType it, uint64_t seed) { return make_input(s, it, seed, 0, hi); };
    return std::vector<Sample>{
        make_sample("int64 indices [2, 3]", {make_input({7, 4}, t, 1), idx({2, 3}, 6, DType::kI64, 2)}),
        make_sample("int32 indices, transposed weight", {make_input({4, 7}, t, 3).t(), idx({5}, 6, DType::kI32, 4)}),
        make_sample("0-d index", {make_input({7, 4}, t, 5), idx({}, 6, DType::kI64, 6)}),
        make_sample("zero-size indices", {make_input({7, 4}, t, 7), idx({0, 2}, 6, DType::kI64, 8)}),
        make_sample("strided indices", {make_input({7, 4}, t, 9), idx({4, 6}, 6, DType::kI64, 10).slice(1, 0, std::nullopt, 3)}),
        make_sample("larger than L2", {make_input({4096, 256}, t, 11), idx({3000}, 4095, DType::kI64, 12)}),
    };
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) { return std::vector<Tensor>{embedding(in[0], in[1])}; };
  c.reference = [](const Sample& s) {
    const std::vector<double> w = values_of(s.inputs[0]), ix = values_of(s.inputs[1]);
    const int64_t D = s.inputs[0].size(1);
    Shape os = s.inputs[1].sizes();
    os.push_back(D);
    Expected e{os, s.inputs[0].dtype(), {}};
    for (double i : ix)
      for (int64_t j = 0; j < D; ++j) e.values.push_back(w[static_cast<int64_t>(i) * D + j]);
    return std::vector<Expected>{e};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("embedding_dense_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        make_sample("repeated indices, padding_idx 2", {make_input({3, 4, 5}, t, 1), make_input({3, 4}, DType::kI64, 2, 0, 5)}, {6, 2}),
        make_sample("no padding, int32 indices", {make_input({6, 3}, t, 3).t().t(), make_input({6}, DType::kI32, 4, 0, 3)}, {4, -1}),
        make_sample("zero-size indices", {make_input({0, 5}, t, 5), make_input({0}, DType::kI64, 6, 0, 3)}, {4, -1}),
        make_sample("transposed grad", {make_input({5, 6}, t, 7).t(), make_input({6}, DType::kI64, 8, 0, 3)}, {4, 0}),
        // Columns split over threads, each index repeated about 6 times.
        make_sample("[3000, 64], 500 rows", {make_input({3000, 64}, t, 9), make_input({3000}, DType::kI64, 10, 0, 499)}, {500, 7}),
    };
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{embedding_dense_backward(in[0], in[1], sc(s, 0), sc(s, 1))};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> g = values_of(s.inputs[0]), ix = values_of(s.inputs[1]);
    const int64_t V = sc(s, 0), D = s.inputs[0].size(-1);
    Expected e{{V, D}, s.inputs[0].dtype(), std::vector<double>(static_cast<size_t>(V * D), 0.0)};
    for (size_t r = 0; r < ix.size(); ++r) {
      if (static_cast<int64_t>(ix[r]) == sc(s, 1)) continue;
      for (int64_t j = 0; j < D; ++j) e.values[static_cast<int64_t>(ix[r]) * D + j] += g[r * D + j];
    }
    for (double& v : e.values) v = round_to_dtype(v, e.dtype);
    return std::vector<Expected>{e};
  };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol, d.atol + d.rtol * 10};
  };
  return c;
}

namespace {

const char* const kReductions[] = {"none", "mean", "sum"};

// scalars: reduction index, ignore_index; flag: use weight (inputs[2]).
std::vector<Sample> nll_samples(DType t) {
  std::vector<Sample> out;
  uint64_t seed = 201;
  for (int64_t r = 0; r < 3; ++r) {
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -4, 0); };
    auto pos = [&](const Shape& s) { return make_input(s, t, seed++, 0.25, 2); };
    auto tgt = [&](const Shape& s, int64_t hi) { return make_input(s, DType::kI64, seed++, 0, hi); };
    out.push_back(make_sample("[4, 5]", {in({4, 5}), tgt({4}, 4), in({5})}, {r, -100}));
    out.push_back(make_sample("[4, 5] weight, ignore_index 1", {in({5, 4}).t(), tgt({4}, 4), pos({5})}, {r, 1}, true));
    out.push_back(make_sample("1-D input", {in({5}), tgt({}, 4), in({5})}, {r, -100}));
    out.push_back(make_sample("[2, 3, 2, 2] spatial, weight", {in({2, 3, 2, 2}), tgt({2, 2, 2}, 2), pos({3})}, {r, -100}, true));
    out.push_back(make_sample("zero-size batch", {in({0, 3}), tgt({0}, 2), in({3})}, {r, -100}));
    // More targets than one block of the loss sums, a gradient above the
    // parallel grain, the input transposed and some targets ignored.
    out.push_back(make_sample("[5000, 7] transposed, ignore_index 3",
                              {in({7, 5000}).t(), tgt({5000}, 6), pos({7})}, {r, 3}, true));
  }
  return out;
}

std::vector<Expected> nll_reference(const Sample& s, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const int64_t C = x.dim() == 1 ? x.size(0) : x.size(1);
  const int64_t N = x.dim() == 1 ? 1 : x.size(0);
  const int64_t S = x.numel() / std::max<int64_t>(N * C, 1);
  const std::vector<double> xv = values_of(x), t = values_of(s.inputs[1]), w = values_of(s.inputs[2]);
  const int64_t r = sc(s, 0), ignore = sc(s, 1);
  std::vector<double> loss(static_cast<size_t>(N * S), 0.0);
  std::vector<double> gin(xv.size(), 0.0);
  double sum = 0, wsum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < S; ++p) {
      const int64_t c = static_cast<int64_t>(t[n * S + p]);
      if (c == ignore) continue;
      const double wc = s.flag ? w[c] : 1.0;
      loss[n * S + p] = -wc * xv[(n * C + c) * S + p];
      sum += loss[n * S + p];
      wsum += wc;
    }
  if (grad) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < S; ++p) {
        const int64_t c = static_cast<int64_t>(t[n * S + p]);
        if (c == ignore) continue;
        const double wc = s.flag ? w[c] : 1.0;
        const double g = r == 0 ? (*grad)[n * S + p] : r == 1 ? (*grad)[0] / wsum : (*grad)[0];
        gin[(n * C + c) * S + p] = round_to_dtype(-wc * g, x.dtype());
      }
    return {Expected{x.sizes(), x.dtype(), gin}};
  }
  if (r == 0) {
    for (double& v : loss) v = round_to_dtype(v, x.dtype());
    return {Expected{s.inputs[1].sizes(), x.dtype(), loss}};
  }
  return {Expected{{}, x.dtype(), {round_to_dtype(r == 2 ? sum : sum / wsum, x.dtype())}}};
}

}  // namespace

TESSERA_CONFORMANCE_OP("nll_loss") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = nll_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{nll_loss(in[0], in[1], s.flag ? in[2] : Tensor(), kReductions[sc(s, 0)], sc(s, 1))};
  };
  c.reference = [](const Sample& s) { return nll_reference(s, nullptr); };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol * 4, d.atol * 10};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("nll_loss_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = nll_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Tensor w = s.flag ? in[2] : Tensor();
    auto [loss, total] = nll_loss_forward(in[0], in[1], w, kReductions[sc(s, 0)], sc(s, 1));
    // grad_output = 2 * loss's own shape of ones.
    Tensor g = full(loss.sizes(), 2.0, TensorOptions(loss.dtype(), loss.device()));
    return std::vector<Tensor>{nll_loss_backward(g, in[0], in[1], w, kReductions[sc(s, 0)], sc(s, 1), total)};
  };
  c.reference = [](const Sample& s) {
    std::vector<double> g(static_cast<size_t>(std::max<int64_t>(s.inputs[1].numel(), 1)), 2.0);
    return nll_reference(s, &g);
  };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol * 4, d.atol * 10};
  };
  return c;
}

namespace {

// softmax(q k^T * scale + mask) v in double. mask kind (scalars[0]): 0
// none, 1 bool (inputs[3]), 2 additive (inputs[3]), 3 causal.
Expected sdpa_reference(const Sample& s) {
  const Tensor &q = s.inputs[0], &k = s.inputs[1], &v = s.inputs[2];
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2), Ev = v.size(-1);
  const int64_t B = q.numel() / std::max<int64_t>(L * E, 1);
  const std::vector<double> qv = values_of(q), kv = values_of(k), vv = values_of(v);
  const int64_t kind = sc(s, 0);
  Shape ms = q.sizes();
  ms.back() = S;
  const std::vector<double> mv = kind == 1 || kind == 2 ? values_of(s.inputs[3].expand(ms)) : std::vector<double>();
  Shape os = q.sizes();
  os.back() = Ev;
  Expected e{os, q.dtype(), std::vector<double>(static_cast<size_t>(B * L * Ev), 0.0)};
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> sc_row(static_cast<size_t>(S));
      std::vector<bool> keep(static_cast<size_t>(S), true);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < E; ++p) acc += qv[(b * L + i) * E + p] * kv[(b * S + j) * E + p];
        acc *= scale;
        if (kind == 1) keep[j] = mv[(b * L + i) * S + j] != 0;
        if (kind == 2) acc += mv[(b * L + i) * S + j];
        if (kind == 3) keep[j] = j <= i;
        sc_row[j] = acc;
        if (keep[j]) mx = std::max(mx, acc);
      }
      double den = 0;
      for (int64_t j = 0; j < S; ++j) den += keep[j] ? std::exp(sc_row[j] - mx) : 0.0;
      for (int64_t j = 0; j < S; ++j) {
        if (!keep[j] || den == 0 || std::isinf(mx)) continue;  // nothing to attend: zeros
        const double pj = std::exp(sc_row[j] - mx) / den;
        for (int64_t c = 0; c < Ev; ++c) e.values[(b * L + i) * Ev + c] += pj * vv[(b * S + j) * Ev + c];
      }
    }
  for (double& x : e.values) x = round_to_dtype(x, q.dtype());
  return e;
}

}  // namespace

TESSERA_CONFORMANCE_OP("scaled_dot_product_attention") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    uint64_t seed = 301;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    Tensor bool_mask = make_input({4, 6}, DType::kBool, 7);
    // Row 0 attends to nothing: PyTorch's math path gives zeros there.
    Tensor masked_row = ones({4, 6}, TensorOptions(DType::kBool, host_device()));
    masked_row.select(0, 0).fill_(false);
    Tensor minus_inf_row = in({4, 6});
    minus_inf_row.select(0, 0).fill_(-std::numeric_limits<double>::infinity());
    return std::vector<Sample>{
        make_sample("no mask [2, 3, 4, 5]", {in({2, 3, 4, 5}), in({2, 3, 6, 5}), in({2, 3, 6, 7})}, {0}),
        make_sample("bool mask broadcast", {in({2, 4, 5}), in({2, 6, 5}), in({2, 6, 3}), bool_mask}, {1}),
        make_sample("fully masked row", {in({2, 4, 5}), in({2, 6, 5}), in({2, 6, 3}), masked_row}, {1}),
        make_sample("additive mask", {in({2, 4, 5}), in({2, 6, 5}), in({2, 6, 3}), in({4, 6})}, {2}),
        make_sample("additive mask, a row all -inf",
                    {in({2, 4, 5}), in({2, 6, 5}), in({2, 6, 3}), minus_inf_row}, {2}),
        make_sample("causal", {in({2, 5, 4}), in({2, 5, 4}), in({2, 5, 3})}, {3}),
        make_sample("transposed key", {in({3, 4, 5}), in({3, 5, 6}).transpose(1, 2), in({3, 6, 2})}, {0}),
    };
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const int64_t kind = sc(s, 0);
    Tensor mask = kind == 1 || kind == 2 ? in[3] : Tensor();
    return std::vector<Tensor>{scaled_dot_product_attention(in[0], in[1], in[2], mask, 0.0, kind == 3)};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{sdpa_reference(s)}; };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance d = default_tolerance(t);
    return Tolerance{d.rtol * 4, d.atol + d.rtol * 8};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("max_pool2d and avg_pool2d") {
  return std::vector<ErrorCase>{
      {"2-D input", [](Device d) { max_pool2d(ones({4, 4}, d), {2}); }, ErrorKind::kValue, {"max_pool2d", "[4, 4]"}},
      {"padding more than half the kernel", [](Device d) { max_pool2d(ones({1, 1, 4, 4}, d), {2}, {}, {2}); },
       ErrorKind::kValue, {"max_pool2d", "pad should be at most half"}},
      {"output too small", [](Device d) { avg_pool2d(ones({1, 1, 2, 2}, d), {3}); }, ErrorKind::kValue,
       {"avg_pool2d", "too small"}},
      {"zero kernel", [](Device d) { max_pool2d(ones({1, 1, 4, 4}, d), {0, 2}); }, ErrorKind::kValue,
       {"max_pool2d", "kernel_size"}},
      {"three-entry kernel", [](Device d) { max_pool2d(ones({1, 1, 4, 4}, d), {2, 2, 2}); }, ErrorKind::kValue,
       {"max_pool2d", "kernel_size", "[2, 2, 2]"}},
      {"bool input", [](Device d) { max_pool2d(ones({1, 1, 4, 4}, TensorOptions(DType::kBool, d)), {2}); },
       ErrorKind::kType, {"max_pool2d", "bool"}},
      {"avg_pool2d int32", [](Device d) { avg_pool2d(ones({1, 1, 4, 4}, TensorOptions(DType::kI32, d)), {2}); },
       ErrorKind::kType, {"avg_pool2d", "int32"}},
      {"divisor_override 0", [](Device d) { avg_pool2d(ones({1, 1, 4, 4}, d), {2}, {}, {0}, false, true, 0); },
       ErrorKind::kValue, {"avg_pool2d", "divisor"}},
      {"zero-size channel", [](Device d) { max_pool2d(ones({1, 0, 4, 4}, d), {2}); }, ErrorKind::kValue,
       {"max_pool2d", "[1, 0, 4, 4]"}},
      {"backward index past the plane",
       [](Device d) {
         max_pool2d_with_indices_backward(ones({1, 1, 2, 2}, d), ones({1, 1, 4, 4}, d),
                                          full({1, 1, 2, 2}, 16, TensorOptions(DType::kI64, d)));
       },
       ErrorKind::kIndex, {"max_pool2d_with_indices_backward", "16", "4 x 4"}},
      {"negative backward index",
       [](Device d) {
         max_pool2d_with_indices_backward(ones({1, 1, 2, 2}, d), ones({1, 1, 4, 4}, d),
                                          full({1, 1, 2, 2}, -1, TensorOptions(DType::kI64, d)));
       },
       ErrorKind::kIndex, {"max_pool2d_with_indices_backward", "-1"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("embedding") {
  return std::vector<ErrorCase>{
      {"index out of range", [](Device d) { embedding(ones({3, 2}, d), full({2}, 3, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex, {"embedding", "out of range", "3"}},
      {"negative index", [](Device d) { embedding(ones({3, 2}, d), full({2}, -1, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex, {"embedding", "-1"}},
      {"float indices", [](Device d) { embedding(ones({3, 2}, d), ones({2}, d)); }, ErrorKind::kType,
       {"embedding", "int64", "float32"}},
      {"1-D weight", [](Device d) { embedding(ones({3}, d), zeros({2}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kValue, {"embedding", "2-D"}},
      {"backward grad shape", [](Device d) { embedding_dense_backward(ones({3, 2}, d), zeros({4}, TensorOptions(DType::kI64, d)), 5); },
       ErrorKind::kValue, {"embedding_dense_backward", "[3, 2]", "[4]"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("nll_loss") {
  return std::vector<ErrorCase>{
      {"target out of bounds", [](Device d) { nll_loss(ones({2, 3}, d), full({2}, 5, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex, {"nll_loss", "target 5", "out of bounds"}},
      {"batch size mismatch", [](Device d) { nll_loss(ones({3, 3}, d), zeros({2}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kValue, {"nll_loss", "batch_size (3)", "batch_size (2)"}},
      {"float target", [](Device d) { nll_loss(ones({2, 3}, d), zeros({2}, d)); }, ErrorKind::kType,
       {"nll_loss", "int64", "float32"}},
      {"weight of the wrong size", [](Device d) { nll_loss(ones({2, 3}, d), zeros({2}, TensorOptions(DType::kI64, d)), ones({2}, d)); },
       ErrorKind::kValue, {"nll_loss", "3 classes", "[2]"}},
      {"bad reduction", [](Device d) { nll_loss(ones({2, 3}, d), zeros({2}, TensorOptions(DType::kI64, d)), {}, "avg"); },
       ErrorKind::kValue, {"nll_loss", "avg", "reduction"}},
      {"integer input", [](Device d) { nll_loss(ones({2, 3}, TensorOptions(DType::kI64, d)), zeros({2}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kType, {"nll_loss", "int64"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("scaled_dot_product_attention") {
  return std::vector<ErrorCase>{
      {"dtype mismatch", [](Device d) { scaled_dot_product_attention(ones({2, 3}, d), ones({2, 3}, TensorOptions(DType::kF64, d)), ones({2, 3}, d)); },
       ErrorKind::kType, {"scaled_dot_product_attention", "float32", "float64"}},
      {"mask with is_causal", [](Device d) { scaled_dot_product_attention(ones({2, 3}, d), ones({2, 3}, d), ones({2, 3}, d), ones({2, 2}, d), 0.0, true); },
       ErrorKind::kValue, {"scaled_dot_product_attention", "is_causal"}},
      {"embedding sizes differ", [](Device d) { scaled_dot_product_attention(ones({2, 3}, d), ones({2, 4}, d), ones({2, 3}, d)); },
       ErrorKind::kValue, {"scaled_dot_product_attention", "[2, 3]", "[2, 4]"}},
      {"mask does not broadcast", [](Device d) { scaled_dot_product_attention(ones({2, 3}, d), ones({4, 3}, d), ones({4, 3}, d), ones({3, 3}, d)); },
       ErrorKind::kValue, {"scaled_dot_product_attention", "attn_mask", "[3, 3]"}},
  };
}

}  // namespace tessera::conformance
