// cat, stack, split, chunk, flip, roll, repeat, constant_pad: conformance
// cases with naive references over row-major coordinates.
#include <numeric>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// Reference cat of the inputs along dim (legacy 1-D empty inputs skipped).
Expected cat_reference(const std::vector<Tensor>& in, int64_t dim) {
  DType dtype = in[0].dtype();
  std::vector<Nd> parts;
  for (const Tensor& t : in) {
    dtype = promote_types(dtype, t.dtype());
    if (!(t.dim() == 1 && t.numel() == 0)) parts.emplace_back(t);
  }
  if (parts.empty()) return Expected{{0}, dtype, {}};
  Shape shape = parts[0].shape;
  if (dim < 0) dim += static_cast<int64_t>(shape.size());
  shape[dim] = 0;
  for (const Nd& p : parts) shape[dim] += p.shape[dim];
  return build_expected(shape, dtype, [&](const Shape& c) {
    Shape local = c;
    for (const Nd& p : parts) {
      if (local[dim] < p.shape[dim]) return p.at(local);
      local[dim] -= p.shape[dim];
    }
    return 0.0;
  });
}

Tensor in(const Shape& s, DType t, uint64_t seed) { return make_input(s, t, seed); }

}  // namespace

TESSERA_CONFORMANCE_OP("cat") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[2, 3] + [4, 3] dim 0", {in({2, 3}, t, 1), in({4, 3}, t, 2)}, {0}),
        sample_of("transposed [5, 3] + [5, 2] dim -1", {in({3, 5}, t, 3).t(), in({5, 2}, t, 4)}, {-1}),
        sample_of("zero-size [0, 3] + [2, 3] + strided", {in({0, 3}, t, 5), in({2, 3}, t, 6),
                                                        in({2, 6}, t, 7).slice(1, 0, std::nullopt, 2)},
               {0}),
        sample_of("legacy empty [0] skipped", {in({0}, t, 8), in({2, 3}, t, 9)}, {1}),
        sample_of("three 1-D", {in({1}, t, 10), in({4}, t, 11), in({2}, t, 12)}, {0}),
        sample_of("expanded [1, 6] to [3, 6] + [3, 6] dim 1",
               {in({1, 6}, t, 13).expand({3, 6}), in({3, 6}, t, 14)}, {1}),
        sample_of("larger than L2 [512, 600] + [512, 500] dim 1",
               {in({512, 600}, t, 15), in({512, 500}, t, 16)}, {1}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{cat(x, s.dims[0])};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{cat_reference(s.inputs, s.dims[0])};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("cat mixed dtypes") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("with int32", {in({2, 3}, t, 1), in({1, 3}, DType::kI32, 2)}, {0}),
        sample_of("with float16", {in({2, 3}, t, 3), in({2, 2}, DType::kF16, 4)}, {1}),
        sample_of("with bool", {in({2}, DType::kBool, 5), in({3}, t, 6)}, {0}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{cat(x, s.dims[0])};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{cat_reference(s.inputs, s.dims[0])};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("cat_out") {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kI64};
  c.samples = [](DType t) {
    return std::vector<Sample>{sample_of("[2, 3] + [4, 3]", {in({2, 3}, t, 1), in({4, 3}, t, 2)}, {0})};
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Tensor out = empty({6, 3}, TensorOptions(DType::kF64, x[0].device()));
    cat_out(out, x, s.dims[0]);
    return std::vector<Tensor>{out};
  };
  c.reference = [](const Sample& s) {
    Expected e = cat_reference(s.inputs, 0);
    e.dtype = DType::kF64;
    return std::vector<Expected>{e};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("stack") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d", {in({}, t, 1), in({}, t, 2)}, {0}),
        sample_of("[2, 3] dim 1", {in({2, 3}, t, 3), in({3, 2}, t, 4).t(), in({2, 3}, t, 5)}, {1}),
        sample_of("[2, 3] dim -1", {in({2, 3}, t, 6), in({2, 3}, t, 7)}, {-1}),
        sample_of("zero-size", {in({0, 3}, t, 8), in({0, 3}, t, 9)}, {0}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{stack(x, s.dims[0])};
  };
  c.reference = [](const Sample& s) {
    const int64_t nd = s.inputs[0].dim() + 1;
    int64_t d = s.dims[0] < 0 ? s.dims[0] + nd : s.dims[0];
    std::vector<Nd> parts;
    for (const Tensor& t : s.inputs) parts.emplace_back(t);
    Shape shape = s.inputs[0].sizes();
    shape.insert(shape.begin() + d, static_cast<int64_t>(parts.size()));
    return std::vector<Expected>{build_expected(shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape local = c;
      local.erase(local.begin() + d);
      return parts[c[d]].at(local);
    })};
  };
  return c;
}

namespace {
// Reference of a split into pieces of the given sizes along dim.
std::vector<Expected> split_reference(const Tensor& t, int64_t dim, const Shape& sizes) {
  Nd x(t);
  std::vector<Expected> out;
  int64_t start = 0;
  for (int64_t n : sizes) {
    Shape shape = x.shape;
    shape[dim] = n;
    out.push_back(build_expected(shape, t.dtype(), [&](const Shape& c) {
      Shape src = c;
      src[dim] += start;
      return x.at(src);
    }));
    start += n;
  }
  return out;
}
}  // namespace

TESSERA_CONFORMANCE_OP("split") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[7, 3] by 3", {in({7, 3}, t, 1)}, {0}, {3}),
        sample_of("transposed [3, 8] by 4 dim 1", {in({8, 3}, t, 2).t()}, {1}, {4}),
        sample_of("[5, 2] by sizes [1, 0, 4]", {in({5, 2}, t, 3)}, {0, 1, 0, 4}, {-1}),
        sample_of("zero-size [0, 2] by 2", {in({0, 2}, t, 4)}, {0}, {2}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    if (s.scalars[0].to<int64_t>() < 0) {
      return split(x[0], Shape(s.dims.begin() + 1, s.dims.end()), s.dims[0]);
    }
    return split(x[0], s.scalars[0].to<int64_t>(), s.dims[0]);
  };
  c.reference = [](const Sample& s) {
    const int64_t dim = s.dims[0];
    const int64_t n = s.inputs[0].sizes()[dim];
    Shape sizes;
    const int64_t size = s.scalars[0].to<int64_t>();
    if (size < 0) {
      sizes.assign(s.dims.begin() + 1, s.dims.end());
    } else if (n == 0) {
      sizes = {0};
    } else {
      for (int64_t st = 0; st < n; st += size) sizes.push_back(std::min(size, n - st));
    }
    return split_reference(s.inputs[0], dim, sizes);
  };
  return c;
}

TESSERA_CONFORMANCE_OP("chunk") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[5, 2] into 3", {in({5, 2}, t, 1)}, {0}, {3}),
        sample_of("[5, 2] into 4", {in({5, 2}, t, 2)}, {0}, {4}),
        sample_of("[2, 6] into 2 along dim 1", {in({2, 6}, t, 3)}, {1}, {2}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return chunk(x[0], s.scalars[0].to<int64_t>(), s.dims[0]);
  };
  c.reference = [](const Sample& s) {
    const int64_t dim = s.dims[0], n = s.inputs[0].sizes()[dim];
    const int64_t chunks = s.scalars[0].to<int64_t>();
    const int64_t size = (n + chunks - 1) / chunks;
    Shape sizes;
    for (int64_t st = 0; st < n; st += size) sizes.push_back(std::min(size, n - st));
    return split_reference(s.inputs[0], dim, sizes);
  };
  return c;
}

TESSERA_CONFORMANCE_OP("flip") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d", {in({}, t, 1)}, {0}),
        sample_of("[3, 4] dim 0", {in({3, 4}, t, 2)}, {0}),
        sample_of("transposed [4, 5] dims 0, -1", {in({5, 4}, t, 3).t()}, {0, -1}),
        sample_of("[2, 3, 4] dim 1", {in({2, 3, 4}, t, 4)}, {1}),
        sample_of("zero-size", {in({0, 3}, t, 5)}, {1}),
        sample_of("larger than L2 [1024, 700] dim 1", {in({1024, 700}, t, 6)}, {1}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{flip(x[0], s.dims)};
  };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    const int64_t nd = static_cast<int64_t>(x.shape.size());
    return std::vector<Expected>{build_expected(x.shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src = c;
      for (int64_t d : s.dims) {
        if (nd == 0) break;
        if (d < 0) d += nd;
        src[d] = x.shape[d] - 1 - c[d];
      }
      return x.at(src);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("roll") {
  OpCase c;
  c.dtypes = all_dtypes();
  // dims[0] is the number of dims given; then shifts, then dims.
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[2, 3] flattened by 1", {in({2, 3}, t, 1)}, {0, 1}),
        sample_of("transposed [3, 4] flattened by -5", {in({4, 3}, t, 2).t()}, {0, -5}),
        sample_of("[3, 4] by 1 on dim 0", {in({3, 4}, t, 3)}, {1, 1, 0}),
        sample_of("[3, 4] by (-1, 6) on dims (1, 0)", {in({3, 4}, t, 4)}, {2, -1, 6, 1, 0}),
        sample_of("zero-size", {in({0, 3}, t, 5)}, {1, 2, 1}),
        sample_of("larger than L2 [1024, 600] by 7 on dim 1", {in({1024, 600}, t, 6)}, {1, 7, 1}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    const int64_t k = s.dims[0];
    if (k == 0) return std::vector<Tensor>{roll(x[0], {s.dims[1]})};
    Shape shifts(s.dims.begin() + 1, s.dims.begin() + 1 + k);
    Shape dims(s.dims.begin() + 1 + k, s.dims.end());
    return std::vector<Tensor>{roll(x[0], shifts, dims)};
  };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    const int64_t k = s.dims[0];
    if (k == 0) {
      const int64_t n = static_cast<int64_t>(x.v.size());
      Expected e{x.shape, s.inputs[0].dtype(), std::vector<double>(x.v.size())};
      for (int64_t i = 0; i < n; ++i) {
        const int64_t src = (((i - s.dims[1]) % n) + n) % n;
        e.values[i] = x.v[src];
      }
      return std::vector<Expected>{e};
    }
    return std::vector<Expected>{build_expected(x.shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src = c;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t d = s.dims[1 + k + i], n = x.shape[d];
        src[d] = (((src[d] - s.dims[1 + i]) % n) + n) % n;
      }
      return x.at(src);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("repeat") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("0-d by [3]", {in({}, t, 1)}, {3}),
        sample_of("[2, 3] by [2, 2]", {in({2, 3}, t, 2)}, {2, 2}),
        sample_of("transposed [3, 2] by [2, 1, 3]", {in({2, 3}, t, 3).t()}, {2, 1, 3}),
        sample_of("[2] by [0, 2]", {in({2}, t, 4)}, {0, 2}),
        sample_of("larger than L2 [512, 512] by [2, 2]", {in({512, 512}, t, 5)}, {2, 2}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{repeat(x[0], s.dims)};
  };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    const size_t nd = s.dims.size(), lead = nd - x.shape.size();
    Shape shape;
    for (size_t d = 0; d < nd; ++d) shape.push_back(s.dims[d] * (d < lead ? 1 : x.shape[d - lead]));
    return std::vector<Expected>{build_expected(shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src;
      for (size_t d = lead; d < nd; ++d) src.push_back(c[d] % x.shape[d - lead]);
      return x.at(src);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("constant_pad") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[2, 3] pad (1, 2)", {in({2, 3}, t, 1)}, {1, 2}),
        sample_of("transposed [3, 4] pad (1, 0, 0, 2)", {in({4, 3}, t, 2).t()}, {1, 0, 0, 2}),
        sample_of("[3, 5] crop (-1, -2, 1, -1)", {in({3, 5}, t, 3)}, {-1, -2, 1, -1}),
        sample_of("zero-size [0, 2] pad (1, 1)", {in({0, 2}, t, 4)}, {1, 1}),
        sample_of("larger than L2 [1024, 600] pad (3, 4, 1, 1)", {in({1024, 600}, t, 5)}, {3, 4, 1, 1}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{constant_pad(x[0], s.dims, 1)};
  };
  c.reference = [](const Sample& s) {
    Nd x(s.inputs[0]);
    const int64_t nd = static_cast<int64_t>(x.shape.size());
    Shape shape = x.shape, before(nd, 0);
    for (size_t i = 0; i < s.dims.size() / 2; ++i) {
      const int64_t d = nd - 1 - static_cast<int64_t>(i);
      before[d] = s.dims[2 * i];
      shape[d] += s.dims[2 * i] + s.dims[2 * i + 1];
    }
    return std::vector<Expected>{build_expected(shape, s.inputs[0].dtype(), [&](const Shape& c) {
      Shape src = c;
      for (int64_t d = 0; d < nd; ++d) {
        src[d] -= before[d];
        if (src[d] < 0 || src[d] >= x.shape[d]) return 1.0;
      }
      return x.at(src);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("cat") {
  return std::vector<ErrorCase>{
      {"empty list", [](Device) { cat({}, 0); }, ErrorKind::kValue, {"cat", "non-empty"}},
      {"sizes differ outside dim",
       [](Device d) { cat({ones({3, 4}, d), ones({3, 5}, d)}, 0); },
       ErrorKind::kValue,
       {"cat", "Expected size 4 but got size 5", "tensor number 1"}},
      {"ranks differ",
       [](Device d) { cat({ones({3, 4}, d), ones({3}, d)}, 0); },
       ErrorKind::kValue,
       {"cat", "same number of dimensions", "got 2 and 1"}},
      {"0-d input", [](Device d) { cat({ones({}, d)}, 0); }, ErrorKind::kValue, {"cat", "zero-dimensional"}},
      {"dim out of range", [](Device d) { cat({ones({2}, d)}, 2); }, ErrorKind::kIndex, {"cat"}},
      {"out of the wrong shape",
       [](Device d) {
         Tensor out = empty({2}, d);
         cat_out(out, {ones({2}, d), ones({2}, d)}, 0);
       },
       ErrorKind::kValue,
       {"cat", "[2]", "[4]"}},
      {"stack of unequal sizes",
       [](Device d) { stack({ones({3, 4}, d), ones({3, 5}, d)}, 0); },
       ErrorKind::kValue,
       {"stack", "[3, 4] at entry 0", "[3, 5] at entry 1"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("split") {
  return std::vector<ErrorCase>{
      {"negative size", [](Device d) { split(ones({3}, d), -1, 0); }, ErrorKind::kValue,
       {"split", "non-negative", "-1"}},
      {"zero size of a non-empty dim", [](Device d) { split(ones({3}, d), 0, 0); },
       ErrorKind::kValue, {"split", "dimension size of 3"}},
      {"sizes not summing to the dim", [](Device d) { split(ones({3}, d), Shape{1, 1}, 0); },
       ErrorKind::kValue, {"split", "sum exactly to 3", "[1, 1]"}},
      {"dim out of range", [](Device d) { split(ones({3}, d), 1, 1); }, ErrorKind::kIndex, {"split"}},
      {"chunk of zero", [](Device d) { chunk(ones({3}, d), 0, 0); }, ErrorKind::kValue,
       {"chunk", "greater than 0"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("flip roll repeat pad") {
  return std::vector<ErrorCase>{
      {"flip repeated dim", [](Device d) { flip(ones({2, 2}, d), {0, -2}); }, ErrorKind::kValue,
       {"flip", "multiple times"}},
      {"flip dim out of range", [](Device d) { flip(ones({2, 2}, d), {2}); }, ErrorKind::kIndex,
       {"flip"}},
      {"roll shifts and dims differ", [](Device d) { roll(ones({2, 2}, d), {1, 2}, {0}); },
       ErrorKind::kValue, {"roll", "align"}},
      {"roll of flattened with two shifts", [](Device d) { roll(ones({2, 2}, d), {1, 2}); },
       ErrorKind::kValue, {"roll", "align"}},
      {"repeat with fewer dims", [](Device d) { repeat(ones({2, 2}, d), {2}); },
       ErrorKind::kValue, {"repeat", "can not be smaller"}},
      {"pad of odd length", [](Device d) { constant_pad(ones({2, 2}, d), {1}); },
       ErrorKind::kValue, {"pad", "divisible by 2"}},
      {"pad longer than the dims", [](Device d) { constant_pad(ones({2}, d), {1, 1, 1, 1}); },
       ErrorKind::kValue, {"pad", "padding length 4"}},
      {"crop below zero", [](Device d) { constant_pad(ones({3, 4}, d), {-3, -3}); },
       ErrorKind::kValue, {"pad", "negative output size", "dimension 1"}},
  };
}

}  // namespace tessera::conformance
