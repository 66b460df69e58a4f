// scatter_reduce (sum, prod, mean, amax, amin; with and without self),
// scatter with reduce= (add, multiply) and index_reduce: conformance cases
// against a reference that folds in row-major order of index, rounding to
// the dtype after every step (float16/bfloat16 sums and products of
// scatter_reduce: in float, rounded once, as PyTorch's CPU kernel), and
// their error cases.
#include <cmath>
#include <limits>
#include <string>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Tensor in(const Shape& s, DType t, uint64_t seed) { return make_input(s, t, seed); }
Tensor idx(const Shape& s, uint64_t seed, int64_t lo, int64_t hi) {
  return make_input(s, DType::kI64, seed, static_cast<double>(lo), static_cast<double>(hi));
}

double dtype_lowest(DType t) {
  switch (t) {
    case DType::kBool: return 0;
    case DType::kU8: return 0;
    case DType::kI8: return -128;
    case DType::kI16: return -32768;
    case DType::kI32: return -2147483648.0;
    case DType::kI64: return -9223372036854775808.0;
    default: return -std::numeric_limits<double>::infinity();
  }
}

double dtype_highest(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kU8: return 255;
    case DType::kI8: return 127;
    case DType::kI16: return 32767;
    case DType::kI32: return 2147483647.0;
    case DType::kI64: return 9223372036854775807.0;
    default: return std::numeric_limits<double>::infinity();
  }
}

double identity_of(const std::string& reduce, DType t) {
  if (reduce == "prod") return 1;
  if (reduce == "amax") return dtype_lowest(t);
  if (reduce == "amin") return dtype_highest(t);
  return 0;
}

double fold(const std::string& reduce, double acc, double v, DType t) {
  if (reduce == "prod") return round_to_dtype(acc * v, t);
  if (reduce == "amax" || reduce == "amin") {
    if (std::isnan(v)) return v;
    const bool take = reduce == "amax" ? acc < v : v < acc;
    return take ? v : acc;
  }
  return round_to_dtype(acc + v, t);  // sum, mean (bool: or)
}

// self with src folded in along dims[0] at index; inputs self, index, src,
// flag = include_self. halves_once: float16/bfloat16 sums and products
// accumulate in float and round once (scatter_reduce), else after every
// step (index_reduce).
Expected scatter_reduce_reference(const Sample& s, const std::string& reduce, bool halves_once) {
  Nd self(s.inputs[0]), index(s.inputs[1]), src(s.inputs[2]);
  const DType dtype = s.inputs[0].dtype();
  const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
  const DType t = halves_once && half ? DType::kF32 : dtype;  // the accumulation's
  const Shape result_shape = self.shape;
  if (self.shape.empty()) {  // a 0-d tensor scatters as a 1-element 1-D one
    self.shape = index.shape = src.shape = {1};
  }
  const int64_t d = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(self.shape.size()) : s.dims[0];
  std::vector<double> count(self.v.size(), s.flag ? 1.0 : 0.0);
  auto destination = [&](const Shape& c) {
    Shape dst = c;
    dst[d] = static_cast<int64_t>(index.at(c));
    return dst;
  };
  if (!s.flag) for_each_coord(index.shape, [&](const Shape& c) { self.at(destination(c)) = identity_of(reduce, t); });
  for_each_coord(index.shape, [&](const Shape& c) {
    const Shape dst = destination(c);
    self.at(dst) = fold(reduce, self.at(dst), src.at(c), t);
    count[static_cast<size_t>(self.offset(dst))] += 1;
  });
  for (double& v : self.v) v = round_to_dtype(v, dtype);
  if (reduce == "mean") {
    for (size_t i = 0; i < self.v.size(); ++i) {
      const double n = count[i] == 0 ? 1 : count[i];
      self.v[i] = is_floating(dtype) ? round_to_dtype(self.v[i] / n, dtype) : std::floor(self.v[i] / n);
    }
  }
  return Expected{result_shape, dtype, self.v};
}

// Samples with duplicate destinations (the folds' order matters), each
// with and without self.
std::vector<Sample> scatter_reduce_samples(DType t) {
  std::vector<Sample> out;
  for (bool include_self : {true, false}) {
    const std::string with = include_self ? "" : ", without self";
    auto push = [&](std::string desc, Tensor self, Tensor index, Tensor src, int64_t dim) {
      out.push_back(sample_of(desc + with, {std::move(self), std::move(index), std::move(src)},
                              {dim}, {}, include_self));
    };
    push("0-d", in({}, t, 1), idx({}, 2, 0, 0), in({}, t, 3), 0);
    push("[4, 5] dim 1, index [4, 9] with duplicates", in({4, 5}, t, 4), idx({4, 9}, 5, 0, 4),
         in({4, 9}, t, 6), 1);
    push("[6, 3] dim 0, index [8, 2], src [9, 3]", in({6, 3}, t, 7), idx({8, 2}, 8, 0, 5),
         in({9, 3}, t, 9), 0);
    push("transposed self dim -1", in({5, 4}, t, 10).t(), idx({3, 7}, 11, 0, 4), in({3, 7}, t, 12),
         -1);
    push("transposed index and src dim 0", in({6, 3}, t, 13), idx({3, 5}, 14, 0, 5).t(),
         in({3, 5}, t, 15).t(), 0);
    push("expanded src", in({4, 5}, t, 16), idx({4, 6}, 17, 0, 4), in({4, 1}, t, 18).expand({4, 6}),
         1);
    push("zero-size index", in({4, 5}, t, 19), idx({0, 5}, 20, 0, 3), in({1, 5}, t, 21), 0);
    push("[512, 300] dim 1, index [512, 600]", in({512, 300}, t, 22),
         unique_rows_index(512, 600, 300, 7), in({512, 600}, t, 23), 1);
  }
  return out;
}

OpCase scatter_reduce_case(std::string reduce, std::vector<DType> dtypes) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = scatter_reduce_samples;
  c.run = [reduce](const std::vector<Tensor>& x, const Sample& s) {
    Tensor inplace = x[0].clone();
    scatter_reduce_(inplace, s.dims[0], x[1], x[2], reduce, s.flag);
    return std::vector<Tensor>{scatter_reduce(x[0], s.dims[0], x[1], x[2], reduce, s.flag),
                               inplace};
  };
  c.reference = [reduce](const Sample& s) {
    const Expected e = scatter_reduce_reference(s, reduce, /*halves_once=*/true);
    return std::vector<Expected>{e, e};
  };
  return c;
}

std::vector<DType> all_but_bool() { return numeric_dtypes(); }

}  // namespace

TESSERA_CONFORMANCE_OP("scatter_reduce sum") { return scatter_reduce_case("sum", all_dtypes()); }
TESSERA_CONFORMANCE_OP("scatter_reduce prod") { return scatter_reduce_case("prod", all_dtypes()); }
TESSERA_CONFORMANCE_OP("scatter_reduce mean") { return scatter_reduce_case("mean", all_but_bool()); }
TESSERA_CONFORMANCE_OP("scatter_reduce amax") { return scatter_reduce_case("amax", all_dtypes()); }
TESSERA_CONFORMANCE_OP("scatter_reduce amin") { return scatter_reduce_case("amin", all_dtypes()); }

TESSERA_CONFORMANCE_OP("scatter reduce= add and multiply") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : scatter_reduce_samples(t)) {
      if (s.flag) out.push_back(std::move(s));  // scatter's reduce= always includes self
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor value_multiplied = x[0].clone();
    scatter_(value_multiplied, s.dims[0], x[1], Scalar(2), "multiply");
    return std::vector<Tensor>{scatter(x[0], s.dims[0], x[1], x[2], "add"),
                               scatter(x[0], s.dims[0], x[1], x[2], "multiply"),
                               value_multiplied};
  };
  c.reference = [](const Sample& s) {
    Sample twos = s;
    twos.inputs[2] = full(s.inputs[1].sizes(), 2, TensorOptions(s.inputs[0].dtype()));
    return std::vector<Expected>{scatter_reduce_reference(s, "sum", true),
                                 scatter_reduce_reference(s, "prod", true),
                                 scatter_reduce_reference(twos, "prod", true)};
  };
  return c;
}

namespace {

// index_reduce as a scatter_reduce of the 1-D index viewed along dim and
// expanded over source: inputs self, index (1-D), source.
Expected index_reduce_reference(const Sample& s, const std::string& reduce) {
  const Tensor& self = s.inputs[0];
  const Tensor& source = s.inputs[2];
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  const int64_t d = s.dims[0] < 0 ? s.dims[0] + rank : s.dims[0];
  Shape along(static_cast<size_t>(rank), 1);
  const Tensor source1 = source.dim() == 0 ? source.reshape({1}) : source;
  along[d] = source1.size(d);
  Sample as_scatter = s;
  as_scatter.inputs[0] = self.dim() == 0 ? self.reshape({1}) : self;
  as_scatter.inputs[1] = s.inputs[1].to(DType::kI64).reshape(along).expand(source1.sizes()).contiguous();
  as_scatter.inputs[2] = source1;
  as_scatter.dims = {d};
  Expected e = scatter_reduce_reference(as_scatter, reduce, /*halves_once=*/false);
  e.sizes = self.sizes();
  return e;
}

std::vector<Sample> index_reduce_samples(DType t) {
  std::vector<Sample> out;
  for (bool include_self : {true, false}) {
    const std::string with = include_self ? "" : ", without self";
    auto push = [&](std::string desc, Tensor self, Tensor index, Tensor source, int64_t dim) {
      out.push_back(sample_of(desc + with, {std::move(self), std::move(index), std::move(source)},
                              {dim}, {}, include_self));
    };
    push("0-d", in({}, t, 1), idx({1}, 2, 0, 0), in({}, t, 3), 0);
    push("[5, 3] dim 0, 7 indices with duplicates", in({5, 3}, t, 4), idx({7}, 5, 0, 4),
         in({7, 3}, t, 6), 0);
    push("transposed self dim 1", in({4, 6}, t, 7).t(), idx({9}, 8, 0, 3), in({6, 9}, t, 9), 1);
    push("int32 index, dim -1 of [2, 3, 4]", in({2, 3, 4}, t, 10),
         idx({5}, 11, 0, 3).to(DType::kI32), in({2, 3, 5}, t, 12), -1);
    push("strided index", in({5, 3}, t, 13), idx({8}, 14, 0, 4).slice(0, 0, std::nullopt, 2),
         in({4, 3}, t, 15), 0);
    push("[300, 64] dim 0, 700 indices", in({300, 64}, t, 16), idx({700}, 17, 0, 299),
         in({700, 64}, t, 18), 0);
  }
  return out;
}

OpCase index_reduce_case(std::string reduce, std::vector<DType> dtypes) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = index_reduce_samples;
  c.run = [reduce](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{index_reduce(x[0], s.dims[0], x[1], x[2], reduce, s.flag)};
  };
  c.reference = [reduce](const Sample& s) {
    return std::vector<Expected>{index_reduce_reference(s, reduce)};
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("index_reduce prod") { return index_reduce_case("prod", all_dtypes()); }
TESSERA_CONFORMANCE_OP("index_reduce mean") { return index_reduce_case("mean", all_but_bool()); }
TESSERA_CONFORMANCE_OP("index_reduce amax") { return index_reduce_case("amax", all_dtypes()); }
TESSERA_CONFORMANCE_OP("index_reduce amin") { return index_reduce_case("amin", all_dtypes()); }

TESSERA_CONFORMANCE_ERRORS("scatter_reduce index_reduce") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"unknown reduction",
       [i64](Device d) { scatter_reduce(ones({3, 4}, d), 0, zeros({1, 1}, i64(d)), ones({1, 1}, d), "max"); },
       ErrorKind::kValue,
       {"scatter_reduce", "sum, prod, mean, amax or amin", "'max'"}},
      {"index out of range",
       [i64](Device d) { scatter_reduce(ones({3, 4}, d), 0, full({1, 1}, 3, i64(d)), ones({1, 1}, d), "amax"); },
       ErrorKind::kIndex,
       {"scatter_reduce", "index 3", "dimension 0", "size 3"}},
      {"src of another dtype",
       [i64](Device d) {
         scatter_reduce(ones({3, 4}, d), 0, zeros({1, 1}, i64(d)),
                        ones({1, 1}, TensorOptions(DType::kF64, d)), "sum");
       },
       ErrorKind::kType,
       {"scatter_reduce", "float32", "float64"}},
      {"mean of bool",
       [i64](Device d) {
         scatter_reduce(ones({3}, TensorOptions(DType::kBool, d)), 0, zeros({1}, i64(d)),
                        ones({1}, TensorOptions(DType::kBool, d)), "mean");
       },
       ErrorKind::kType,
       {"scatter_reduce", "mean", "bool"}},
      {"scatter reduce= of another name",
       [i64](Device d) { scatter(ones({3, 4}, d), 0, zeros({1, 1}, i64(d)), ones({1, 1}, d), "sum"); },
       ErrorKind::kValue,
       {"scatter", "add or multiply", "'sum'"}},
      {"index_reduce sum",
       [i64](Device d) { index_reduce(ones({3, 4}, d), 0, zeros({1}, i64(d)), ones({1, 4}, d), "sum"); },
       ErrorKind::kValue,
       {"index_reduce", "prod, mean, amax or amin", "'sum'"}},
      {"index_reduce index count",
       [i64](Device d) { index_reduce(ones({3, 4}, d), 0, zeros({2}, i64(d)), ones({1, 4}, d), "amax"); },
       ErrorKind::kValue,
       {"index_reduce", "Number of indices (2)", "source.size(dim) (1)"}},
      {"index_reduce slice shapes",
       [i64](Device d) { index_reduce(ones({3, 4}, d), 0, zeros({1}, i64(d)), ones({1, 3}, d), "amax"); },
       ErrorKind::kValue,
       {"index_reduce", "[1, 3]", "[3, 4]"}},
      {"index_reduce index out of range",
       [i64](Device d) { index_reduce(ones({3, 4}, d), 1, full({2}, 4, i64(d)), ones({3, 2}, d), "prod"); },
       ErrorKind::kIndex,
       {"index_reduce", "index 4", "dimension 1", "size 4"}},
      {"index_reduce 2-D index",
       [i64](Device d) { index_reduce(ones({3, 4}, d), 0, zeros({1, 1}, i64(d)), ones({1, 4}, d), "prod"); },
       ErrorKind::kIndex,
       {"index_reduce", "vector"}},
  };
}

}  // namespace tessera::conformance
