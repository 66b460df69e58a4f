// Reductions: sum, mean, prod, amax, amin, aminmax, max / min (full and
// over a dim with indices), argmax, argmin, all, any, var, std, norm, logsumexp, and
// their error cases. References are naive loops in double over the
// row-major values of the host inputs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// Row-major multi-index bookkeeping: groups the values of `t` by the index
// of the keepdim output they reduce into.
std::vector<std::vector<double>> groups(const Tensor& t, const Shape& rdims_in) {
  Shape rdims;
  if (rdims_in.empty()) {
    for (int64_t d = 0; d < t.dim(); ++d) rdims.push_back(d);
  } else {
    for (int64_t d : rdims_in) rdims.push_back(d < 0 ? d + std::max<int64_t>(t.dim(), 1) : d);
  }
  Shape out_sizes = t.sizes();
  for (int64_t d : rdims) {
    if (t.dim() > 0) out_sizes[d] = 1;
  }
  int64_t nout = 1;
  for (int64_t s : out_sizes) nout *= s;
  std::vector<std::vector<double>> g(static_cast<size_t>(nout));
  const std::vector<double> v = values_of(t);
  Shape idx(t.sizes().size(), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o = o * out_sizes[d] + (out_sizes[d] == 1 ? 0 : idx[d]);
    g[static_cast<size_t>(o)].push_back(v[i]);
    for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return g;
}

Shape result_shape(const Tensor& t, const Shape& rdims_in, bool keepdim) {
  Shape rdims;
  if (rdims_in.empty()) {
    for (int64_t d = 0; d < t.dim(); ++d) rdims.push_back(d);
  } else {
    for (int64_t d : rdims_in) rdims.push_back(d < 0 ? d + std::max<int64_t>(t.dim(), 1) : d);
  }
  Shape s;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const bool red = std::find(rdims.begin(), rdims.end(), d) != rdims.end();
    if (!red) s.push_back(t.sizes()[d]);
    else if (keepdim) s.push_back(1);
  }
  return s;
}

using GroupFn = std::function<double(const std::vector<double>&)>;

Expected reduce_reference(const Sample& s, DType out_dtype, const GroupFn& f) {
  Expected e{result_shape(s.inputs[0], s.dims, s.flag), out_dtype, {}};
  for (const auto& g : groups(s.inputs[0], s.dims)) e.values.push_back(round_to_dtype(f(g), out_dtype));
  return e;
}

// The reduced extent of a sample (elements per output).
int64_t reduced_len(const Sample& s) {
  const auto g = groups(s.inputs[0], s.dims);
  return g.empty() ? 0 : static_cast<int64_t>(g[0].size());
}

double dtype_eps(DType t) {
  switch (t) {
    case DType::kF16: return 9.77e-4;
    case DType::kBF16: return 7.8e-3;
    case DType::kF32: return 1.2e-7;
    case DType::kF64: return 2.3e-16;
    default: return 0;
  }
}

// Default tolerances widened by the rounding a length-n accumulation may
// add (values of magnitude ~3).
Tolerance sum_tolerance(DType out, const Sample& s) {
  Tolerance t = default_tolerance(out);
  if (is_floating(out)) t.atol += 12.0 * dtype_eps(out) * std::sqrt(static_cast<double>(std::max<int64_t>(reduced_len(s), 1)));
  return t;
}

// Shape classes of a reduction: (input, dims, keepdim). `short_rows` keeps
// reduced extents small (for prod, whose values grow geometrically).
std::vector<Sample> reduction_samples(DType dtype, bool short_rows, double lo = -3.0,
                                      double hi = 3.0) {
  std::vector<Sample> out;
  uint64_t seed = 11;
  auto add = [&](std::string desc, Tensor t, Shape dims, bool keepdim) {
    Sample s;
    s.description = std::move(desc);
    s.inputs = {std::move(t)};
    s.dims = std::move(dims);
    s.flag = keepdim;
    out.push_back(std::move(s));
  };
  auto in = [&](const Shape& sh) { return make_input(sh, dtype, seed++, lo, hi); };
  add("0-d all dims", in({}), {}, false);
  add("0-d dim 0 keepdim", in({}), {0}, true);
  add("zero-size [0, 3] dim 1", in({0, 3}), {1}, false);
  add("zero-size [0, 3] dim 0 (empty reduction)", in({0, 3}), {0}, false);
  add("contiguous [5, 7] dim 1", in({5, 7}), {1}, false);
  add("contiguous [5, 7] dim 0 keepdim", in({5, 7}), {0}, true);
  add("contiguous [5, 7] dim -1 keepdim", in({5, 7}), {-1}, true);
  add("transposed [7, 5] viewed as [5, 7] dim 1", in({7, 5}).t(), {1}, false);
  add("strided slice [4, 9] step 2 dim 1", in({4, 9}).slice(1, 0, std::nullopt, 2), {1}, false);
  add("expanded [1, 6] to [4, 6] dim 0", in({1, 6}).expand({4, 6}), {0}, false);
  add("3-d [3, 4, 5] dims (0, 2)", in({3, 4, 5}), {0, 2}, false);
  if (short_rows) {
    add("contiguous [3, 4] all dims", in({3, 4}), {}, false);
    add("larger than L2 [131072, 5] dim 1", in({131072, 5}), {1}, false);
    add("larger than L2 [5, 131072] dim 0", in({5, 131072}), {0}, false);
  } else {
    add("contiguous [5, 7] all dims", in({5, 7}), {}, false);
    add("contiguous [5, 7] all dims keepdim", in({5, 7}), {}, true);
    add("larger than L2 [1024, 1100] dim 1", in({1024, 1100}), {1}, false);
    add("larger than L2 [1024, 1100] dim 0", in({1024, 1100}), {0}, false);
    add("larger than L2 [1024, 1100] all dims", in({1024, 1100}), {}, false);
  }
  return out;
}

// Drops samples with an empty reduction (ops with no identity).
std::vector<Sample> nonempty(std::vector<Sample> v) {
  std::vector<Sample> out;
  for (Sample& s : v) {
    const auto g = groups(s.inputs[0], s.dims);
    if (!g.empty() && g[0].empty()) continue;
    if (s.dims.empty() && s.inputs[0].numel() == 0) continue;
    out.push_back(std::move(s));
  }
  return out;
}

// Samples reducing exactly one dim (max / min / argmax with a dim).
std::vector<Sample> single_dim(std::vector<Sample> v) {
  std::vector<Sample> out;
  for (Sample& s : nonempty(std::move(v))) {
    if (s.dims.size() == 1) out.push_back(std::move(s));
  }
  return out;
}

double sum_of(const std::vector<double>& g) { return std::accumulate(g.begin(), g.end(), 0.0); }

double max_of(const std::vector<double>& g) {
  double m = g[0];
  for (double v : g) {
    if (std::isnan(v)) return v;
    m = std::max(m, v);
  }
  return m;
}

double min_of(const std::vector<double>& g) {
  double m = g[0];
  for (double v : g) {
    if (std::isnan(v)) return v;
    m = std::min(m, v);
  }
  return m;
}

double argext_of(const std::vector<double>& g, bool is_max) {
  size_t at = 0;
  for (size_t i = 1; i < g.size(); ++i) {
    if (is_max ? g[i] > g[at] : g[i] < g[at]) at = i;
  }
  return static_cast<double>(at);
}

double var_of(const std::vector<double>& g, double correction) {
  if (g.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double mean = sum_of(g) / static_cast<double>(g.size());
  double q = 0;
  for (double v : g) q += (v - mean) * (v - mean);
  return q / std::max(0.0, static_cast<double>(g.size()) - correction);
}

OpCase reduction_case(std::vector<DType> dtypes, std::function<std::vector<Sample>(DType)> samples,
                      std::function<Tensor(const Tensor&, const Sample&)> op,
                      std::function<DType(DType)> out_dtype, GroupFn ref) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = std::move(samples);
  c.run = [op](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{op(in[0], s)};
  };
  c.reference = [out_dtype, ref](const Sample& s) {
    return std::vector<Expected>{reduce_reference(s, out_dtype(s.inputs[0].dtype()), ref)};
  };
  c.tolerance = [out_dtype](DType t, const Sample& s) { return sum_tolerance(out_dtype(t), s); };
  return c;
}

DType same(DType t) { return t; }
DType int_to_i64(DType t) { return is_floating(t) ? t : DType::kI64; }
DType bool_or_u8(DType t) { return t == DType::kU8 ? DType::kU8 : DType::kBool; }

}  // namespace

TESSERA_CONFORMANCE_OP("sum") {
  return reduction_case(
      all_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) { return sum(x, s.dims, s.flag); }, int_to_i64, sum_of);
}

TESSERA_CONFORMANCE_OP("sum out") {
  return reduction_case(
      floating_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) {
        Tensor out = empty(result_shape(x, s.dims, s.flag), TensorOptions(x.dtype(), x.device()));
        sum_out(out, x, s.dims, s.flag);
        return out;
      },
      same, sum_of);
}

TESSERA_CONFORMANCE_OP("nansum") {
  // Elements above 1.5 become NaN; the reference skips them.
  return reduction_case(
      floating_dtypes(),
      [](DType t) {
        std::vector<Sample> samples = reduction_samples(t, false);
        for (Sample& s : samples) {
          s.inputs[0] = where(gt(s.inputs[0], Scalar(1.5)), Scalar(NAN), s.inputs[0]);
        }
        return samples;
      },
      [](const Tensor& x, const Sample& s) { return nansum(x, s.dims, s.flag); }, same,
      [](const std::vector<double>& g) {
        double total = 0;
        for (double v : g) total += std::isnan(v) ? 0.0 : v;
        return total;
      });
}

TESSERA_CONFORMANCE_OP("mean") {
  return reduction_case(
      floating_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) { return mean(x, s.dims, s.flag); }, same,
      [](const std::vector<double>& g) {
        return g.empty() ? std::numeric_limits<double>::quiet_NaN()
                         : sum_of(g) / static_cast<double>(g.size());
      });
}

TESSERA_CONFORMANCE_OP("prod") {
  OpCase c = reduction_case(
      all_dtypes(),
      [](DType t) {
        // prod takes one dim (or none): keep those samples.
        std::vector<Sample> out;
        for (Sample& s : reduction_samples(t, true, -2.0, 2.0)) {
          if (s.dims.size() <= 1) out.push_back(std::move(s));
        }
        return out;
      },
      [](const Tensor& x, const Sample& s) {
        if (s.dims.empty()) return prod(x);
        return prod(x, s.dims[0], s.flag);
      },
      int_to_i64,
      [](const std::vector<double>& g) {
        double p = 1;
        for (double v : g) p *= v;
        return p;
      });
  c.tolerance = [](DType t, const Sample&) {
    Tolerance tol = default_tolerance(int_to_i64(t));
    if (is_floating(t)) tol.rtol *= 8;  // a product of n factors: n roundings
    return tol;
  };
  return c;
}

TESSERA_CONFORMANCE_OP("amax") {
  return reduction_case(
      all_dtypes(), [](DType t) { return nonempty(reduction_samples(t, false)); },
      [](const Tensor& x, const Sample& s) { return amax(x, s.dims, s.flag); }, same, max_of);
}

TESSERA_CONFORMANCE_OP("amin") {
  return reduction_case(
      all_dtypes(), [](DType t) { return nonempty(reduction_samples(t, false)); },
      [](const Tensor& x, const Sample& s) { return amin(x, s.dims, s.flag); }, same, min_of);
}

TESSERA_CONFORMANCE_OP("aminmax") {
  // One dim or all of them (aminmax takes no dim list).
  OpCase c = reduction_case(
      all_dtypes(),
      [](DType t) {
        std::vector<Sample> out;
        for (Sample& s : nonempty(reduction_samples(t, false))) {
          if (s.dims.size() <= 1) out.push_back(std::move(s));
        }
        return out;
      },
      nullptr, same, min_of);
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const std::optional<int64_t> dim =
        s.dims.empty() ? std::nullopt : std::optional<int64_t>(s.dims[0]);
    auto [lo, hi] = aminmax(in[0], dim, s.flag);
    return std::vector<Tensor>{lo, hi};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{reduce_reference(s, t, min_of), reduce_reference(s, t, max_of)};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("max full") {
  return reduction_case(
      all_dtypes(),
      [](DType t) {
        std::vector<Sample> out;
        for (Sample& s : nonempty(reduction_samples(t, false))) {
          if (s.dims.empty() && !s.flag) out.push_back(std::move(s));
        }
        return out;
      },
      [](const Tensor& x, const Sample&) { return max(x); }, same, max_of);
}

TESSERA_CONFORMANCE_OP("min full") {
  return reduction_case(
      all_dtypes(),
      [](DType t) {
        std::vector<Sample> out;
        for (Sample& s : nonempty(reduction_samples(t, false))) {
          if (s.dims.empty() && !s.flag) out.push_back(std::move(s));
        }
        return out;
      },
      [](const Tensor& x, const Sample&) { return min(x); }, same, min_of);
}

namespace {
OpCase extreme_dim_case(bool is_max) {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return single_dim(reduction_samples(t, false)); };
  c.run = [is_max](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = is_max ? max(in[0], s.dims[0], s.flag) : min(in[0], s.dims[0], s.flag);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [is_max](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{
        reduce_reference(s, t, is_max ? GroupFn(max_of) : GroupFn(min_of)),
        reduce_reference(s, DType::kI64,
                         [is_max](const std::vector<double>& g) { return argext_of(g, is_max); })};
  };
  return c;
}

OpCase arg_case(bool is_max) {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : nonempty(reduction_samples(t, false))) {
      if (s.dims.size() == 1 || (s.dims.empty())) out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [is_max](const std::vector<Tensor>& in, const Sample& s) {
    std::optional<int64_t> dim;
    if (!s.dims.empty()) dim = s.dims[0];
    return std::vector<Tensor>{is_max ? argmax(in[0], dim, s.flag) : argmin(in[0], dim, s.flag)};
  };
  c.reference = [is_max](const Sample& s) {
    Expected e = reduce_reference(s, DType::kI64, [is_max](const std::vector<double>& g) {
      return argext_of(g, is_max);
    });
    if (s.dims.empty() && s.flag) e.sizes = Shape(s.inputs[0].sizes().size(), 1);
    return std::vector<Expected>{e};
  };
  return c;
}
}  // namespace

TESSERA_CONFORMANCE_OP("max dim") { return extreme_dim_case(true); }
TESSERA_CONFORMANCE_OP("min dim") { return extreme_dim_case(false); }
TESSERA_CONFORMANCE_OP("argmax") { return arg_case(true); }
TESSERA_CONFORMANCE_OP("argmin") { return arg_case(false); }

TESSERA_CONFORMANCE_OP("all") {
  return reduction_case(
      all_dtypes(), [](DType t) { return reduction_samples(t, false, -1.0, 1.0); },
      [](const Tensor& x, const Sample& s) { return all(x, s.dims, s.flag); }, bool_or_u8,
      [](const std::vector<double>& g) {
        for (double v : g) {
          if (v == 0) return 0.0;
        }
        return 1.0;
      });
}

TESSERA_CONFORMANCE_OP("any") {
  return reduction_case(
      all_dtypes(), [](DType t) { return reduction_samples(t, false, -1.0, 1.0); },
      [](const Tensor& x, const Sample& s) { return any(x, s.dims, s.flag); }, bool_or_u8,
      [](const std::vector<double>& g) {
        for (double v : g) {
          if (v != 0) return 1.0;
        }
        return 0.0;
      });
}

TESSERA_CONFORMANCE_OP("var") {
  return reduction_case(
      floating_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) { return var(x, s.dims, 1.0, s.flag); }, same,
      [](const std::vector<double>& g) { return var_of(g, 1.0); });
}

TESSERA_CONFORMANCE_OP("std correction 0") {
  return reduction_case(
      floating_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) { return tessera::std(x, s.dims, 0.0, s.flag); }, same,
      [](const std::vector<double>& g) { return std::sqrt(var_of(g, 0.0)); });
}

namespace {
OpCase norm_case(double p) {
  return reduction_case(
      floating_dtypes(),
      [p](DType t) {
        auto v = reduction_samples(t, false);
        return std::isinf(p) ? nonempty(std::move(v)) : v;
      },
      [p](const Tensor& x, const Sample& s) { return norm(x, p, s.dims, s.flag); }, same,
      [p](const std::vector<double>& g) {
        if (std::isinf(p)) {
          double acc = p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
          for (double v : g) acc = p > 0 ? std::max(acc, std::fabs(v)) : std::min(acc, std::fabs(v));
          return acc;
        }
        double acc = 0;
        for (double v : g) acc += p == 0 ? (v != 0 ? 1.0 : 0.0) : std::pow(std::fabs(v), p);
        return p == 0 || p == 1 ? acc : std::pow(acc, 1.0 / p);
      });
}
}  // namespace

TESSERA_CONFORMANCE_OP("norm p=1") { return norm_case(1.0); }
TESSERA_CONFORMANCE_OP("norm p=2") { return norm_case(2.0); }
TESSERA_CONFORMANCE_OP("norm p=inf") { return norm_case(std::numeric_limits<double>::infinity()); }
TESSERA_CONFORMANCE_OP("norm p=-inf") { return norm_case(-std::numeric_limits<double>::infinity()); }
TESSERA_CONFORMANCE_OP("norm p=0") { return norm_case(0.0); }
TESSERA_CONFORMANCE_OP("norm p=3") { return norm_case(3.0); }
TESSERA_CONFORMANCE_OP("norm p=0.5") { return norm_case(0.5); }

TESSERA_CONFORMANCE_OP("logsumexp") {
  return reduction_case(
      all_dtypes(), [](DType t) { return reduction_samples(t, false); },
      [](const Tensor& x, const Sample& s) { return logsumexp(x, s.dims, s.flag); },
      [](DType t) { return is_floating(t) ? t : DType::kF32; },
      [](const std::vector<double>& g) {
        double s = 0;
        for (double v : g) s += std::exp(v);
        return std::log(s);
      });
}

TESSERA_CONFORMANCE_ERRORS("reductions") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"sum dim out of range", [f32](Device d) { sum(f32(d, {2, 3}), {5}); }, ErrorKind::kIndex,
       {"sum", "5"}},
      {"amax repeated dim", [f32](Device d) { amax(f32(d, {2, 3}), {0, 0}); }, ErrorKind::kValue,
       {"amax", "appears multiple times"}},
      {"amax over an empty dim", [f32](Device d) { amax(f32(d, {0, 3}), {0}); }, ErrorKind::kIndex,
       {"amax", "Expected reduction dim 0 to have non-zero size"}},
      {"aminmax over an empty dim", [f32](Device d) { aminmax(f32(d, {0, 3}), 0); },
       ErrorKind::kIndex, {"aminmax", "Expected reduction dim 0 to have non-zero size"}},
      {"aminmax of an empty tensor", [f32](Device d) { aminmax(f32(d, {0, 3})); },
       ErrorKind::kValue, {"aminmax", "no identity"}},
      {"amin of an empty tensor", [f32](Device d) { amin(f32(d, {0, 3})); }, ErrorKind::kValue,
       {"amin", "Expected reduction dim to be specified"}},
      {"max over an empty dim", [f32](Device d) { max(f32(d, {0, 3}), 0); }, ErrorKind::kIndex,
       {"max", "Expected reduction dim 0 to have non-zero size"}},
      {"max of an empty tensor", [f32](Device d) { max(f32(d, {0, 3})); }, ErrorKind::kValue,
       {"max", "input.numel() == 0"}},
      {"min dim out of range", [f32](Device d) { min(f32(d, {2, 3}), -3); }, ErrorKind::kIndex,
       {"min", "-3"}},
      {"argmax of an empty tensor", [f32](Device d) { argmax(f32(d, {0, 3})); },
       ErrorKind::kIndex, {"argmax", "input.numel() == 0"}},
      {"argmax of bool", [](Device d) { argmax(ones({2}, TensorOptions(DType::kBool, d))); },
       ErrorKind::kType, {"argmax", "bool"}},
      {"var of int", [](Device d) { var(ones({3}, TensorOptions(DType::kI32, d))); },
       ErrorKind::kType, {"var", "floating point"}},
      {"std of int64", [](Device d) { tessera::std(ones({3}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kType, {"std", "int64"}},
      {"norm of int", [](Device d) { norm(ones({3}, TensorOptions(DType::kI32, d))); },
       ErrorKind::kType, {"norm", "int32"}},
      {"norm p=NaN", [f32](Device d) { norm(f32(d, {3}), std::nan("")); }, ErrorKind::kValue,
       {"norm", "NaN"}},
      {"norm p=-inf over an empty dim", [f32](Device d) { norm(f32(d, {0, 3}), -INFINITY, {0}); },
       ErrorKind::kIndex, {"norm", "-inf", "dim 0"}},
      {"inf norm over an empty dim",
       [f32](Device d) { norm(f32(d, {0, 3}), std::numeric_limits<double>::infinity(), {0}); },
       ErrorKind::kIndex, {"norm", "empty"}},
      {"sum out of the wrong shape",
       [f32](Device d) {
         Tensor out = empty({4}, TensorOptions(DType::kF32, d));
         sum_out(out, f32(d, {2, 3}), {1});
       },
       ErrorKind::kValue, {"sum", "[4]", "[2]"}},
      {"amax out of a narrower dtype",
       [f32](Device d) {
         Tensor out = empty({2}, TensorOptions(DType::kI32, d));
         amax_out(out, f32(d, {2, 3}), {1});
       },
       ErrorKind::kType, {"amax", "float32", "int32"}},
      {"max out with int32 indices",
       [f32](Device d) {
         Tensor v = empty({2}, TensorOptions(DType::kF32, d));
         Tensor i = empty({2}, TensorOptions(DType::kI32, d));
         max_out(v, i, f32(d, {2, 3}), 1);
       },
       ErrorKind::kType, {"max", "int64"}},
      {"logsumexp dim out of range", [f32](Device d) { logsumexp(f32(d, {2}), {1}); },
       ErrorKind::kIndex, {"logsumexp", "1"}},
  };
}

}  // namespace tessera::conformance
