// The error cases of index_select, gather, scatter, scatter_add, one_hot,
// index_put, masked_fill and masked_select: out-of-range indices (IndexError
// naming the op, the index, the dim and its size), dtypes, shapes.
#include "tests/conformance/conformance.h"

namespace tessera::conformance {

TESSERA_CONFORMANCE_ERRORS("index_select") {
  return std::vector<ErrorCase>{
      {"index out of range",
       [](Device d) { index_select(ones({3, 4}, d), 0, full({2}, 5, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex,
       {"index_select", "index 5", "dimension 0", "size 3"}},
      {"negative index",
       [](Device d) { index_select(ones({3, 4}, d), 1, full({1}, -1, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex,
       {"index_select", "index -1", "dimension 1", "size 4"}},
      {"float index",
       [](Device d) { index_select(ones({3, 4}, d), 0, ones({1}, d)); },
       ErrorKind::kType,
       {"index_select", "int32 or int64", "float32"}},
      {"2-D index",
       [](Device d) { index_select(ones({3, 4}, d), 0, zeros({1, 1}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex,
       {"index_select", "vector"}},
      {"dim out of range",
       [](Device d) { index_select(ones({3, 4}, d), 2, zeros({1}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kIndex,
       {"index_select"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("gather scatter") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"gather index out of range",
       [i64](Device d) { gather(ones({3, 4}, d), 1, full({1, 1}, 5, i64(d))); },
       ErrorKind::kIndex,
       {"gather", "index 5", "dimension 1", "size 4"}},
      {"gather int32 index",
       [](Device d) { gather(ones({3, 4}, d), 1, zeros({1, 1}, TensorOptions(DType::kI32, d))); },
       ErrorKind::kType,
       {"gather", "int64", "int32"}},
      {"gather index of another rank",
       [i64](Device d) { gather(ones({3, 4}, d), 1, zeros({1, 1, 1}, i64(d))); },
       ErrorKind::kValue,
       {"gather", "same number of dimensions"}},
      {"gather index larger than self",
       [i64](Device d) { gather(ones({3, 4}, d), 1, zeros({4, 1}, i64(d))); },
       ErrorKind::kValue,
       {"gather", "dimension 0", "[4, 1]", "[3, 4]"}},
      {"scatter index out of range",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         scatter_(t, 0, full({1, 1}, 3, i64(d)), 1.0);
       },
       ErrorKind::kIndex,
       {"scatter", "index 3", "dimension 0", "size 3"}},
      {"scatter src of another dtype",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         scatter_(t, 0, zeros({1, 1}, i64(d)), ones({1, 1}, TensorOptions(DType::kF64, d)));
       },
       ErrorKind::kType,
       {"scatter", "float32", "float64"}},
      {"scatter_add index larger than src",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         scatter_add_(t, 0, zeros({2, 2}, i64(d)), ones({1, 2}, d));
       },
       ErrorKind::kValue,
       {"scatter_add", "src"}},
      {"one_hot class too large",
       [i64](Device d) { one_hot(full({2}, 5, i64(d)), 3); },
       ErrorKind::kIndex,
       {"one_hot", "smaller than num_classes"}},
      {"one_hot of floats",
       [](Device d) { one_hot(ones({2}, d)); },
       ErrorKind::kType,
       {"one_hot", "LongTensor"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("index_put masked") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"index out of range",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         index_put_(t, {full({1}, 5, i64(d))}, ones({}, d));
       },
       ErrorKind::kIndex,
       {"index_put", "index 5", "dimension 0", "size 3"}},
      {"negative index out of range",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         index_put_(t, {zeros({1}, i64(d)), full({1}, -5, i64(d))}, ones({}, d));
       },
       ErrorKind::kIndex,
       {"index_put", "index -5", "dimension 1", "size 4"}},
      {"too many indices",
       [i64](Device d) {
         Tensor t = ones({3}, d);
         index_put_(t, {zeros({1}, i64(d)), zeros({1}, i64(d))}, ones({}, d));
       },
       ErrorKind::kIndex,
       {"index_put", "too many indices"}},
      {"indices that do not broadcast",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         index_put_(t, {zeros({2}, i64(d)), zeros({3}, i64(d))}, ones({}, d));
       },
       ErrorKind::kIndex,
       {"index_put", "[2], [3]"}},
      {"values of another dtype",
       [i64](Device d) {
         Tensor t = ones({3, 4}, d);
         index_put_(t, {zeros({1}, i64(d))}, ones({}, TensorOptions(DType::kF64, d)));
       },
       ErrorKind::kType,
       {"index_put", "float32", "float64"}},
      {"mask of the wrong shape",
       [](Device d) {
         Tensor t = ones({3, 4}, d);
         index_put_(t, {ones({2}, TensorOptions(DType::kBool, d))}, ones({}, d));
       },
       ErrorKind::kIndex,
       {"index_put", "mask [2]", "[3, 4]"}},
      {"masked_fill with a float mask",
       [](Device d) { masked_fill(ones({3}, d), ones({3}, d), 1); },
       ErrorKind::kType,
       {"masked_fill", "boolean", "float32"}},
      {"masked_fill_ with a mask that grows self",
       [](Device d) {
         Tensor t = ones({3}, d);
         masked_fill_(t, ones({2, 3}, TensorOptions(DType::kBool, d)), 1);
       },
       ErrorKind::kValue,
       {"masked_fill_", "[2, 3]", "[3]"}},
      {"masked_fill_ with a 1-D value",
       [](Device d) {
         Tensor t = ones({3}, d);
         masked_fill_(t, ones({3}, TensorOptions(DType::kBool, d)), ones({1}, d));
       },
       ErrorKind::kValue,
       {"masked_fill_", "0-dimensional"}},
      {"masked_select with a float mask",
       [](Device d) { masked_select(ones({3}, d), ones({3}, d)); },
       ErrorKind::kType,
       {"masked_select", "float32"}},
  };
}

}  // namespace tessera::conformance
