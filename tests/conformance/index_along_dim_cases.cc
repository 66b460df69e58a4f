// index_add, index_copy and index_fill: conformance cases against a
// reference that writes source's slices into self's at index in index
// order (index_add: adding, rounded after every step, or in float rounded
// once for float16/bfloat16 with alpha 1 and more than one dim, as
// PyTorch's CPU kernel; index_copy: the last write wins), and their error
// cases.
#include <algorithm>
#include <string>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Tensor in(const Shape& s, DType t, uint64_t seed) { return make_input(s, t, seed); }
Tensor idx(const Shape& s, uint64_t seed, int64_t lo, int64_t hi) {
  return make_input(s, DType::kI64, seed, static_cast<double>(lo), static_cast<double>(hi));
}

// The slice's coordinate in self: c with index[c[d]] along d (negative
// entries counted from the end).
Shape self_coord(const Shape& c, int64_t d, const Nd& index, int64_t size) {
  Shape dst = c;
  int64_t k = static_cast<int64_t>(index.v[static_cast<size_t>(c[d])]);
  dst[d] = k < 0 ? k + size : k;
  return dst;
}

enum class Write { kAdd, kCopy };

// inputs self, index (at most 1-D), source; dims[0] the dim; scalars[0]
// index_add's alpha.
Expected along_dim_reference(const Sample& s, Write write, double alpha) {
  Nd self(s.inputs[0]), index(s.inputs[1]), source(s.inputs[2]);
  const DType dtype = s.inputs[0].dtype();
  const Shape result_shape = self.shape;
  const bool once = (dtype == DType::kF16 || dtype == DType::kBF16) && alpha == 1.0 &&
                    self.shape.size() > 1;
  const DType t = once ? DType::kF32 : dtype;  // the accumulation's
  if (self.shape.empty()) self.shape = source.shape = {1};
  if (index.shape.empty()) index.shape = {1};
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  const int64_t d = s.dims[0] < 0 ? s.dims[0] + rank : s.dims[0];
  // In index order: the outer loop runs over source's slices along d.
  Shape slice_shape = source.shape;
  slice_shape[d] = 1;
  for (int64_t i = 0; i < source.shape[d]; ++i) {
    for_each_coord(slice_shape, [&](const Shape& c0) {
      Shape c = c0;
      c[d] = i;
      double& dst = self.at(self_coord(c, d, index, self.shape[d]));
      const double v = source.at(c);
      dst = write == Write::kCopy ? v : round_to_dtype(dst + round_to_dtype(alpha * v, dtype), t);
    });
  }
  for (double& v : self.v) v = round_to_dtype(v, dtype);
  return Expected{result_shape, dtype, self.v};
}

// Samples with repeated indices (the order of the writes matters).
std::vector<Sample> along_dim_samples(DType t) {
  std::vector<Sample> out;
  auto push = [&](std::string desc, Tensor self, Tensor index, Tensor source, int64_t dim) {
    out.push_back(sample_of(std::move(desc), {std::move(self), std::move(index), std::move(source)},
                            {dim}));
  };
  push("0-d", in({}, t, 1), idx({1}, 2, 0, 0), in({}, t, 3), 0);
  push("0-d index into [4]", in({4}, t, 4), idx({}, 5, 0, 3), in({1}, t, 6), 0);
  push("[5, 3] dim 0, 7 indices with repeats", in({5, 3}, t, 7), idx({7}, 8, 0, 4),
       in({7, 3}, t, 9), 0);
  push("transposed self dim 1", in({4, 6}, t, 10).t(), idx({9}, 11, 0, 3), in({6, 9}, t, 12), 1);
  push("int32 index, dim -1 of [2, 3, 4]", in({2, 3, 4}, t, 13),
       idx({5}, 14, 0, 3).to(DType::kI32), in({2, 3, 5}, t, 15), -1);
  push("strided index, expanded source", in({5, 3}, t, 16),
       idx({8}, 17, 0, 4).slice(0, 0, std::nullopt, 2), in({1, 3}, t, 18).expand({4, 3}), 0);
  push("no indices", in({4, 3}, t, 19), idx({0}, 20, 0, 3), in({0, 3}, t, 21), 0);
  push("[300, 64] dim 0, 700 indices", in({300, 64}, t, 22), idx({700}, 23, 0, 299),
       in({700, 64}, t, 24), 0);
  return out;
}

double alpha_for(DType t) { return t == DType::kBool ? 1.0 : 2.0; }

}  // namespace

TESSERA_CONFORMANCE_OP("index_add") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = along_dim_samples;
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    const double alpha = alpha_for(x[0].dtype());
    Tensor inplace = x[0].clone();
    index_add_(inplace, s.dims[0], x[1], x[2], Scalar(static_cast<int64_t>(alpha)));
    Tensor out = empty({0}, TensorOptions(x[0].dtype(), x[0].device()));
    index_add_out(out, x[0], s.dims[0], x[1], x[2]);
    return std::vector<Tensor>{index_add(x[0], s.dims[0], x[1], x[2]), inplace, out};
  };
  c.reference = [](const Sample& s) {
    const Expected once = along_dim_reference(s, Write::kAdd, 1.0);
    return std::vector<Expected>{
        once, along_dim_reference(s, Write::kAdd, alpha_for(s.inputs[0].dtype())), once};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("index_copy") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = along_dim_samples;
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor inplace = x[0].clone();
    index_copy_(inplace, s.dims[0], x[1], x[2]);
    return std::vector<Tensor>{index_copy(x[0], s.dims[0], x[1], x[2]), inplace};
  };
  c.reference = [](const Sample& s) {
    const Expected e = along_dim_reference(s, Write::kCopy, 1.0);
    return std::vector<Expected>{e, e};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("index_fill") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : along_dim_samples(t)) {
      // Negative entries count from the end: shift every other one down.
      const Tensor& self = s.inputs[0];
      const int64_t rank = std::max<int64_t>(self.dim(), 1);
      const int64_t d = s.dims[0] < 0 ? s.dims[0] + rank : s.dims[0];
      const int64_t size = self.dim() == 0 ? 1 : self.size(d);
      const int64_t n = s.inputs[1].numel();
      Tensor shift = zeros({n}, TensorOptions(DType::kI64));
      for (int64_t i = 1; i < n; i += 2) shift.select(0, i).fill_(-size);
      s.inputs[1] = add(s.inputs[1].to(DType::kI64), shift.view(s.inputs[1].sizes()));
      s.description += ", negative indices";
      out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor inplace = x[0].clone();
    index_fill_(inplace, s.dims[0], x[1], Scalar(int64_t{1}));
    return std::vector<Tensor>{index_fill(x[0], s.dims[0], x[1], Scalar(int64_t{1})), inplace};
  };
  c.reference = [](const Sample& s) {
    Sample ones_source = s;
    Shape sizes = s.inputs[0].dim() == 0 ? Shape{1} : s.inputs[0].sizes();
    const int64_t d = s.dims[0] < 0 ? s.dims[0] + static_cast<int64_t>(sizes.size()) : s.dims[0];
    sizes[d] = s.inputs[1].numel();
    ones_source.inputs[2] = ones(sizes, TensorOptions(s.inputs[0].dtype()));
    if (s.inputs[0].dim() == 0) ones_source.inputs[2] = ones_source.inputs[2].reshape({});
    const Expected e = along_dim_reference(ones_source, Write::kCopy, 1.0);
    return std::vector<Expected>{e, e};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("index_add index_copy index_fill") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"index count",
       [i64](Device d) { index_add(ones({3, 4}, d), 0, zeros({2}, i64(d)), ones({1, 4}, d)); },
       ErrorKind::kValue,
       {"index_add_", "Number of indices (2)", "source.size(dim) (1)"}},
      {"slice shapes",
       [i64](Device d) { index_copy(ones({3, 4}, d), 0, zeros({1}, i64(d)), ones({1, 3}, d)); },
       ErrorKind::kValue,
       {"index_copy_", "[1, 3]", "[3, 4]", "dim 0"}},
      {"source rank",
       [i64](Device d) { index_add(ones({3}, d), 0, zeros({1}, i64(d)), ones({}, d)); },
       ErrorKind::kValue,
       {"index_add_", "as many dims"}},
      {"source dtype",
       [i64](Device d) {
         index_add(ones({3, 4}, d), 0, zeros({1}, i64(d)),
                   ones({1, 4}, TensorOptions(DType::kF64, d)));
       },
       ErrorKind::kType,
       {"index_add_", "float32", "float64"}},
      {"float index",
       [](Device d) { index_copy(ones({3, 4}, d), 0, zeros({1}, d), ones({1, 4}, d)); },
       ErrorKind::kType,
       {"index_copy_", "int32/int64"}},
      {"2-D index",
       [i64](Device d) { index_fill(ones({3, 4}, d), 0, zeros({1, 1}, i64(d)), Scalar(1.0)); },
       ErrorKind::kIndex,
       {"index_fill_", "vector"}},
      {"index out of range",
       [i64](Device d) { index_add(ones({3, 4}, d), 1, full({2}, 4, i64(d)), ones({3, 2}, d)); },
       ErrorKind::kIndex,
       {"index_add_", "index 4", "dimension 1", "size 4"}},
      {"negative index_copy index",
       [i64](Device d) { index_copy(ones({3, 4}, d), 0, full({1}, -1, i64(d)), ones({1, 4}, d)); },
       ErrorKind::kIndex,
       {"index_copy_", "index -1", "dimension 0", "size 3"}},
      {"index_fill index below -size",
       [i64](Device d) { index_fill(ones({3, 4}, d), 0, full({1}, -4, i64(d)), Scalar(1.0)); },
       ErrorKind::kIndex,
       {"index_fill_", "index -4", "size 3"}},
      {"dim out of range",
       [i64](Device d) { index_fill(ones({3, 4}, d), 2, zeros({1}, i64(d)), Scalar(1.0)); },
       ErrorKind::kIndex,
       {"index_fill_", "2"}},
  };
}

}  // namespace tessera::conformance
