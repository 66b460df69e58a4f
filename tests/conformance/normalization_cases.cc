// softmax, log_softmax and their backward; layer_norm (with mean / rstd and
// backward), rms_norm (and backward), batch_norm (training with the running
// stats update, eval, backward); and their error cases. References are
// naive loops in double over lines of the host inputs.
#include <cmath>
#include <limits>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

int64_t wrap(int64_t d, int64_t ndim) { return ndim == 0 ? 0 : (d + ndim) % ndim; }

std::vector<Sample> softmax_samples(DType dtype, int arity) {
  std::vector<Sample> out;
  uint64_t seed = 51;
  auto add = [&](std::string desc, const Shape& shape, int64_t dim,
                 const std::function<Tensor(Tensor)>& view) {
    Sample s;
    s.description = std::move(desc);
    for (int k = 0; k < arity; ++k) {
      // Backward's `output` (input 1) is a probability-like value.
      const bool prob = k == 1;
      s.inputs.push_back(view(make_input(shape, dtype, seed++, prob ? 0.0 : -3.0, prob ? 1.0 : 3.0)));
    }
    s.dims = {dim};
    out.push_back(std::move(s));
  };
  auto id = [](Tensor t) { return t; };
  add("0-d dim 0", {}, 0, id);
  add("zero-size [0, 3] dim 1", {0, 3}, 1, id);
  add("contiguous [5, 7] dim 1", {5, 7}, 1, id);
  add("contiguous [5, 7] dim 0", {5, 7}, 0, id);
  add("3-d [3, 4, 5] dim 1", {3, 4, 5}, 1, id);
  add("transposed [7, 5] viewed as [5, 7] dim 1", {7, 5}, 1, [](Tensor t) { return t.t(); });
  add("strided slice [4, 9] step 2 dim 1", {4, 9}, 1,
      [](Tensor t) { return t.slice(1, 0, std::nullopt, 2); });
  // Many short rows (the CPU's block path), one row all -inf, one with a
  // NaN and one with +inf among them.
  add("short rows [300, 5] dim 1", {300, 5}, 1, [arity](Tensor t) {
    if (arity == 1) {
      t.select(0, 7).fill_(-std::numeric_limits<double>::infinity());
      t.select(0, 100).select(0, 2).fill_(std::numeric_limits<double>::quiet_NaN());
      t.select(0, 200).select(0, 4).fill_(std::numeric_limits<double>::infinity());
    }
    return t;
  });
  add("larger than L2 [1024, 1100] dim 1", {1024, 1100}, 1, id);
  add("larger than L2 [1024, 1100] dim 0", {1024, 1100}, 0, id);
  return out;
}

Expected softmax_ref(const Tensor& x, int64_t dim, bool log, DType out) {
  Expected e{x.sizes(), out, values_of(x)};
  for_each_line(x.sizes(), wrap(dim, x.dim()), e.values, [&](std::vector<double*>& line) {
    double m = -std::numeric_limits<double>::infinity();
    for (double* p : line) m = std::max(m, *p);
    double s = 0;
    for (double* p : line) s += std::exp(*p - m);
    for (double* p : line) *p = round_to_dtype(log ? *p - m - std::log(s) : std::exp(*p - m) / s, out);
  });
  return e;
}

OpCase softmax_case(bool log) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return softmax_samples(t, 1); };
  c.run = [log](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{log ? log_softmax(in[0], s.dims[0]) : softmax(in[0], s.dims[0])};
  };
  c.reference = [log](const Sample& s) {
    return std::vector<Expected>{softmax_ref(s.inputs[0], s.dims[0], log, s.inputs[0].dtype())};
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("softmax") { return softmax_case(false); }
TESSERA_CONFORMANCE_OP("log_softmax") { return softmax_case(true); }

TESSERA_CONFORMANCE_OP("softmax with dtype float32") {
  OpCase c = softmax_case(false);
  c.dtypes = {DType::kF16, DType::kBF16, DType::kF64};
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{softmax(in[0], s.dims[0], DType::kF32)};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{softmax_ref(s.inputs[0], s.dims[0], false, DType::kF32)};
  };
  return c;
}

namespace {
OpCase softmax_backward_case(bool log) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return softmax_samples(t, 2); };
  c.run = [log](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{log ? _log_softmax_backward_data(in[0], in[1], s.dims[0])
                                   : _softmax_backward_data(in[0], in[1], s.dims[0])};
  };
  c.reference = [log](const Sample& s) {
    const Tensor& g = s.inputs[0];
    const DType dt = g.dtype();
    Expected e{g.sizes(), dt, {}};
    std::vector<double> gv = values_of(g), yv = values_of(s.inputs[1]);
    // Pack (g, y) pairs: process lines of indices.
    std::vector<double> idx(gv.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<double>(i);
    e.values.assign(gv.size(), 0.0);
    for_each_line(g.sizes(), wrap(s.dims[0], g.dim()), idx, [&](std::vector<double*>& line) {
      double sum = 0;
      for (double* p : line) {
        const size_t i = static_cast<size_t>(*p);
        sum += log ? gv[i] : gv[i] * yv[i];
      }
      for (double* p : line) {
        const size_t i = static_cast<size_t>(*p);
        const double r = log ? gv[i] - std::exp(yv[i]) * sum : yv[i] * (gv[i] - sum);
        e.values[i] = round_to_dtype(g.dim() == 0 ? 0.0 : r, dt);
      }
    });
    return std::vector<Expected>{e};
  };
  c.tolerance = [](DType t, const Sample&) {
    Tolerance tol = default_tolerance(t);
    tol.atol *= 100;  // a dot product per line, then a difference
    if (t == DType::kF16) tol.atol += 1e-2;
    if (t == DType::kBF16) tol.atol += 5e-2;
    if (t == DType::kF32) tol.atol += 1e-4;
    return tol;
  };
  return c;
}
}  // namespace

TESSERA_CONFORMANCE_OP("_softmax_backward_data") { return softmax_backward_case(false); }
TESSERA_CONFORMANCE_OP("_log_softmax_backward_data") { return softmax_backward_case(true); }

// -- Layer norm and rms norm ----------------------------------------------------

namespace {

struct NormSample {
  Shape shape;
  Shape normalized;
  bool weight, bias;
};

// inputs: x, then weight and bias when used (flag: weight present; scalars[0]
// = 1 when bias is present); dims = normalized_shape.
std::vector<Sample> norm_samples(DType dtype, int grads) {
  std::vector<Sample> out;
  uint64_t seed = 71;
  auto add = [&](std::string desc, Tensor x, Shape ns, bool w, bool b) {
    Sample s;
    s.description = std::move(desc);
    s.inputs.push_back(std::move(x));
    for (int k = 0; k < grads; ++k) s.inputs.push_back(make_input(s.inputs[0].sizes(), dtype, seed++));
    if (w) s.inputs.push_back(make_input(ns, dtype, seed++, 0.5, 1.5));
    if (b) s.inputs.push_back(make_input(ns, dtype, seed++));
    s.dims = ns;
    s.flag = w;
    s.scalars = {Scalar(b ? 1 : 0)};
    out.push_back(std::move(s));
  };
  auto in = [&](const Shape& s) { return make_input(s, dtype, seed++); };
  add("zero-size [0, 3] over [3]", in({0, 3}), {3}, true, true);
  add("1-d [6] over [6]", in({6}), {6}, false, false);
  add("contiguous [5, 7] over [7] with weight and bias", in({5, 7}), {7}, true, true);
  add("3-d [2, 3, 4] over [3, 4] with weight", in({2, 3, 4}), {3, 4}, true, false);
  add("transposed [7, 5] viewed as [5, 7] over [7] with bias", in({7, 5}).t(), {7}, false, true);
  add("strided slice [4, 18] step 2 over [9]", in({4, 18}).slice(1, 0, std::nullopt, 2), {9}, true, true);
  add("larger than L2 [1024, 1100] over [1100]", in({1024, 1100}), {1100}, true, true);
  // Short rows, many of them: the weight and bias gradients are column
  // sums over 3000 rows (the CPU adds them in float blocks, then double).
  add("many short rows [3000, 24] over [24]", in({3000, 24}), {24}, true, true);
  return out;
}

struct Parts {
  Tensor x, w, b;
};

Parts parts_of(const std::vector<Tensor>& in, const Sample& s, int grads) {
  Parts p;
  p.x = in[0];
  size_t k = 1 + static_cast<size_t>(grads);
  if (s.flag) p.w = in[k++];
  if (s.scalars[0].to<int64_t>() == 1) p.b = in[k++];
  return p;
}

// (out, mean, rstd) rows of the naive layer / rms norm in double.
struct NormRef {
  std::vector<double> out, mean, rstd;
  int64_t m, n;
};

NormRef norm_ref(const Sample& s, bool rms, double eps) {
  Parts p = parts_of(s.inputs, s, 0);
  NormRef r;
  r.n = 1;
  for (int64_t v : s.dims) r.n *= v;
  const std::vector<double> x = values_of(p.x);
  r.m = r.n == 0 ? 0 : static_cast<int64_t>(x.size()) / r.n;
  const std::vector<double> w = p.w.defined() ? values_of(p.w) : std::vector<double>();
  const std::vector<double> b = p.b.defined() ? values_of(p.b) : std::vector<double>();
  r.out.resize(x.size());
  for (int64_t i = 0; i < r.m; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < r.n; ++j) mean += x[i * r.n + j];
    mean /= static_cast<double>(r.n);
    if (rms) mean = 0;
    for (int64_t j = 0; j < r.n; ++j) var += (x[i * r.n + j] - mean) * (x[i * r.n + j] - mean);
    var /= static_cast<double>(r.n);
    const double rstd = 1.0 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.rstd.push_back(rstd);
    for (int64_t j = 0; j < r.n; ++j) {
      double y = (x[i * r.n + j] - mean) * rstd;
      if (!w.empty()) y *= w[j];
      if (!b.empty() && !rms) y += b[j];
      r.out[i * r.n + j] = y;
    }
  }
  return r;
}

Shape stat_shape(const Tensor& x, const Shape& ns) {
  Shape s = x.sizes();
  for (size_t d = s.size() - ns.size(); d < s.size(); ++d) s[d] = 1;
  return s;
}

std::vector<double> rounded(std::vector<double> v, DType t) {
  for (double& x : v) x = round_to_dtype(x, t);
  return v;
}

Tolerance norm_tolerance(DType t, const Sample&) {
  Tolerance tol = default_tolerance(t);
  if (t == DType::kF32) tol.atol = 1e-4;
  if (t == DType::kF16) tol.atol = 1e-2;
  if (t == DType::kBF16) tol.atol = 5e-2;
  return tol;
}

}  // namespace

TESSERA_CONFORMANCE_OP("native_layer_norm") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return norm_samples(t, 0); };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Parts p = parts_of(in, s, 0);
    auto [y, mean, rstd] = native_layer_norm(p.x, s.dims, p.w, p.b, 1e-5);
    return std::vector<Tensor>{y, mean, rstd};
  };
  c.reference = [](const Sample& s) {
    NormRef r = norm_ref(s, false, 1e-5);
    const DType t = s.inputs[0].dtype();
    const Shape ss = stat_shape(s.inputs[0], s.dims);
    return std::vector<Expected>{{s.inputs[0].sizes(), t, rounded(r.out, t)},
                                 {ss, t, rounded(r.mean, t)},
                                 {ss, t, rounded(r.rstd, t)}};
  };
  c.tolerance = norm_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("layer_norm") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return norm_samples(t, 0); };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Parts p = parts_of(in, s, 0);
    return std::vector<Tensor>{layer_norm(p.x, s.dims, p.w, p.b)};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{{s.inputs[0].sizes(), t, rounded(norm_ref(s, false, 1e-5).out, t)}};
  };
  c.tolerance = norm_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("rms_norm") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return norm_samples(t, 0); };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Parts p = parts_of(in, s, 0);
    return std::vector<Tensor>{rms_norm(p.x, s.dims, p.w, 1e-6)};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{{s.inputs[0].sizes(), t, rounded(norm_ref(s, true, 1e-6).out, t)}};
  };
  c.tolerance = norm_tolerance;
  return c;
}

namespace {
// Naive backward of layer / rms norm from the definitions, in double.
OpCase norm_backward_case(bool rms) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return norm_samples(t, 1); };
  c.run = [rms](const std::vector<Tensor>& in, const Sample& s) {
    Parts p = parts_of(in, s, 1);
    const Tensor& g = in[1];
    std::vector<Tensor> outs;
    if (rms) {
      auto [y, rstd] = rms_norm_forward(p.x, s.dims, p.w, 1e-6);
      auto [gi, gw] = rms_norm_backward(g, p.x, s.dims, rstd, p.w);
      outs = {gi};
      if (gw.defined()) outs.push_back(gw);
    } else {
      auto [y, mean, rstd] = native_layer_norm(p.x, s.dims, p.w, p.b, 1e-5);
      auto [gi, gw, gb] = native_layer_norm_backward(g, p.x, s.dims, mean, rstd, p.w, p.b);
      outs = {gi};
      if (gw.defined()) outs.push_back(gw);
      if (gb.defined()) outs.push_back(gb);
    }
    return outs;
  };
  c.reference = [rms](const Sample& s) {
    // Forward statistics from the non-grad inputs.
    Sample fwd = s;
    fwd.inputs.erase(fwd.inputs.begin() + 1);
    NormRef r = norm_ref(fwd, rms, rms ? 1e-6 : 1e-5);
    Parts p = parts_of(s.inputs, s, 1);
    const DType t = p.x.dtype();
    const std::vector<double> x = values_of(p.x), g = values_of(s.inputs[1]);
    const std::vector<double> w = p.w.defined() ? values_of(p.w) : std::vector<double>();
    std::vector<double> gi(x.size()), gw(static_cast<size_t>(r.n), 0.0), gb(static_cast<size_t>(r.n), 0.0);
    for (int64_t i = 0; i < r.m; ++i) {
      double s1 = 0, s2 = 0;
      std::vector<double> xh(static_cast<size_t>(r.n)), gwv(static_cast<size_t>(r.n));
      for (int64_t j = 0; j < r.n; ++j) {
        const size_t k = static_cast<size_t>(i * r.n + j);
        xh[j] = (x[k] - r.mean[i]) * r.rstd[i];
        gwv[j] = g[k] * (w.empty() ? 1.0 : w[j]);
        s1 += gwv[j];
        s2 += gwv[j] * xh[j];
        gw[j] += g[k] * xh[j];
        gb[j] += g[k];
      }
      for (int64_t j = 0; j < r.n; ++j) {
        const double a = rms ? 0.0 : s1 / static_cast<double>(r.n);
        gi[i * r.n + j] = r.rstd[i] * (gwv[j] - a - xh[j] * s2 / static_cast<double>(r.n));
      }
    }
    std::vector<Expected> e{{p.x.sizes(), t, rounded(gi, t)}};
    if (p.w.defined()) e.push_back({p.w.sizes(), t, rounded(gw, t)});
    if (!rms && p.b.defined()) e.push_back({p.b.sizes(), t, rounded(gb, t)});
    return e;
  };
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance tol = norm_tolerance(t, s);
    tol.atol *= 10;  // grad_weight sums over up to 1024 rows
    if (t == DType::kBF16 || t == DType::kF16) tol.rtol *= 4;
    return tol;
  };
  return c;
}
}  // namespace

TESSERA_CONFORMANCE_OP("native_layer_norm_backward") { return norm_backward_case(false); }
TESSERA_CONFORMANCE_OP("rms_norm_backward") { return norm_backward_case(true); }

// -- Batch norm -------------------------------------------------------------------

namespace {

// inputs: x [N, C, ...], weight, bias, running_mean, running_var, grad;
// flag: training.
std::vector<Sample> bn_samples(DType dtype) {
  std::vector<Sample> out;
  uint64_t seed = 91;
  for (bool training : {true, false}) {
    auto add = [&](std::string desc, Tensor x, Tensor grad = {}) {
      Sample s;
      s.description = desc + (training ? " training" : " eval");
      const int64_t c = x.sizes()[1];
      s.inputs = {x, make_input({c}, dtype, seed++, 0.5, 1.5), make_input({c}, dtype, seed++),
                  make_input({c}, DType::kF32, seed++, -0.5, 0.5),
                  make_input({c}, DType::kF32, seed++, 0.5, 2.0),
                  grad.defined() ? grad : make_input(x.sizes(), dtype, seed++)};
      s.flag = training;
      out.push_back(std::move(s));
    };
    add("[4, 3]", make_input({4, 3}, dtype, seed++));
    add("[2, 3, 5, 4]", make_input({2, 3, 5, 4}, dtype, seed++));
    add("transposed [3, 4] viewed as [4, 3]", make_input({3, 4}, dtype, seed++).t());
    add("larger than L2 [16, 8, 64, 64]", make_input({16, 8, 64, 64}, dtype, seed++));
    // Far from zero: the statistics must not lose the spread to the mean.
    add("offset [2, 5, 33, 17] in [99, 101]", make_input({2, 5, 33, 17}, dtype, seed++, 99, 101));
    // A gradient that grows with x, so that the mean of grad * xhat (small
    // for an unrelated gradient) weighs in grad_input.
    const Tensor x = make_input({3, 4, 9, 31}, dtype, seed++);
    add("gradient 3 relu(x) + noise [3, 4, 9, 31]", x,
        tessera::add(mul(relu(x), 3.0), make_input(x.sizes(), dtype, seed++, -0.5, 0.5)).to(dtype));
  }
  return out;
}

struct BnRef {
  std::vector<double> out, mean, invstd, rm, rv, gi, gw, gb;
};

BnRef bn_ref(const Sample& s, double momentum, double eps) {
  const Tensor& xt = s.inputs[0];
  const int64_t n = xt.sizes()[0], c = xt.sizes()[1];
  const int64_t sp = xt.numel() / (n * c);
  const std::vector<double> x = values_of(xt), w = values_of(s.inputs[1]), b = values_of(s.inputs[2]);
  const std::vector<double> g = values_of(s.inputs[5]);
  BnRef r;
  r.rm = values_of(s.inputs[3]);
  r.rv = values_of(s.inputs[4]);
  r.out.resize(x.size());
  r.gi.resize(x.size());
  auto at = [&](int64_t i, int64_t ch, int64_t j) { return static_cast<size_t>((i * c + ch) * sp + j); };
  const double count = static_cast<double>(n * sp);
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean, invstd;
    if (s.flag) {
      double sum = 0, q = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < sp; ++j) sum += x[at(i, ch, j)];
      mean = sum / count;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < sp; ++j) q += (x[at(i, ch, j)] - mean) * (x[at(i, ch, j)] - mean);
      const double var = q / count;
      invstd = 1.0 / std::sqrt(var + eps);
      r.mean.push_back(mean);
      r.invstd.push_back(invstd);
      r.rm[ch] = (1 - momentum) * r.rm[ch] + momentum * mean;
      r.rv[ch] = (1 - momentum) * r.rv[ch] + momentum * var * count / (count - 1);
    } else {
      mean = r.rm[ch];
      invstd = 1.0 / std::sqrt(r.rv[ch] + eps);
    }
    double sg = 0, sgx = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < sp; ++j) {
        const size_t k = at(i, ch, j);
        const double xh = (x[k] - mean) * invstd;
        r.out[k] = xh * w[ch] + b[ch];
        sg += g[k];
        sgx += g[k] * xh;
      }
    }
    r.gw.push_back(sgx);
    r.gb.push_back(sg);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < sp; ++j) {
        const size_t k = at(i, ch, j);
        const double xh = (x[k] - mean) * invstd;
        r.gi[k] = s.flag ? w[ch] * invstd * (g[k] - sg / count - xh * sgx / count) : w[ch] * invstd * g[k];
      }
    }
  }
  return r;
}

}  // namespace

TESSERA_CONFORMANCE_OP("batch_norm") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = bn_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Tensor rm = in[3].clone(), rv = in[4].clone();
    auto [y, mean, invstd] = batch_norm(in[0], in[1], in[2], rm, rv, s.flag, 0.1, 1e-5);
    std::vector<Tensor> outs{y, rm, rv};
    if (s.flag) {
      outs.push_back(mean);
      outs.push_back(invstd);
    }
    return outs;
  };
  c.reference = [](const Sample& s) {
    BnRef r = bn_ref(s, 0.1, 1e-5);
    const DType t = s.inputs[0].dtype();
    const DType sd = t == DType::kF64 ? DType::kF64 : DType::kF32;
    const Shape cs{s.inputs[0].sizes()[1]};
    std::vector<Expected> e{{s.inputs[0].sizes(), t, rounded(r.out, t)},
                            {cs, DType::kF32, rounded(r.rm, DType::kF32)},
                            {cs, DType::kF32, rounded(r.rv, DType::kF32)}};
    if (s.flag) {
      e.push_back({cs, sd, rounded(r.mean, sd)});
      e.push_back({cs, sd, rounded(r.invstd, sd)});
    }
    return e;
  };
  c.tolerance = norm_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("batch_norm_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = bn_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    Tensor rm = in[3].clone(), rv = in[4].clone();
    auto [y, mean, invstd] = batch_norm(in[0], in[1], in[2], rm, rv, s.flag, 0.1, 1e-5);
    auto [gi, gw, gb] = batch_norm_backward(in[5], in[0], in[1], in[3], in[4], mean, invstd,
                                            s.flag, 1e-5);
    return std::vector<Tensor>{gi, gw, gb};
  };
  c.reference = [](const Sample& s) {
    BnRef r = bn_ref(s, 0.1, 1e-5);
    const DType t = s.inputs[0].dtype();
    const Shape cs{s.inputs[0].sizes()[1]};
    return std::vector<Expected>{{s.inputs[0].sizes(), t, rounded(r.gi, t)},
                                 {cs, t, rounded(r.gw, t)},
                                 {cs, t, rounded(r.gb, t)}};
  };
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance tol = norm_tolerance(t, s);
    tol.atol *= 100;  // grad_weight / grad_bias sum up to 32768 values per channel
    tol.rtol *= 4;
    return tol;
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("normalization") {
  return std::vector<ErrorCase>{
      {"softmax of int", [](Device d) { softmax(ones({3}, TensorOptions(DType::kI32, d)), 0); },
       ErrorKind::kType, {"softmax", "int32"}},
      {"softmax dim out of range", [](Device d) { softmax(ones({2, 3}, d), 2); },
       ErrorKind::kIndex, {"softmax", "2"}},
      {"log_softmax dim out of range", [](Device d) { log_softmax(ones({2, 3}, d), -3); },
       ErrorKind::kIndex, {"log_softmax", "-3"}},
      {"softmax backward shape mismatch",
       [](Device d) { _softmax_backward_data(ones({2, 3}, d), ones({3, 2}, d), 1); },
       ErrorKind::kValue, {"_softmax_backward_data", "[2, 3]", "[3, 2]"}},
      {"layer_norm shape mismatch", [](Device d) { layer_norm(ones({2, 3}, d), {4}); },
       ErrorKind::kValue, {"layer_norm", "normalized_shape=[4]", "[2, 3]"}},
      {"layer_norm empty normalized_shape", [](Device d) { layer_norm(ones({2, 3}, d), {}); },
       ErrorKind::kValue, {"layer_norm", "at least 1-dimensional"}},
      {"layer_norm weight shape", [](Device d) { layer_norm(ones({2, 3}, d), {3}, ones({2}, d)); },
       ErrorKind::kValue, {"layer_norm", "weight", "[2]", "[3]"}},
      {"layer_norm of int",
       [](Device d) { layer_norm(ones({2, 3}, TensorOptions(DType::kI64, d)), {3}); },
       ErrorKind::kType, {"layer_norm", "int64"}},
      {"rms_norm weight shape", [](Device d) { rms_norm(ones({2, 3}, d), {3}, ones({2}, d)); },
       ErrorKind::kValue, {"rms_norm", "weight", "[2]"}},
      {"batch_norm 1-d input",
       [](Device d) { batch_norm(ones({3}, d), {}, {}, {}, {}, true); }, ErrorKind::kValue,
       {"batch_norm", "[3]"}},
      {"batch_norm weight of the wrong size",
       [](Device d) { batch_norm(ones({2, 3}, d), ones({4}, d), {}, {}, {}, true); },
       ErrorKind::kValue, {"batch_norm", "weight", "[3]", "[4]"}},
      {"batch_norm eval without running stats",
       [](Device d) { batch_norm(ones({2, 3}, d), {}, {}, {}, {}, false); }, ErrorKind::kValue,
       {"batch_norm", "evaluation mode"}},
  };
}

}  // namespace tessera::conformance
