// The multi-tensor norm (foreach_norm): orders 1, 2 and inf (the device's
// ForeachNorm kernel) and 3 (composed per entry), each over a list that
// mixes a 0-d entry, an empty one (orders 1 to 3), plain, transposed and
// strided tensors and entries of several kernel chunks; then a list of
// mixed dtypes, a list converted to float32 by `dtype`, and the errors.
#include <cmath>
#include <limits>
#include <optional>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The norm of order p of values v, in double.
double norm_of(const std::vector<double>& v, double p) {
  double acc = 0;
  for (double x : v) acc = std::isinf(p) ? std::max(acc, std::fabs(x)) : acc + std::pow(std::fabs(x), p);
  return std::isinf(p) || p == 1.0 ? acc : std::pow(acc, 1.0 / p);
}

Tensor entry(const Shape& shape, int view, DType t, uint64_t seed) {
  // Values in [-1, 1]: a 16-bit norm 1 of 90 000 elements stays finite.
  if (view == 1) return make_input({shape[1], shape[0]}, t, seed, -1, 1).t();
  if (view == 2) return make_input({shape[0], 2 * shape[1]}, t, seed, -1, 1).slice(1, 0, std::nullopt, 2);
  return make_input(shape, t, seed, -1, 1);
}

// The list of a sample; `second` is the dtype of every other entry (the
// mixed-dtype sample) or t.
std::vector<Tensor> list_of(DType t, DType second, bool with_empty) {
  struct Spec {
    Shape shape;
    int view;  // 0 plain, 1 transposed, 2 strided
  };
  const std::vector<Spec> specs = {{{}, 0},     {{0, 3}, 0},   {{5, 7}, 0},   {{4, 6}, 1},
                                   {{3, 5}, 2}, {{70000}, 0}, {{3, 30000}, 0}, {{1}, 0}};
  std::vector<Tensor> out;
  uint64_t seed = 4100;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!with_empty && numel_of(specs[i].shape) == 0) continue;
    out.push_back(entry(specs[i].shape, specs[i].view, i % 2 ? second : t, seed++));
  }
  return out;
}

// dims: {mode}: 0 the list as is, 1 mixed dtypes (every other entry
// float32), 2 converted to float32 by the dtype argument.
std::vector<Sample> norm_samples(DType t, double p) {
  const bool with_empty = !std::isinf(p);
  std::vector<Sample> out;
  out.push_back(sample_of("0-d, empty, plain, transposed, strided, [70000], [3, 30000], [1]",
                          list_of(t, t, with_empty), {0}));
  if (t != DType::kF32) {
    out.push_back(sample_of("every other entry float32", list_of(t, DType::kF32, with_empty), {1}));
    out.push_back(sample_of("dtype=float32", list_of(t, t, with_empty), {2}));
  }
  return out;
}

OpCase norm_list_case(double p) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [p](DType t) { return norm_samples(t, p); };
  c.run = [p](const std::vector<Tensor>& in, const Sample& s) {
    std::optional<DType> dtype;
    if (s.dims[0] == 2) dtype = DType::kF32;
    return foreach_norm("foreach_norm", in, p, dtype);
  };
  c.reference = [p](const Sample& s) {
    std::vector<Expected> expected;
    for (const Tensor& t : s.inputs) {
      const DType out = s.dims[0] == 2 ? DType::kF32 : t.dtype();
      std::vector<double> v = values_of(t);
      if (s.dims[0] == 2) {
        for (double& x : v) x = round_to_dtype(x, DType::kF32);
      }
      expected.push_back({{}, out, {round_to_dtype(norm_of(v, p), out)}});
    }
    return expected;
  };
  // Float accumulation over 90 000 elements, and one 16-bit rounding
  // step either side of the exact result.
  c.tolerance = [](DType t, const Sample& s) {
    // The mixed and converted samples hold float32 results beside (or
    // instead of) t's: a float64 case takes float32's tolerance there.
    if (s.dims[0] != 0 && t == DType::kF64) t = DType::kF32;
    Tolerance tol = default_tolerance(t);
    if (t == DType::kF32) tol.rtol = 1e-5;
    if (t == DType::kF16) tol.rtol = 2e-3;
    return tol;
  };
  return c;
}

TESSERA_CONFORMANCE_OP("foreach_norm p=1") { return norm_list_case(1.0); }
TESSERA_CONFORMANCE_OP("foreach_norm p=2") { return norm_list_case(2.0); }
TESSERA_CONFORMANCE_OP("foreach_norm p=inf") { return norm_list_case(kInf); }
TESSERA_CONFORMANCE_OP("foreach_norm p=3") { return norm_list_case(3.0); }

Tensor f32(Device d, const Shape& s) { return ones(s, TensorOptions(DType::kF32, d)); }

TESSERA_CONFORMANCE_ERRORS("foreach_norm") {
  return std::vector<ErrorCase>{
      {"an undefined entry",
       [](Device d) { foreach_norm("_foreach_norm", {f32(d, {2}), Tensor()}, 2.0); },
       ErrorKind::kValue, {"_foreach_norm", "entry 1", "undefined"}},
      {"an integer entry",
       [](Device d) {
         foreach_norm("_foreach_norm", {f32(d, {2}), ones({3}, TensorOptions(DType::kI32, d))}, 2.0);
       },
       ErrorKind::kType, {"_foreach_norm", "floating", "entry 1", "int32[3]"}},
      {"p = NaN",
       [](Device d) { foreach_norm("_foreach_norm", {f32(d, {2})}, std::nan("")); },
       ErrorKind::kValue, {"_foreach_norm", "NaN"}},
      {"the inf norm of an empty entry",
       [](Device d) { foreach_norm("_foreach_norm", {f32(d, {2}), f32(d, {0, 3})}, kInf); },
       ErrorKind::kIndex, {"_foreach_norm", "entry 1", "empty", "[0, 3]"}},
      {"an integer dtype",
       [](Device d) { foreach_norm("_foreach_norm", {f32(d, {2})}, 2.0, DType::kI64); },
       ErrorKind::kType, {"_foreach_norm", "dtype", "int64"}},
  };
}

}  // namespace
}  // namespace tessera::conformance
