// Helpers shared by the pointwise conformance cases (unary, binary,
// comparison, ternary): case builders over naive double references.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "tests/conformance/conformance.h"

namespace tessera::conformance::pointwise_cases {

// Integer and bool inputs compute in float32 for the floating unary ops.
inline DType to_float(DType t) { return is_floating(t) ? t : DType::kF32; }
inline DType same(DType t) { return t; }
inline DType to_bool(DType) { return DType::kBool; }

// Adds a sample of special floating values (NaN, +-inf, +-0, 1, -2.5) for
// floating dtypes, in one tensor per operand (operand k rotated by k).
inline void add_special_values(std::vector<Sample>& samples, DType dtype, int arity) {
  if (!is_floating(dtype)) return;
  const std::vector<double> v = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -2.5, 2.0};
  Sample s;
  s.description = "special values (nan, inf, -0)";
  for (int k = 0; k < arity; ++k) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(DType::kF64, host_device()));
    for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = v[(i + 3 * k) % v.size()];
    s.inputs.push_back(t.to(dtype));
  }
  samples.push_back(std::move(s));
}

// Replaces zeros in the whole storage of a host tensor by `value` (so a
// divisor of any layout class is never zero).
inline void replace_zeros(const Tensor& t, double value) {
  if (t.numel() == 0) return;
  const int64_t n = static_cast<int64_t>(t.storage()->nbytes() / t.itemsize());
  Tensor all = Tensor::from_storage(t.storage(), t.dtype(), {n}, {1}, 0);
  Tensor f = all.to(DType::kF64);
  for (int64_t i = 0; i < n; ++i) {
    if (f.data<double>()[i] == 0) f.data<double>()[i] = value;
  }
  all.copy_(f);
}

inline OpCase unary_case(std::vector<DType> dtypes, std::function<Tensor(const Tensor&)> op,
                         std::function<double(double)> ref, std::function<DType(DType)> out_dtype,
                         double lo = -3.0, double hi = 3.0, bool specials = true) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = [lo, hi, specials](DType t) {
    std::vector<Sample> s = elementwise_samples(t, 1, lo, hi);
    if (specials) add_special_values(s, t, 1);
    return s;
  };
  c.run = [op](const std::vector<Tensor>& in, const Sample&) { return std::vector<Tensor>{op(in[0])}; };
  c.reference = [ref, out_dtype](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, out_dtype(s.inputs[0].dtype()),
                                               [&](const std::vector<double>& v) { return ref(v[0]); })};
  };
  return c;
}

inline OpCase binary_case(std::vector<DType> dtypes,
                          std::function<Tensor(const Tensor&, const Tensor&)> op,
                          std::function<double(double, double)> ref,
                          std::function<DType(DType)> out_dtype, double lo = -3.0, double hi = 3.0,
                          bool specials = true, bool nonzero_divisor = false) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = [lo, hi, specials, nonzero_divisor](DType t) {
    std::vector<Sample> s = elementwise_samples(t, 2, lo, hi);
    if (specials) add_special_values(s, t, 2);
    if (nonzero_divisor) {
      for (Sample& x : s) replace_zeros(x.inputs[1], 1);
    }
    return s;
  };
  c.run = [op](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{op(in[0], in[1])};
  };
  c.reference = [ref, out_dtype](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, out_dtype(s.inputs[0].dtype()),
                                               [&](const std::vector<double>& v) { return ref(v[0], v[1]); })};
  };
  return c;
}

// Keeps the samples whose first operand has the broadcast shape (in-place
// forms write it).
inline std::vector<Sample> in_place_samples(std::vector<Sample> all) {
  std::vector<Sample> out;
  for (Sample& s : all) {
    Shape shape;
    for (const Tensor& t : s.inputs) shape = broadcast_shapes(shape, t.sizes(), "sample");
    if (shape == s.inputs[0].sizes()) out.push_back(std::move(s));
  }
  return out;
}

// The same case run in place (on a clone of operand 0) or into an out
// tensor of the result's dtype made in advance.
enum class Variant { kInPlace, kOut };
inline OpCase variant_of(OpCase c, Variant v,
                         std::function<void(Tensor& dst, const std::vector<Tensor>& in)> run_variant,
                         std::function<DType(DType)> out_dtype) {
  auto base = c.samples;
  if (v == Variant::kInPlace) c.samples = [base](DType t) { return in_place_samples(base(t)); };
  c.run = [v, run_variant, out_dtype](const std::vector<Tensor>& in, const Sample&) {
    Tensor dst;
    if (v == Variant::kInPlace) {
      dst = in[0].clone();
    } else {
      Shape shape;
      for (const Tensor& t : in) shape = broadcast_shapes(shape, t.sizes(), "sample");
      dst = empty(shape, TensorOptions(out_dtype(in[0].dtype()), in[0].device()));
    }
    run_variant(dst, in);
    return std::vector<Tensor>{dst};
  };
  return c;
}

}  // namespace tessera::conformance::pointwise_cases
