// sum and mean: all dims, one, several, negative, keepdim, dtype argument,
// non-contiguous, zero-size and 0-d inputs, large inputs against a double
// reference, output dtypes, and errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {
using V = std::vector<double>;

// Naive reduction of values (row-major, shape `shape`) over `dims` (already
// non-negative; empty = all). Returns the reduced values in row-major order
// of the kept dims, and the output shape (with keepdim).
struct Reduced {
  V sums;
  V counts;
  Shape shape_keep;
  Shape shape_drop;
};

Reduced naive_reduce(const V& values, const Shape& shape, std::vector<int64_t> dims) {
  std::set<int64_t> red(dims.begin(), dims.end());
  if (dims.empty()) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) red.insert(d);
  }
  Reduced r;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (red.count(d)) {
      r.shape_keep.push_back(1);
    } else {
      r.shape_keep.push_back(shape[d]);
      r.shape_drop.push_back(shape[d]);
    }
  }
  int64_t nout = naive_numel(r.shape_keep);
  r.sums.assign(nout, 0.0);
  r.counts.assign(nout, 0.0);
  Shape out_strides = naive_contiguous_strides(r.shape_keep);
  int64_t n = naive_numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!red.count(static_cast<int64_t>(d))) o += idx[d] * out_strides[d];
    }
    r.sums[o] += values[i];
    r.counts[o] += 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

std::vector<int64_t> wrapped(const Shape& dims, int64_t ndim) {
  std::vector<int64_t> w;
  for (int64_t d : dims) w.push_back(d < 0 ? d + ndim : d);
  return w;
}

double rtol_for(DType t) {
  switch (t) {
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1.6e-2;
    case DType::kF32: return 2e-6;
    case DType::kF64: return 1e-12;
    default: return 0;
  }
}

// Checks sum and mean of t over dims against the naive reference.
void check_reduce(const Tensor& t, const Shape& dims, bool keepdim) {
  V vals = read_strided(t);
  Reduced r = naive_reduce(vals, t.sizes(), wrapped(dims, t.dim()));
  INFO(describe(t) << " dims " << shape_to_string(dims) << " keepdim " << keepdim);
  Shape expect_shape = keepdim ? r.shape_keep : r.shape_drop;

  DType st = is_floating(t.dtype()) ? t.dtype() : DType::kI64;
  Tensor s = sum(t, dims, keepdim);
  CHECK(s.dtype() == st);
  CHECK(s.sizes() == expect_shape);
  V sref;
  for (double v : r.sums) sref.push_back(cast_value(v, st));
  // Tolerance: relative to the sum of magnitudes, for cancellation.
  Reduced ra = naive_reduce([&] { V a = vals; for (double& x : a) x = std::fabs(x); return a; }(),
                            t.sizes(), wrapped(dims, t.dim()));
  V tol;
  for (double m : ra.sums) tol.push_back(rtol_for(st) * m + (st == DType::kF64 ? 1e-12 : 0));
  CHECK(close_report_tol(read_strided(s), sref, tol) == "");

  if (is_floating(t.dtype())) {
    Tensor m = mean(t, dims, keepdim);
    CHECK(m.dtype() == t.dtype());
    CHECK(m.sizes() == expect_shape);
    V mref, mtol;
    for (size_t i = 0; i < r.sums.size(); ++i) {
      mref.push_back(cast_value(r.sums[i] / r.counts[i], t.dtype()));
      mtol.push_back(rtol_for(t.dtype()) * (ra.sums[i] / r.counts[i]) + 1e-12);
    }
    CHECK(close_report_tol(read_strided(m), mref, mtol) == "");
  }
}
}  // namespace

TEST_CASE("reduce: sum and mean over dims, keepdim, negative dims", "[reduce]") {
  const std::vector<Shape> dim_lists = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {-1, 0},
                                        {1, 2}, {0, 1, 2}, {2, -2}};
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32,
                  DType::kI64, DType::kI8, DType::kU8, DType::kBool, DType::kI16}) {
    V vals = is_floating(t) ? lcg_values(60, 1, -3, 5)
             : t == DType::kBool ? lcg_ints(60, 1, 0, 1)
             : t == DType::kU8 ? lcg_ints(60, 1, 0, 255)
             : t == DType::kI8 ? lcg_ints(60, 1, -128, 127)
                               : lcg_ints(60, 1, -1000, 1000);
    for (double& v : vals) v = cast_value(v, t);
    Tensor x = make_tensor(vals, {3, 4, 5}, t);
    for (const Shape& dims : dim_lists) {
      check_reduce(x, dims, false);
      check_reduce(x, dims, true);
    }
  }
  // Spelled out once.
  Tensor a = make_tensor(iota(6), {2, 3});
  CHECK(read_strided(sum(a)) == V{15});
  CHECK(sum(a).dim() == 0);
  CHECK(read_strided(sum(a, {0})) == V{3, 5, 7});
  CHECK(read_strided(sum(a, {1})) == V{3, 12});
  CHECK(sum(a, {1}, true).sizes() == Shape{2, 1});
  CHECK(sum(a, {}, true).sizes() == Shape{1, 1});
  CHECK(read_strided(mean(a, {-1})) == V{1, 4});
  CHECK(read_strided(mean(a)) == V{2.5});
  CHECK(mean(a, {0, 1}, true).sizes() == Shape{1, 1});
}

TEST_CASE("reduce: output dtypes and the dtype argument", "[reduce]") {
  // Integers and bool sum to int64, without wrapping.
  Tensor u = make_tensor({200, 200, 100}, {3}, DType::kU8);
  CHECK(sum(u).dtype() == DType::kI64);
  CHECK(sum(u).item<int64_t>() == 500);
  Tensor b = make_tensor({1, 1, 0, 1}, {4}, DType::kBool);
  CHECK(sum(b).dtype() == DType::kI64);
  CHECK(sum(b).item<int64_t>() == 3);
  Tensor i8 = make_tensor({127, 127, 127}, {3}, DType::kI8);
  CHECK(sum(i8).item<int64_t>() == 381);
  Tensor i32 = make_tensor({2147483647, 2147483647, 10}, {3}, DType::kI32);
  CHECK(sum(i32).item<int64_t>() == 4294967304LL);
  // int64 sums are exact beyond 2^53 (no accumulation in double).
  Tensor big = empty({3}, DType::kI64);
  big.data<int64_t>()[0] = (int64_t{1} << 60) + 1;
  big.data<int64_t>()[1] = (int64_t{1} << 60) + 1;
  big.data<int64_t>()[2] = 1;
  CHECK(sum(big).item<int64_t>() == (int64_t{1} << 61) + 3);
  // Floating sums keep their dtype.
  CHECK(sum(zeros({2}, DType::kF16)).dtype() == DType::kF16);
  CHECK(sum(zeros({2}, DType::kBF16)).dtype() == DType::kBF16);
  // The dtype argument.
  Tensor ii = make_tensor({1, 2}, {2}, DType::kI32);
  Tensor sd = sum(ii, {}, false, DType::kF64);
  CHECK(sd.dtype() == DType::kF64);
  CHECK(sd.item<double>() == 3.0);
  Tensor md = mean(ii, {}, false, DType::kF32);
  CHECK(md.dtype() == DType::kF32);
  CHECK(md.item<double>() == 1.5);
  Tensor h = make_tensor({1, 2, 3}, {3}, DType::kF16);
  CHECK(sum(h, {}, false, DType::kF32).dtype() == DType::kF32);
  CHECK(mean(h, {}, false, DType::kF64).dtype() == DType::kF64);
  Tensor bs = sum(make_tensor({1, 0, 1}, {3}, DType::kBool), {}, false, DType::kF32);
  CHECK(bs.dtype() == DType::kF32);
  CHECK(bs.item<double>() == 2.0);
  Tensor md64 = mean(make_tensor(iota(6), {2, 3}), {1}, true, DType::kF64);
  CHECK(md64.dtype() == DType::kF64);
  CHECK(md64.sizes() == Shape{2, 1});
  CHECK(read_strided(md64) == V{1, 4});
  Tensor s8 = sum(make_tensor({100, 100, 100}, {3}, DType::kI32), {0}, false, DType::kI8);
  CHECK(s8.dtype() == DType::kI8);
  CHECK(s8.item<int64_t>() == 44);  // 300 wraps in int8
  // Accumulating in the requested dtype: f32 values whose f32 sum loses
  // the small ones.
  Tensor f = make_tensor({16777216.0, 1, 1, 1, 1}, {5});
  CHECK(sum(f, {}, false, DType::kF64).item<double>() == 16777220.0);
  Tensor sf = sum(make_tensor({1.5, 2.5}, {2}), {}, false, DType::kI32);
  CHECK(sf.dtype() == DType::kI32);
  CHECK(sf.item<int64_t>() == 3);  // cast first, then sum
  // f16 sums accumulate in f32: 4096 halves of 1 sum to 4096 although
  // 2048 + 1 is not a half.
  Tensor hones = ones({4096}, DType::kF16);
  CHECK(sum(hones).item<double>() == 4096.0);
  CHECK(mean(hones).item<double>() == 1.0);
  Tensor bones = ones({1000}, DType::kBF16);
  CHECK(sum(bones).item<double>() == cast_value(1000.0, DType::kBF16));
}

TEST_CASE("reduce: non-contiguous inputs", "[reduce]") {
  Tensor base = make_tensor(lcg_values(7 * 8 * 9, 3, -2, 2), {7, 8, 9});
  std::vector<Tensor> views = {base.transpose(0, 2), base.permute({1, 2, 0}),
                               base.slice(2, 1, 9, 3), base.select(1, 2).t(),
                               base.slice(0, 0, 7, 2).transpose(1, 2),
                               make_tensor({1, 2, 3}, {3, 1}).expand({3, 5})};
  for (const Tensor& v : views) {
    for (const Shape& dims : std::vector<Shape>{{}, {0}, {-1}, {0, 1}}) {
      if (v.dim() < 2 && dims.size() > 1) continue;
      check_reduce(v, dims, false);
      check_reduce(v, dims, true);
    }
  }
  Tensor iv = make_tensor(lcg_ints(60, 4, -50, 50), {6, 10}, DType::kI16).t();
  check_reduce(iv, {0}, false);
  check_reduce(iv, {1}, true);
}

TEST_CASE("reduce: zero-size and 0-d inputs", "[reduce]") {
  Tensor z = zeros({0, 3});
  Tensor s = sum(z);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 0.0);
  CHECK(read_strided(sum(z, {0})) == V{0, 0, 0});
  CHECK(sum(z, {1}).sizes() == Shape{0});
  CHECK(sum(z, {0}, true).sizes() == Shape{1, 3});
  CHECK(sum(zeros({0}, DType::kI32)).item<int64_t>() == 0);
  CHECK(sum(zeros({0}, DType::kI32)).dtype() == DType::kI64);
  CHECK(std::isnan(mean(zeros({0})).item<double>()));
  V m0 = read_strided(mean(z, {0}));
  REQUIRE(m0.size() == 3);
  for (double v : m0) CHECK(std::isnan(v));
  CHECK(mean(zeros({2, 0}), {1}).sizes() == Shape{2});
  CHECK(std::isnan(read_strided(mean(zeros({2, 0}), {1}))[0]));
  CHECK(mean(z, {1}).sizes() == Shape{0});

  Tensor d = make_tensor({4.5}, {});
  CHECK(sum(d).dim() == 0);
  CHECK(sum(d).item<double>() == 4.5);
  CHECK(mean(d).item<double>() == 4.5);
  CHECK(sum(d, {0}).item<double>() == 4.5);
  CHECK(sum(d, {-1}).item<double>() == 4.5);
  CHECK(sum(d, {0}, true).dim() == 0);
  CHECK(sum(d, {}, true).dim() == 0);
  CHECK(mean(d, {0}).item<double>() == 4.5);
  CHECK(sum(make_tensor({3}, {}, DType::kI8)).dtype() == DType::kI64);
  CHECK_THROWS_AS(sum(d, {1}), IndexError);
}

TEST_CASE("reduce: large inputs against a double reference", "[reduce]") {
  // 4 MiB of float: larger than L2.
  const int64_t n = 1 << 20;
  V vals = lcg_values(n, 5, 0.0, 1.0);
  for (double& v : vals) v = static_cast<float>(v);
  Tensor x = make_tensor(vals, {n});
  double ref = 0;
  for (double v : vals) ref += v;
  double got = sum(x).item<double>();
  INFO("sum " << got << " ref " << ref);
  CHECK(std::fabs(got - ref) <= 1e-5 * ref);
  double gm = mean(x).item<double>();
  CHECK(std::fabs(gm - ref / n) <= 1e-5 * (ref / n));
  // Mixed signs.
  V mixed = lcg_values(n, 6, -1.0, 1.0);
  for (double& v : mixed) v = static_cast<float>(v);
  double mref = 0, mabs = 0;
  for (double v : mixed) {
    mref += v;
    mabs += std::fabs(v);
  }
  CHECK(std::fabs(sum(make_tensor(mixed, {n})).item<double>() - mref) <= 1e-6 * mabs);
  // Along each dim of a [1024, 1024] matrix and of its transpose.
  Tensor m = x.view({1024, 1024});
  check_reduce(m, {0}, false);
  check_reduce(m, {1}, false);
  check_reduce(m.t(), {0}, true);
  check_reduce(m.t(), {1}, false);
  check_reduce(m.view({64, 16, 1024}), {0, 2}, false);
  // Large f64 and int sums.
  Tensor xd = x.to(DType::kF64);
  CHECK(std::fabs(sum(xd).item<double>() - ref) <= 1e-10 * ref);
  Tensor xi = make_tensor(lcg_ints(n, 7, -1000000, 1000000), {n}, DType::kI32);
  int64_t iref = 0;
  for (double v : read_strided(xi)) iref += static_cast<int64_t>(v);
  CHECK(sum(xi).item<int64_t>() == iref);
  // f16 inputs accumulate in float: 1M values of 0.5 sum to 2^19 exactly.
  Tensor hh = full({n}, 0.5, DType::kF32).to(DType::kF16);
  CHECK(sum(hh, {}, false, DType::kF32).item<double>() == 524288.0);
  CHECK(mean(hh).item<double>() == 0.5);
}

TEST_CASE("reduce: errors", "[reduce]") {
  Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_MATCHES(sum(x, {3}), IndexError, MessageContains({"sum"}));
  CHECK_THROWS_AS(sum(x, {-4}), IndexError);
  CHECK_THROWS_AS(mean(x, {5}), IndexError);
  CHECK_THROWS_MATCHES(sum(x, {0, 0}), ValueError, MessageContains({"sum"}));
  CHECK_THROWS_AS(sum(x, {1, -2}), ValueError);
  CHECK_THROWS_AS(mean(x, {2, -1}), ValueError);
  CHECK_THROWS_MATCHES(mean(zeros({3}, DType::kI64)), TypeError, MessageContains({"mean"}));
  CHECK_THROWS_AS(mean(zeros({3}, DType::kI32)), TypeError);
  CHECK_THROWS_AS(mean(zeros({3}, DType::kBool)), TypeError);
  CHECK_THROWS_AS(mean(zeros({3}, DType::kU8), {0}), TypeError);
  CHECK_THROWS_AS(mean(zeros({3}), {}, false, DType::kI32), TypeError);
}

// Long rows with fewer rows than threads are cut into pieces reduced in
// parallel (devices/cpu/kernels/reduction_ext.cc); the pieces and the
// vector lanes must combine to the whole row's answer, NaN included.
TEST_CASE("reduce: whole-tensor amax, amin, prod, norms and var of a long row", "[reduce]") {
  const int64_t n = (int64_t{1} << 18) + 37;  // pieces and a tail that is not a whole vector
  std::vector<double> v(static_cast<size_t>(n));
  double mx = -1e300, mn = 1e300, mabs = 0, l1 = 0, l2 = 0, s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(static_cast<float>(std::sin(0.37 * static_cast<double>(i)) *
                                                           (1.0 + static_cast<double>(i % 97))));
    v[static_cast<size_t>(i)] = x;
    mx = std::max(mx, x), mn = std::min(mn, x), mabs = std::max(mabs, std::abs(x));
    l1 += std::abs(x), l2 += x * x, s += x;
  }
  const double mean_v = s / static_cast<double>(n);
  double q = 0;
  for (double x : v) q += (x - mean_v) * (x - mean_v);
  Tensor t = make_tensor(v, {n});
  CHECK(amax(t).item<double>() == mx);
  CHECK(amin(t).item<double>() == mn);
  CHECK(norm(t, INFINITY).item<double>() == mabs);
  CHECK(norm(t, 1.0).item<double>() == Approx(l1).epsilon(1e-6));
  CHECK(norm(t, 2.0).item<double>() == Approx(std::sqrt(l2)).epsilon(1e-6));
  CHECK(var(t).item<double>() == Approx(q / static_cast<double>(n - 1)).epsilon(1e-6));
  CHECK(tessera::std(t).item<double>() == Approx(std::sqrt(q / static_cast<double>(n - 1))).epsilon(1e-6));
  // A product whose every partial product is exact (powers of two and
  // signs), so any order of the lanes and pieces gives the one answer.
  std::vector<double> f(static_cast<size_t>(n));
  double exact = 1;
  for (int64_t i = 0; i < n; ++i) {
    const double x = (i % 3 == 0 ? 2.0 : i % 3 == 1 ? 0.5 : 1.0) * (i % 7 == 0 ? -1.0 : 1.0);
    f[static_cast<size_t>(i)] = x;
    exact *= x;
  }
  CHECK(prod(make_tensor(f, {n})).item<double>() == exact);
  // One NaN anywhere (a late piece, the tail) wins every extreme.
  for (int64_t at : {n * 3 / 4, n - 1}) {
    std::vector<double> w = v;
    w[static_cast<size_t>(at)] = std::nan("");
    Tensor u = make_tensor(w, {n});
    CHECK(std::isnan(amax(u).item<double>()));
    CHECK(std::isnan(amin(u).item<double>()));
    CHECK(std::isnan(norm(u, INFINITY).item<double>()));
  }
}

// Reductions over the leading dims of a contiguous float tensor take a
// path of their own (columns reduced row after row); each column must get
// what a reduction of its own values gives, NaN in a column included, and
// a non-contiguous input (the row view) must agree.
TEST_CASE("reduce: amax, amin, prod and norms over the leading dims", "[reduce]") {
  const int64_t a = 11, b = 47, c = 1003;  // 517 rows, a column count with a vector tail
  std::vector<double> v(static_cast<size_t>(a * b * c));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(static_cast<float>(std::cos(0.7 * static_cast<double>(i)) * 3.0));
  }
  v[static_cast<size_t>(200 * c + 5)] = std::nan("");  // column 5 has a NaN in a middle row
  Tensor t = make_tensor(v, {a, b, c});
  const int64_t rows = a * b;
  auto column = [&](int64_t j) {
    std::vector<double> col;
    for (int64_t r = 0; r < rows; ++r) col.push_back(v[static_cast<size_t>(r * c + j)]);
    return col;
  };
  const std::vector<double> got_max = to_doubles(amax(t, {0, 1}));
  const std::vector<double> got_min = to_doubles(amin(t, {1, 0}));
  const std::vector<double> got_inf = to_doubles(norm(t, INFINITY, {0, 1}));
  const std::vector<double> got_l1 = to_doubles(norm(t, 1.0, {0, 1}));
  const std::vector<double> got_l2 = to_doubles(norm(t, 2.0, {0, 1}));
  int bad = 0;
  for (int64_t j = 0; j < c; ++j) {
    const std::vector<double> col = column(j);
    const bool has_nan = j == 5;
    double mx = -1e300, mn = 1e300, mi = 0, l1 = 0, l2 = 0;
    for (double x : col) {
      mx = std::max(mx, x), mn = std::min(mn, x), mi = std::max(mi, std::abs(x));
      l1 += std::abs(x), l2 += x * x;
    }
    auto same = [&](double got, double want) { return has_nan ? std::isnan(got) : got == want; };
    auto near = [&](double got, double want) {
      return has_nan ? std::isnan(got) : std::abs(got - want) <= 1e-5 * want;
    };
    const size_t k = static_cast<size_t>(j);
    if (!same(got_max[k], mx) || !same(got_min[k], mn) || !same(got_inf[k], mi) ||
        !near(got_l1[k], l1) || !near(got_l2[k], std::sqrt(l2))) {
      ++bad;
    }
  }
  CHECK(bad == 0);
  // The same reduction through the row view (a transposed, non-contiguous input).
  Tensor m = make_tensor(v, {rows, c});
  const std::vector<double> via_rows = to_doubles(amax(m.t().contiguous().t(), {0}));
  const std::vector<double> direct = to_doubles(amax(m, {0}));
  for (int64_t j = 0; j < c; ++j) {
    const size_t k = static_cast<size_t>(j);
    CHECK((std::isnan(via_rows[k]) ? std::isnan(direct[k]) : via_rows[k] == direct[k]));
  }
  // A product along columns with exact partial products.
  std::vector<double> f(static_cast<size_t>(rows * 16));
  for (size_t i = 0; i < f.size(); ++i) f[i] = (i / 16) % 3 == 0 ? 2.0 : (i / 16) % 3 == 1 ? 0.5 : -1.0;
  double exact = 1;
  for (int64_t r = 0; r < rows; ++r) exact *= f[static_cast<size_t>(r * 16)];
  for (double p : to_doubles(prod(make_tensor(f, {rows, 16}), 0))) CHECK(p == exact);
}
