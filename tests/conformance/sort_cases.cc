// sort, argsort, topk: conformance cases against a naive stable sort.
// Stable sorts check the indices exactly; unstable sorts and topk may order
// equal values either way, so they check the values and self gathered at
// the returned indices (equal to the values whatever the tie order).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Sample sample(std::string desc, Tensor in, int64_t dim, int64_t k = 0, bool flag = false) {
  Sample s;
  s.description = std::move(desc);
  s.inputs = {std::move(in)};
  s.dims = {dim, k};
  s.flag = flag;
  return s;
}

// Values in [-4, 4] so integer dtypes have many ties.
std::vector<Sample> sort_samples(DType t) {
  auto x = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed, -4, 4); };
  return {
      sample("0-d", x({}, 1), 0, 1),
      sample("[9]", x({9}, 2), 0, 4),
      sample("[4, 7] dim -1", x({4, 7}, 3), -1, 3),
      sample("[4, 7] dim 0", x({4, 7}, 4), 0, 2),
      sample("transposed [5, 6] dim 1", x({6, 5}, 5).t(), 1, 6),
      sample("zero-size [0, 3] dim 1", x({0, 3}, 6), 1, 0),
      sample("k = 0", x({3, 4}, 7), 1, 0),
      sample("larger than L2 [600, 1000] dim 1", x({600, 1000}, 8), 1, 10),
  };
}

// Stable sort of each slice along dim; returns (values, indices) references.
std::vector<Expected> sort_reference(const Tensor& t, int64_t dim, bool descending, int64_t k) {
  Shape shape = t.sizes();
  std::vector<double> v = values_of(t);
  if (shape.empty()) {
    return {Expected{{}, t.dtype(), v}, Expected{{}, DType::kI64, {0}}};
  }
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (dim < 0) dim += nd;
  const int64_t len = shape[dim];
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < nd; ++d) inner *= shape[d];
  const int64_t outer = len == 0 ? 0 : static_cast<int64_t>(v.size()) / (len * inner);
  Shape out_shape = shape;
  out_shape[dim] = k;
  Expected values{out_shape, t.dtype(), std::vector<double>(static_cast<size_t>(outer * k * inner))};
  Expected indices{out_shape, DType::kI64, values.values};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> order(static_cast<size_t>(len));
      std::iota(order.begin(), order.end(), 0);
      auto val = [&](int64_t j) { return v[static_cast<size_t>((o * len + j) * inner + i)]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return descending ? val(a) > val(b) : val(a) < val(b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const size_t at = static_cast<size_t>((o * k + j) * inner + i);
        values.values[at] = val(order[j]);
        indices.values[at] = static_cast<double>(order[j]);
      }
    }
  }
  return {values, indices};
}

int64_t len_of(const Sample& s) {
  const Tensor& t = s.inputs[0];
  return t.dim() == 0 ? 1 : t.size(s.dims[0]);
}

}  // namespace

namespace {

TensorOptions like(const Tensor& t, DType dtype) { return TensorOptions(dtype, t.device()); }

OpCase sort_stable_case() {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (bool desc : {false, true}) {
      for (Sample s : sort_samples(t)) {
        s.flag = desc;
        s.description += desc ? " descending" : " ascending";
        out.push_back(std::move(s));
      }
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    auto [values, indices] = sort(x[0], s.dims[0], s.flag, /*stable=*/true);
    return std::vector<Tensor>{values, indices};
  };
  c.reference = [](const Sample& s) {
    return sort_reference(s.inputs[0], s.dims[0], s.flag, len_of(s));
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("sort stable") { return sort_stable_case(); }

TESSERA_CONFORMANCE_OP("sort_out into empty outs") {
  OpCase c = sort_stable_case();
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor values = empty({0}, like(x[0], x[0].dtype()));
    Tensor indices = empty({0}, like(x[0], DType::kI64));
    sort_out(values, indices, x[0], s.dims[0], s.flag, /*stable=*/true);
    return std::vector<Tensor>{values, indices};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("sort unstable") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return sort_samples(t); };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    auto [values, indices] = sort(x[0], s.dims[0], /*descending=*/true, /*stable=*/false);
    return std::vector<Tensor>{values, gather(x[0], s.dims[0], indices)};
  };
  c.reference = [](const Sample& s) {
    auto r = sort_reference(s.inputs[0], s.dims[0], true, len_of(s));
    return std::vector<Expected>{r[0], r[0]};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("argsort") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return sort_samples(t); };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{argsort(x[0], s.dims[0], /*descending=*/false, /*stable=*/true)};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{sort_reference(s.inputs[0], s.dims[0], false, len_of(s))[1]};
  };
  return c;
}

namespace {

OpCase topk_case() {
  OpCase c;
  c.dtypes = numeric_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (bool largest : {true, false}) {
      for (Sample s : sort_samples(t)) {
        s.flag = largest;
        s.description += largest ? " largest" : " smallest";
        out.push_back(std::move(s));
      }
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    auto [values, indices] = topk(x[0], s.dims[1], s.dims[0], s.flag);
    return std::vector<Tensor>{values, gather(x[0], s.dims[0], indices)};
  };
  c.reference = [](const Sample& s) {
    auto r = sort_reference(s.inputs[0], s.dims[0], s.flag, s.dims[1]);
    return std::vector<Expected>{r[0], r[0]};
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("topk") { return topk_case(); }

TESSERA_CONFORMANCE_OP("topk_out into empty outs") {
  OpCase c = topk_case();
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor values = empty({0}, like(x[0], x[0].dtype()));
    Tensor indices = empty({0}, like(x[0], DType::kI64));
    topk_out(values, indices, x[0], s.dims[1], s.dims[0], s.flag);
    return std::vector<Tensor>{values, gather(x[0], s.dims[0], indices)};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("sort topk") {
  return std::vector<ErrorCase>{
      {"sort dim out of range", [](Device d) { sort(ones({2, 3}, d), 2); }, ErrorKind::kIndex,
       {"sort"}},
      {"topk k too large", [](Device d) { topk(ones({2, 3}, d), 4); }, ErrorKind::kIndex,
       {"topk", "k = 4", "size 3"}},
      {"topk negative k", [](Device d) { topk(ones({2, 3}, d), -1); }, ErrorKind::kIndex,
       {"topk", "k = -1"}},
      {"topk of bools", [](Device d) { topk(ones({3}, TensorOptions(DType::kBool, d)), 1); },
       ErrorKind::kType, {"topk", "bool"}},
  };
}

}  // namespace tessera::conformance
