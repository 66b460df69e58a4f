// add, sub, mul, div: the first slice of the op set, and the model for the
// other *_cases.cc files.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

std::vector<DType> without_bool() { return numeric_dtypes(); }

// The dtype PyTorch gives a binary op of two tensors of one dtype.
DType true_div_dtype(DType t) { return is_floating(t) ? t : DType::kF32; }

OpCase binary_case(std::vector<DType> dtypes,
                   std::function<Tensor(const Tensor&, const Tensor&)> op,
                   std::function<double(double, double)> ref,
                   std::function<DType(DType)> out_dtype = [](DType t) { return t; }) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = [](DType t) { return elementwise_samples(t, 2); };
  c.run = [op](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{op(in[0], in[1])};
  };
  c.reference = [ref, out_dtype](const Sample& s) {
    DType out = out_dtype(s.inputs[0].dtype());
    return std::vector<Expected>{
        map_reference(s.inputs, out, [&](const std::vector<double>& v) { return ref(v[0], v[1]); })};
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("add") {
  return binary_case(all_dtypes(), [](const Tensor& a, const Tensor& b) { return add(a, b); },
                     [](double a, double b) { return a + b; });
}

TESSERA_CONFORMANCE_OP("add with alpha") {
  return binary_case(without_bool(), [](const Tensor& a, const Tensor& b) { return add(a, b, 3); },
                     [](double a, double b) { return a + 3 * b; });
}

TESSERA_CONFORMANCE_OP("sub") {
  return binary_case(without_bool(), [](const Tensor& a, const Tensor& b) { return sub(a, b); },
                     [](double a, double b) { return a - b; });
}

TESSERA_CONFORMANCE_OP("mul") {
  return binary_case(all_dtypes(), [](const Tensor& a, const Tensor& b) { return mul(a, b); },
                     [](double a, double b) { return a * b; });
}

TESSERA_CONFORMANCE_OP("div") {
  OpCase c = binary_case(
      all_dtypes(), [](const Tensor& a, const Tensor& b) { return div(a, b); },
      [](double a, double b) { return a / b; }, true_div_dtype);
  // Integer inputs are computed in float32, as PyTorch's true division.
  return c;
}

TESSERA_CONFORMANCE_OP("add_ in place") {
  OpCase c;
  c.dtypes = without_bool();
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample s : elementwise_samples(t, 2)) {
      // In-place needs the first operand to have the broadcast shape.
      Shape shape = broadcast_shapes(s.inputs[0].sizes(), s.inputs[1].sizes(), "sample");
      if (shape != s.inputs[0].sizes()) continue;
      out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    Tensor self = in[0].clone();
    self.add_(in[1], 2);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(),
                                               [](const std::vector<double>& v) { return v[0] + 2 * v[1]; })};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("add") {
  return std::vector<ErrorCase>{
      {"incompatible shapes",
       [](Device d) { add(ones({2, 3}, d), ones({4}, d)); },
       ErrorKind::kValue,
       {"add", "[2, 3]", "[4]"}},
      {"in-place result type can't be cast",
       [](Device d) {
         Tensor t = ones({2}, TensorOptions(DType::kI32, d));
         t.add_(ones({2}, d));
       },
       ErrorKind::kType,
       {"add", "float32", "int32"}},
      {"in-place broadcast changes the shape",
       [](Device d) {
         Tensor t = ones({1, 3}, d);
         t.add_(ones({2, 3}, d));
       },
       ErrorKind::kValue,
       {"add", "[1, 3]", "[2, 3]"}},
      {"written tensor with overlapping elements",
       [](Device d) {
         Tensor t = zeros({3, 1}, d).expand({3, 4});
         t.add_(ones({3, 4}, d));
       },
       ErrorKind::kValue,
       {"add", "single memory location"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("sub") {
  return std::vector<ErrorCase>{
      {"bool operand",
       [](Device d) { sub(ones({2}, TensorOptions(DType::kBool, d)), ones({2}, d)); },
       ErrorKind::kType,
       {"sub", "bool"}},
  };
}

}  // namespace tessera::conformance
