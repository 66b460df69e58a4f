// Scans: cumsum and cumprod along one dim, with their error cases. The
// reference walks each line along the dim in double.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

std::vector<Sample> scan_samples(DType dtype, bool short_rows) {
  std::vector<Sample> out;
  uint64_t seed = 31;
  const double lo = short_rows ? -2.0 : -3.0, hi = short_rows ? 2.0 : 3.0;
  auto in = [&](const Shape& s) { return make_input(s, dtype, seed++, lo, hi); };
  auto add = [&](std::string desc, Tensor t, int64_t dim) {
    Sample s;
    s.description = std::move(desc);
    s.inputs = {std::move(t)};
    s.dims = {dim};
    out.push_back(std::move(s));
  };
  add("0-d dim 0", in({}), 0);
  add("zero-size [0, 3] dim 1", in({0, 3}), 1);
  add("contiguous [5, 7] dim 1", in({5, 7}), 1);
  add("contiguous [5, 7] dim 0", in({5, 7}), 0);
  add("contiguous [5, 7] dim -1", in({5, 7}), -1);
  add("transposed [7, 5] viewed as [5, 7] dim 1", in({7, 5}).t(), 1);
  add("strided slice [4, 9] step 2 dim 1", in({4, 9}).slice(1, 0, std::nullopt, 2), 1);
  add("expanded [1, 6] to [4, 6] dim 0", in({1, 6}).expand({4, 6}), 0);
  if (short_rows) {
    add("larger than L2 [131072, 5] dim 1", in({131072, 5}), 1);
  } else {
    add("larger than L2 [1024, 1100] dim 1", in({1024, 1100}), 1);
    add("larger than L2 [1024, 1100] dim 0", in({1024, 1100}), 0);
  }
  return out;
}

OpCase scan_case(bool is_sum) {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [is_sum](DType t) { return scan_samples(t, !is_sum); };
  c.run = [is_sum](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{is_sum ? cumsum(in[0], s.dims[0]) : cumprod(in[0], s.dims[0])};
  };
  c.reference = [is_sum](const Sample& s) {
    const Tensor& t = s.inputs[0];
    const DType out = is_floating(t.dtype()) ? t.dtype() : DType::kI64;
    Expected e{t.sizes(), out, values_of(t)};
    const int64_t dim = t.dim() == 0 ? 0 : (s.dims[0] + t.dim()) % t.dim();
    for_each_line(t.sizes(), dim, e.values, [&](std::vector<double*>& line) {
      double acc = is_sum ? 0 : 1;
      for (double* p : line) {
        acc = is_sum ? acc + *p : acc * *p;
        *p = round_to_dtype(acc, out);
      }
    });
    return std::vector<Expected>{e};
  };
  c.tolerance = [](DType t, const Sample& s) {
    Tolerance tol = default_tolerance(is_floating(t) ? t : DType::kI64);
    // A running sum rounds once per element in the dtype's precision.
    if (t == DType::kF16 || t == DType::kBF16) tol.atol += 0.05;
    if (t == DType::kF32) tol.atol += 1e-4;
    (void)s;
    return tol;
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("cumsum") { return scan_case(true); }
TESSERA_CONFORMANCE_OP("cumprod") { return scan_case(false); }

// In place keeps the dtype, as the out-of-place scan does for floats.
namespace {
OpCase in_place_scan_case(bool is_sum) {
  OpCase c = scan_case(is_sum);
  c.dtypes = floating_dtypes();
  c.run = [is_sum](const std::vector<Tensor>& in, const Sample& s) {
    Tensor self = in[0].clone();
    if (is_sum) {
      cumsum_(self, s.dims[0]);
    } else {
      cumprod_(self, s.dims[0]);
    }
    return std::vector<Tensor>{self};
  };
  return c;
}
}  // namespace

TESSERA_CONFORMANCE_OP("cumsum_") { return in_place_scan_case(true); }
TESSERA_CONFORMANCE_OP("cumprod_") { return in_place_scan_case(false); }

TESSERA_CONFORMANCE_OP("cumsum with dtype float64") {
  OpCase c = scan_case(true);
  c.dtypes = {DType::kI32, DType::kF32};
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{cumsum(in[0], s.dims[0], DType::kF64)};
  };
  auto ref = c.reference;
  c.reference = [ref](const Sample& s) {
    Sample s64 = s;
    s64.inputs = {s.inputs[0].to(DType::kF64)};
    return ref(s64);
  };
  c.tolerance = [](DType, const Sample&) { return default_tolerance(DType::kF64); };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("scans") {
  return std::vector<ErrorCase>{
      {"cumsum dim out of range", [](Device d) { cumsum(ones({3}, d), 1); }, ErrorKind::kIndex,
       {"cumsum", "1"}},
      {"cumprod dim out of range", [](Device d) { cumprod(ones({2, 3}, d), -3); },
       ErrorKind::kIndex, {"cumprod", "-3"}},
      {"cumsum out of the wrong shape",
       [](Device d) {
         Tensor out = empty({4}, TensorOptions(DType::kF32, d));
         cumsum_out(out, ones({3}, d), 0);
       },
       ErrorKind::kValue, {"cumsum", "[4]", "[3]"}},
  };
}

}  // namespace tessera::conformance
