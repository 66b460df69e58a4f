// take and put: conformance cases against a reference that reads or
// writes self's row-major flattening at each index in order (negative
// indices counting from the end; put's duplicates accumulate rounding
// after every step, or the last write wins), and their error cases.
#include <string>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

Tensor positions(const Shape& s, uint64_t seed, int64_t numel) {
  return make_input(s, DType::kI64, seed, static_cast<double>(-numel),
                    static_cast<double>(numel - 1));
}

// inputs self, index (int64), source (index's element count).
std::vector<Sample> take_put_samples(DType t) {
  std::vector<Sample> out;
  auto push = [&](std::string desc, Tensor self, Tensor index, Tensor source) {
    out.push_back(sample_of(std::move(desc), {std::move(self), std::move(index), std::move(source)}));
  };
  push("0-d self", make_input({}, t, 1), positions({3}, 2, 1), make_input({3}, t, 3));
  push("[4, 5] with a [2, 3] index, repeats", make_input({4, 5}, t, 4), positions({2, 3}, 5, 20),
       make_input({6}, t, 6));
  push("transposed self", make_input({5, 4}, t, 7).t(), positions({9}, 8, 20),
       make_input({3, 3}, t, 9));
  push("strided index", make_input({3, 7}, t, 10),
       positions({12}, 11, 21).slice(0, 0, std::nullopt, 3), make_input({4}, t, 12));
  push("empty index", make_input({2, 3}, t, 13), positions({0}, 14, 6), make_input({0}, t, 15));
  push("[300, 200], 5000 indices", make_input({300, 200}, t, 16), positions({5000}, 17, 60000),
       make_input({5000}, t, 18));
  return out;
}

// The flat position of index value k in a tensor of numel elements.
size_t wrapped(double k, size_t numel) {
  const auto v = static_cast<int64_t>(k);
  return static_cast<size_t>(v < 0 ? v + static_cast<int64_t>(numel) : v);
}

Expected put_reference(const Sample& s, bool accumulate) {
  Nd self(s.inputs[0]);
  const std::vector<double> index = values_of(s.inputs[1]);
  const std::vector<double> source = values_of(s.inputs[2]);
  const DType dtype = s.inputs[0].dtype();
  for (size_t i = 0; i < index.size(); ++i) {
    double& dst = self.v[wrapped(index[i], self.v.size())];
    dst = accumulate ? round_to_dtype(dst + source[i], dtype) : source[i];
  }
  return Expected{s.inputs[0].sizes(), dtype, self.v};
}

}  // namespace

TESSERA_CONFORMANCE_OP("take") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = take_put_samples;
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    Tensor out = empty({0}, TensorOptions(x[0].dtype(), x[0].device()));
    take_out(out, x[0], x[1]);
    return std::vector<Tensor>{take(x[0], x[1]), out};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> self = values_of(s.inputs[0]);
    const std::vector<double> index = values_of(s.inputs[1]);
    std::vector<double> v;
    for (double k : index) v.push_back(self[wrapped(k, self.size())]);
    const Expected e{s.inputs[1].sizes(), s.inputs[0].dtype(), v};
    return std::vector<Expected>{e, e};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("put") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = take_put_samples;
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    Tensor inplace = x[0].clone();
    put_(inplace, x[1], x[2], /*accumulate=*/true);
    return std::vector<Tensor>{put(x[0], x[1], x[2]), inplace};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{put_reference(s, false), put_reference(s, true)};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("take put") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"take index out of range",
       [i64](Device d) { take(ones({2, 3}, d), full({1}, 6, i64(d))); },
       ErrorKind::kIndex,
       {"take", "index 6", "size 6"}},
      {"put index below -numel",
       [i64](Device d) { put(ones({2, 3}, d), full({1}, -7, i64(d)), ones({1}, d)); },
       ErrorKind::kIndex,
       {"put_", "index -7", "size 6"}},
      {"int32 index",
       [](Device d) {
         take(ones({2, 3}, d), zeros({1}, TensorOptions(DType::kI32, d)));
       },
       ErrorKind::kType,
       {"take", "int64 index", "int32"}},
      {"source of another length",
       [i64](Device d) { put(ones({2, 3}, d), zeros({2}, i64(d)), ones({3}, d)); },
       ErrorKind::kValue,
       {"put_", "same number of elements"}},
      {"source of another dtype",
       [i64](Device d) { put(ones({2, 3}, d), zeros({1}, i64(d)), ones({1}, i64(d))); },
       ErrorKind::kType,
       {"put_", "float32", "int64", "same dtype"}},
      {"put into an empty tensor",
       [i64](Device d) { put(ones({0}, d), zeros({1}, i64(d)), ones({1}, d)); },
       ErrorKind::kIndex,
       {"put_", "empty tensor"}},
  };
}

}  // namespace tessera::conformance
