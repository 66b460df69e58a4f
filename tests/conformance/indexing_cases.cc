// index_select, gather, scatter, scatter_add, index_put, masked_fill,
// masked_select, nonzero, one_hot: conformance cases with naive references
// over row-major coordinates, and the index error cases.
#include <numeric>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Expected as_expected(const Nd& x, DType dtype) {
  Expected e{x.shape, dtype, x.v};
  for (double& v : e.values) v = round_to_dtype(v, dtype);
  return e;
}

Tensor in(const Shape& s, DType t, uint64_t seed) { return make_input(s, t, seed); }
// int64 indices in [lo, hi].
Tensor idx(const Shape& s, uint64_t seed, int64_t lo, int64_t hi) {
  return make_input(s, DType::kI64, seed, static_cast<double>(lo), static_cast<double>(hi));
}
Tensor mask(const Shape& s, uint64_t seed) { return make_input(s, DType::kBool, seed); }

}  // namespace

TESSERA_CONFORMANCE_OP("index_select") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d self, 1 index", {in({}, t, 1), idx({1}, 2, 0, 0)}, {0}),
        sample_of("[5, 3] dim 0", {in({5, 3}, t, 3), idx({7}, 4, 0, 4)}, {0}),
        sample_of("transposed [4, 6] dim 1", {in({6, 4}, t, 5).t(), idx({3}, 6, 0, 5)}, {1}),
        sample_of("strided index", {in({5, 3}, t, 7), idx({8}, 8, 0, 4).slice(0, 0, std::nullopt, 2)}, {-2}),
        sample_of("0-d index", {in({5, 3}, t, 9), idx({}, 10, 0, 2)}, {1}),
        sample_of("zero-size index", {in({5, 3}, t, 11), idx({0}, 12, 0, 2)}, {1}),
        sample_of("int32 index", {in({5, 3}, t, 13), idx({4}, 14, 0, 4).to(DType::kI32)}, {0}),
        sample_of("larger than L2 [1024, 600] dim 0", {in({1024, 600}, t, 15), idx({900}, 16, 0, 1023)}, {0}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{index_select(x[0], s.dims[0], x[1])};
  };
  c.reference = [](const Sample& s) {
    Nd self(s.inputs[0]);
    std::vector<double> index = values_of(s.inputs[1]);
    if (self.shape.empty()) return std::vector<Expected>{Expected{{}, s.inputs[0].dtype(), self.v}};
    int64_t d = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(self.shape.size()) : s.dims[0];
    Shape shape = self.shape;
    shape[d] = static_cast<int64_t>(index.size());
    return std::vector<Expected>{build_expected(shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src = c;
      src[d] = static_cast<int64_t>(index[c[d]]);
      return self.at(src);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("gather") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d", {in({}, t, 1), idx({}, 2, 0, 0)}, {0}),
        sample_of("[4, 5] dim 1, index [3, 7]", {in({4, 5}, t, 3), idx({3, 7}, 4, 0, 4)}, {1}),
        sample_of("transposed self, dim 0", {in({5, 4}, t, 5).t(), idx({6, 3}, 6, 0, 3)}, {0}),
        sample_of("transposed index, dim -1", {in({4, 5}, t, 7), idx({2, 4}, 8, 0, 4).t()}, {-1}),
        sample_of("zero-size index", {in({4, 5}, t, 9), idx({0, 5}, 10, 0, 3)}, {0}),
        sample_of("larger than L2 [1024, 600] dim 1", {in({1024, 600}, t, 11), idx({1024, 600}, 12, 0, 599)}, {1}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{gather(x[0], s.dims[0], x[1])};
  };
  c.reference = [](const Sample& s) {
    Nd self(s.inputs[0]), index(s.inputs[1]);
    if (self.shape.empty()) return std::vector<Expected>{Expected{{}, s.inputs[0].dtype(), self.v}};
    int64_t d = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(self.shape.size()) : s.dims[0];
    return std::vector<Expected>{build_expected(index.shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src = c;
      src[d] = static_cast<int64_t>(index.at(c));
      return self.at(src);
    })};
  };
  return c;
}

namespace {
// Reference scatter: inputs are self, index, src (src absent: scalar value).
// add = scatter_add. Duplicates: the last in row-major order of index wins.
// float16/bfloat16 sums accumulate in float and round once, as PyTorch's
// CPU scatter_add.
Expected scatter_reference(const Sample& s, bool add) {
  Nd self(s.inputs[0]), index(s.inputs[1]);
  const bool has_src = s.inputs.size() > 2;
  Nd src = has_src ? Nd(s.inputs[2]) : Nd(s.inputs[1]);
  const DType result_dtype = s.inputs[0].dtype();
  const DType dtype = result_dtype == DType::kF16 || result_dtype == DType::kBF16
                          ? DType::kF32 : result_dtype;  // the sums'
  if (self.shape.empty()) {
    if (index.v.empty()) return as_expected(self, result_dtype);
    double v = has_src ? src.v[0] : s.scalars[0].to<double>();
    self.v[0] = add ? self.v[0] + v : v;
    return as_expected(self, result_dtype);
  }
  int64_t d = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(self.shape.size()) : s.dims[0];
  for_each_coord(index.shape, [&](const Shape& c) {
    Shape dst = c;
    dst[d] = static_cast<int64_t>(index.at(c));
    const double v = has_src ? src.at(c) : s.scalars[0].to<double>();
    double& out = self.at(dst);
    out = add ? round_to_dtype(out + v, dtype) : v;
  });
  return as_expected(self, result_dtype);
}

// Samples of scatter along dim 1 (or 0 for the transposed one). Without
// accumulation duplicates are unspecified in PyTorch, so every index row
// there is duplicate-free; scatter_add samples also have duplicates.
std::vector<Sample> scatter_samples(DType t, bool with_src, bool add) {
  std::vector<Sample> out;
  uint64_t seed = 1;
  auto push = [&](std::string desc, Tensor self, Tensor index, const Shape& src_shape,
                  int64_t dim) {
    std::vector<Tensor> inputs{std::move(self), std::move(index)};
    if (with_src) inputs.push_back(in(src_shape, t, seed++));
    out.push_back(sample_of(std::move(desc), std::move(inputs), {dim}, {2}));
  };
  push("0-d", in({}, t, 100), idx({}, 101, 0, 0), {}, 0);
  push("[4, 5] dim 1, index [3, 5]", in({4, 5}, t, seed++), unique_rows_index(3, 5, 5, 2), {3, 6}, 1);
  push("transposed self, index [2, 4] dim -1", in({5, 4}, t, seed++).t(),
       unique_rows_index(2, 4, 5, 3), {2, 4}, -1);
  push("transposed index dim 0", in({6, 3}, t, seed++), unique_rows_index(3, 4, 6, 5).t(), {5, 3}, 0);
  push("zero-size index", in({4, 5}, t, 102), idx({0, 5}, 103, 0, 3), {1, 5}, 0);
  push("larger than L2 [1024, 600] dim 1", in({1024, 600}, t, seed++),
       unique_rows_index(1024, 600, 600, 7), {1024, 600}, 1);
  if (add) {
    push("duplicates [4, 5] dim 1", in({4, 5}, t, 104), idx({4, 9}, 105, 0, 4), {4, 9}, 1);
  }
  return out;
}

}  // namespace

TESSERA_CONFORMANCE_OP("scatter") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return scatter_samples(t, true, false); };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{scatter(x[0], s.dims[0], x[1], x[2])};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{scatter_reference(s, false)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("scatter_ value") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return scatter_samples(t, false, false); };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor self = x[0].clone();
    scatter_(self, s.dims[0], x[1], s.scalars[0]);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{scatter_reference(s, false)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("scatter_add") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return scatter_samples(t, true, true); };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor a = scatter_add(x[0], s.dims[0], x[1], x[2]);
    return std::vector<Tensor>{a};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{scatter_reference(s, true)}; };
  return c;
}

TESSERA_CONFORMANCE_OP("scatter_out and scatter_add_out") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) { return scatter_samples(t, true, false); };  // unique indices
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    const TensorOptions opts(x[0].dtype(), x[0].device());
    Tensor replaced = empty(x[0].sizes(), opts), added = empty({0}, opts);
    scatter_out(replaced, x[0], s.dims[0], x[1], x[2]);
    scatter_add_out(added, x[0], s.dims[0], x[1], x[2]);
    return std::vector<Tensor>{replaced, added};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{scatter_reference(s, false), scatter_reference(s, true)};
  };
  return c;
}

namespace {
// Reference index_put with int64 index tensors on the leading dims.
// inputs: self, values, index tensors...
Expected index_put_reference(const Sample& s, bool accumulate) {
  Nd self(s.inputs[0]), values(s.inputs[1]);
  const DType dtype = s.inputs[0].dtype();
  std::vector<Nd> index;
  Shape b;
  for (size_t i = 2; i < s.inputs.size(); ++i) {
    index.emplace_back(s.inputs[i]);
    b = broadcast_shapes(b, s.inputs[i].sizes(), "reference");
  }
  const size_t k = index.size();
  Shape rest(self.shape.begin() + static_cast<int64_t>(k), self.shape.end());
  Shape full = b;
  full.insert(full.end(), rest.begin(), rest.end());
  Nd vals = Nd(s.inputs[1].expand(full));
  for_each_coord(full, [&](const Shape& c) {
    Shape dst;
    for (size_t d = 0; d < k; ++d) {
      // Broadcast coordinates of b into index d's shape.
      Shape ic;
      const size_t off = b.size() - index[d].shape.size();
      for (size_t j = 0; j < index[d].shape.size(); ++j) {
        ic.push_back(index[d].shape[j] == 1 ? 0 : c[off + j]);
      }
      int64_t v = static_cast<int64_t>(index[d].at(ic));
      if (v < 0) v += self.shape[d];
      dst.push_back(v);
    }
    for (size_t j = b.size(); j < c.size(); ++j) dst.push_back(c[j]);
    double& out = self.at(dst);
    out = accumulate ? round_to_dtype(out + vals.at(c), dtype) : vals.at(c);
  });
  (void)values;
  return as_expected(self, dtype);
}

// A duplicate-free int64 1-D host index of n values in [-size, size).
Tensor unique_index(int64_t n, int64_t size, int64_t step, bool negative) {
  Tensor t = empty({n}, TensorOptions(DType::kI64));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = (i * step) % size;
    t.data<int64_t>()[i] = negative && i % 2 ? v - size : v;
  }
  return t;
}
}  // namespace

TESSERA_CONFORMANCE_OP("index_put_") {
  OpCase c;
  c.dtypes = all_dtypes();
  // inputs: self, values, indices...; flag = accumulate.
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (bool acc : {false, true}) {
      std::string a = acc ? " accumulate" : "";
      out.push_back(sample_of("[5, 3] one index, 0-d value" + a,
                           {in({5, 3}, t, 1), in({}, t, 2), unique_index(3, 5, 2, true)}, {}, {}, acc));
      out.push_back(sample_of("transposed [4, 6] one index, row values" + a,
                           {in({6, 4}, t, 3).t(), in({6}, t, 4), unique_index(4, 4, 3, false)}, {}, {}, acc));
      out.push_back(sample_of("[4, 5, 2] two broadcast indices" + a,
                           {in({4, 5, 2}, t, 5), in({3, 1, 2}, t, 6), unique_index(3, 4, 1, false).reshape({3, 1}),
                            unique_index(1, 5, 1, true)}, {}, {}, acc));
      out.push_back(sample_of("[4, 5] full index" + a,
                           {in({4, 5}, t, 7), in({4}, t, 8), unique_index(4, 4, 3, false),
                            unique_index(4, 5, 2, true)}, {}, {}, acc));
      out.push_back(sample_of("zero-size index" + a,
                           {in({4, 5}, t, 9), in({}, t, 10), idx({0}, 11, 0, 3)}, {}, {}, acc));
    }
    out.push_back(sample_of("duplicates accumulate",
                         {in({5, 3}, t, 12), in({9, 3}, t, 13), idx({9}, 14, -5, 4)}, {}, {}, true));
    out.push_back(sample_of("larger than L2 [1024, 600] accumulate",
                         {in({1024, 600}, t, 15), in({600}, t, 16), idx({700}, 17, 0, 1023)}, {}, {}, true));
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor self = x[0].clone();
    std::vector<Tensor> indices(x.begin() + 2, x.end());
    index_put_(self, indices, x[1], s.flag);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) { return std::vector<Expected>{index_put_reference(s, s.flag)}; };
  // Accumulated float sums may round in another order.
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance tol = default_tolerance(t);
    if (s.flag && is_floating(t)) tol.atol = std::max(tol.atol, t == DType::kBF16 ? 0.1 : 1e-2);
    return tol;
  };
  return c;
}

TESSERA_CONFORMANCE_OP("index_put bool mask") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[4, 5] full mask, 0-d value", {in({4, 5}, t, 1), in({}, t, 2), mask({4, 5}, 3)}),
        sample_of("[4, 5] leading mask, row value", {in({4, 5}, t, 4), in({5}, t, 5), mask({4}, 6)}),
        sample_of("transposed self, transposed mask", {in({5, 4}, t, 7).t(), in({}, t, 8), mask({5, 4}, 9).t()}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    return std::vector<Tensor>{index_put(x[0], {x[2]}, x[1])};
  };
  c.reference = [](const Sample& s) {
    Nd self(s.inputs[0]), m(s.inputs[2]);
    const DType dtype = s.inputs[0].dtype();
    Nd vals(s.inputs[1].expand(self.shape));
    for_each_coord(self.shape, [&](const Shape& c) {
      Shape mc(c.begin(), c.begin() + static_cast<int64_t>(m.shape.size()));
      if (m.at(mc) != 0) self.at(c) = vals.at(c);
    });
    return std::vector<Expected>{as_expected(self, dtype)};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("masked_fill") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d", {in({}, t, 1), mask({}, 2)}),
        sample_of("[5, 7]", {in({5, 7}, t, 3), mask({5, 7}, 4)}),
        sample_of("transposed self, broadcast mask", {in({7, 5}, t, 5).t(), mask({7}, 6)}),
        sample_of("broadcast self", {in({1, 6}, t, 7), mask({4, 6}, 8)}),
        sample_of("zero-size", {in({0, 3}, t, 9), mask({0, 3}, 10)}),
        sample_of("larger than L2 [1024, 600]", {in({1024, 600}, t, 11), mask({1024, 600}, 12)}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    return std::vector<Tensor>{masked_fill(x[0], x[1], 1)};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(),
                                               [](const std::vector<double>& v) { return v[1] != 0 ? 1.0 : v[0]; })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("masked_fill_ tensor value") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[5, 7]", {in({5, 7}, t, 1), mask({5, 7}, 2), in({}, t, 3)}),
        sample_of("transposed, broadcast mask", {in({7, 5}, t, 4).t(), mask({1, 7}, 5), in({}, t, 6)}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    Tensor self = x[0].clone();
    masked_fill_(self, x[1], x[2]);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(),
                                               [](const std::vector<double>& v) { return v[1] != 0 ? v[2] : v[0]; })};
  };
  return c;
}

namespace {

OpCase masked_select_case() {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d", {in({}, t, 1), mask({}, 2)}),
        sample_of("[5, 7]", {in({5, 7}, t, 3), mask({5, 7}, 4)}),
        sample_of("transposed self, broadcast mask", {in({7, 5}, t, 5).t(), mask({7}, 6)}),
        sample_of("zero-size", {in({0, 3}, t, 7), mask({0, 3}, 8)}),
        sample_of("larger than L2 [1024, 600]", {in({1024, 600}, t, 9), mask({1024, 600}, 10)}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    return std::vector<Tensor>{masked_select(x[0], x[1])};
  };
  c.reference = [](const Sample& s) {
    Shape b = broadcast_shapes(s.inputs[0].sizes(), s.inputs[1].sizes(), "reference");
    std::vector<double> v = values_of(s.inputs[0].expand(b)), m = values_of(s.inputs[1].expand(b));
    Expected e{{0}, s.inputs[0].dtype(), {}};
    for (size_t i = 0; i < v.size(); ++i) {
      if (m[i] != 0) e.values.push_back(v[i]);
    }
    e.sizes = {static_cast<int64_t>(e.values.size())};
    return std::vector<Expected>{e};
  };
  return c;
}

OpCase nonzero_case() {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    // Values in [-1, 1] so integer inputs have zeros.
    auto z = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed, -1, 1); };
    return std::vector<Sample>{
        sample_of("0-d", {z({}, 1)}),
        sample_of("[5, 7]", {z({5, 7}, 2)}),
        sample_of("transposed [3, 4, 2]", {z({2, 4, 3}, 3).permute({2, 1, 0})}),
        sample_of("zero-size", {z({0, 3}, 4)}),
        sample_of("larger than L2 [1024, 600]", {z({1024, 600}, 5)}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) { return std::vector<Tensor>{nonzero(x[0])}; };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    Expected e{{0, static_cast<int64_t>(x.shape.size())}, DType::kI64, {}};
    int64_t n = 0;
    for_each_coord(x.shape, [&](const Shape& c) {
      if (x.at(c) == 0) return;
      ++n;
      for (int64_t v : c) e.values.push_back(static_cast<double>(v));
    });
    e.sizes[0] = n;
    return std::vector<Expected>{e};
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("masked_select") { return masked_select_case(); }
TESSERA_CONFORMANCE_OP("nonzero") { return nonzero_case(); }

// Data-dependent sizes: the outs start empty and take the result's shape.
TESSERA_CONFORMANCE_OP("masked_select_out and nonzero_out") {
  OpCase c = masked_select_case();
  auto select_ref = c.reference;
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    Tensor selected = empty({0}, TensorOptions(x[0].dtype(), x[0].device()));
    Tensor where = empty({0}, TensorOptions(DType::kI64, x[0].device()));
    masked_select_out(selected, x[0], x[1]);
    nonzero_out(where, x[1]);
    return std::vector<Tensor>{selected, where};
  };
  auto nonzero_ref = nonzero_case().reference;
  c.reference = [select_ref, nonzero_ref](const Sample& s) {
    Sample mask_only = s;
    mask_only.inputs = {s.inputs[1]};
    return std::vector<Expected>{select_ref(s)[0], nonzero_ref(mask_only)[0]};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("one_hot") {
  OpCase c;
  c.dtypes = {DType::kI64};
  c.samples = [](DType) {
    return std::vector<Sample>{
        sample_of("0-d, inferred", {idx({}, 1, 0, 3)}, {-1}),
        sample_of("[5] with 6 classes", {idx({5}, 2, 0, 5)}, {6}),
        sample_of("transposed [3, 4], inferred", {idx({4, 3}, 3, 0, 4).t()}, {-1}),
        sample_of("zero-size with 3 classes", {idx({0}, 4, 0, 2)}, {3}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{one_hot(x[0], s.dims[0])};
  };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    int64_t classes = s.dims[0];
    if (classes < 0) {
      classes = 0;
      for (double v : x.v) classes = std::max(classes, static_cast<int64_t>(v) + 1);
    }
    Shape shape = x.shape;
    shape.push_back(classes);
    return std::vector<Expected>{build_expected(shape, DType::kI64, [&](const Shape& c) {
      Shape src(c.begin(), c.end() - 1);
      return x.at(src) == static_cast<double>(c.back()) ? 1.0 : 0.0;
    })};
  };
  return c;
}

}  // namespace tessera::conformance
