// cummax / cummin, kthvalue and median against naive references over each
// line, and their error cases.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// Lines of every layout class; dims[0] is the dim.
std::vector<Sample> line_samples(DType t) {
  uint64_t seed = 401;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -5, 5); };
  std::vector<Sample> out = {
      sample_of("0-d", {in({})}, {0}),
      sample_of("[5, 7] dim 1", {in({5, 7})}, {1}),
      sample_of("[5, 7] dim 0", {in({5, 7})}, {0}),
      sample_of("transposed [7, 5] viewed as [5, 7] dim -1", {in({7, 5}).t()}, {-1}),
      sample_of("[3, 4, 6] dim 1", {in({3, 4, 6})}, {1}),
      sample_of("zero rows [0, 4] dim 1", {in({0, 4})}, {1}),
      sample_of("long lines [4, 1000] dim 1", {in({4, 1000})}, {1}),
  };
  if (is_floating(t)) {
    // NaNs inside lines: they win running extremes and sort last.
    Tensor special = in({3, 6}).to(DType::kF64);
    special.data<double>()[2] = NAN;
    special.data<double>()[4] = NAN;
    special.data<double>()[13] = NAN;
    out.push_back(sample_of("NaNs [3, 6] dim 1", {special.to(t)}, {1}));
  }
  return out;
}

int64_t wrapped(const Sample& s) {
  const int64_t rank = std::max<int64_t>(s.inputs[0].dim(), 1);
  return s.dims[0] < 0 ? s.dims[0] + rank : s.dims[0];
}

// A sample's values as lines along its dim (a 0-d tensor is one line).
struct Lines {
  Shape sizes;
  int64_t dim;
  std::vector<double> v;
};

Lines lines_of(const Sample& s) {
  const Tensor& x = s.inputs[0];
  return {x.dim() == 0 ? Shape{1} : x.sizes(), x.dim() == 0 ? 0 : wrapped(s), values_of(x)};
}

// (values, indices) of the running extreme, PyTorch's rule: a later value
// wins when NaN, or when neither is NaN and it is >= (<=) the best so far.
std::vector<Expected> running_reference(const Sample& s, bool is_max) {
  Lines l = lines_of(s);
  std::vector<double> out_v = l.v, out_i(l.v.size());
  for_each_line(l.sizes, l.dim, out_v, [&](std::vector<double*>& line) {
    double best = *line[0], at = 0;
    for (size_t k = 0; k < line.size(); ++k) {
      const double x = *line[k];
      const bool wins = std::isnan(x) || (!std::isnan(best) && (is_max ? x >= best : x <= best));
      if (k == 0 || wins) {
        best = x;
        at = static_cast<double>(k);
      }
      *line[k] = best;
      out_i[static_cast<size_t>(line[k] - out_v.data())] = at;
    }
  });
  const DType t = s.inputs[0].dtype();
  return {Expected{s.inputs[0].sizes(), t, out_v},
          Expected{s.inputs[0].sizes(), DType::kI64, out_i}};
}

// The stable ascending order of a line (NaN last), as (value, index).
std::vector<std::pair<double, int64_t>> sorted_line(const std::vector<double*>& line) {
  std::vector<std::pair<double, int64_t>> p;
  for (size_t k = 0; k < line.size(); ++k) p.push_back({*line[k], static_cast<int64_t>(k)});
  std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) {
    if (std::isnan(a.first)) return false;
    return std::isnan(b.first) || a.first < b.first;
  });
  return p;
}

// (values, indices) picking, per line, the sorted position pos(line).
std::vector<Expected> pick_reference(const Sample& s, bool keepdim,
                                     const std::function<size_t(const std::vector<std::pair<double, int64_t>>&)>& pos) {
  Lines l = lines_of(s);
  const Tensor& x = s.inputs[0];
  Shape out = x.sizes();
  if (x.dim() > 0) {
    if (keepdim) out[l.dim] = 1;
    else out.erase(out.begin() + l.dim);
  }
  // for_each_line visits lines in row-major order of the remaining dims.
  std::vector<double> vals, idx;
  std::vector<double> v = l.v;
  for_each_line(l.sizes, l.dim, v, [&](std::vector<double*>& line) {
    const auto sorted = sorted_line(line);
    const auto& picked = sorted[pos(sorted)];
    vals.push_back(picked.first);
    idx.push_back(static_cast<double>(picked.second));
  });
  return {Expected{out, x.dtype(), vals}, Expected{out, DType::kI64, idx}};
}

size_t median_position(const std::vector<std::pair<double, int64_t>>& sorted) {
  const size_t nans = static_cast<size_t>(std::count_if(
      sorted.begin(), sorted.end(), [](const auto& p) { return std::isnan(p.first); }));
  return nans > 0 ? sorted.size() - nans : (sorted.size() - 1) / 2;
}

std::vector<DType> numeric() { return numeric_dtypes(); }

}  // namespace

TESSERA_CONFORMANCE_OP("cummax") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = line_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = cummax(in[0], s.dims[0]);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [](const Sample& s) { return running_reference(s, true); };
  return c;
}

TESSERA_CONFORMANCE_OP("cummin") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = line_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = cummin(in[0], s.dims[0]);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [](const Sample& s) { return running_reference(s, false); };
  return c;
}

TESSERA_CONFORMANCE_OP("kthvalue") {
  OpCase c;
  c.dtypes = numeric();
  // Lines of at least 3 (k = 3); zero-size lines have no k-th value.
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : line_samples(t)) {
      const Tensor& x = s.inputs[0];
      if (x.dim() > 0 && x.size(wrapped(s)) >= 3) out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = kthvalue(in[0], 3, s.dims[0]);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [](const Sample& s) {
    return pick_reference(s, false, [](const auto&) { return size_t{2}; });
  };
  return c;
}

TESSERA_CONFORMANCE_OP("median dim keepdim") {
  OpCase c;
  c.dtypes = numeric();
  c.samples = line_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    auto [v, i] = median(in[0], s.dims[0], true);
    return std::vector<Tensor>{v, i};
  };
  c.reference = [](const Sample& s) { return pick_reference(s, true, median_position); };
  return c;
}

TESSERA_CONFORMANCE_OP("median all") {
  OpCase c;
  c.dtypes = numeric();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : line_samples(t)) {
      if (s.inputs[0].numel() > 0) out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{median(in[0])};
  };
  c.reference = [](const Sample& s) {
    std::vector<double> v = values_of(s.inputs[0]);
    std::vector<double*> line;
    for (double& x : v) line.push_back(&x);
    const auto sorted = sorted_line(line);
    return std::vector<Expected>{
        Expected{{}, s.inputs[0].dtype(), {sorted[median_position(sorted)].first}}};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("order statistics") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"kthvalue k too large", [f32](Device d) { kthvalue(f32(d, {2, 3}), 4, 1); },
       ErrorKind::kIndex, {"kthvalue", "out of range"}},
      {"kthvalue k of 0", [f32](Device d) { kthvalue(f32(d, {2, 3}), 0, 1); }, ErrorKind::kIndex,
       {"kthvalue", "out of range"}},
      {"median over an empty dim", [f32](Device d) { median(f32(d, {2, 0}), 1); },
       ErrorKind::kIndex, {"median", "non-zero size"}},
      {"median of bool", [](Device d) { median(ones({3}, TensorOptions(DType::kBool, d)), 0); },
       ErrorKind::kType, {"median", "bool"}},
      {"cummax bad dim", [f32](Device d) { cummax(f32(d, {2, 3}), 2); }, ErrorKind::kIndex,
       {"cummax"}},
  };
}

}  // namespace tessera::conformance
