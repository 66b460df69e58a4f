// copy_ and to(): every dtype to every dtype against naive static_cast
// semantics, non-contiguous sources and destinations, broadcasting, 0-d and
// zero-size tensors, and shape errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {
using V = std::vector<double>;

// Values every dtype can hold (after its own rounding) and that every
// destination can take without undefined behaviour.
V portable_values(DType src) {
  if (src == DType::kBool) return {0, 1, 1, 0, 1};
  return {0, 1, 2.5, 99.7, 0.25, 65.5, 3, 100, -0.0, 7.9};
}

// Negative values: for signed destinations from any source, and for every
// destination from integer sources (modular conversion is defined).
V negative_values(DType src) {
  if (src == DType::kBool) return {};
  if (src == DType::kU8) return {};
  return {-1.5, -99.7, -3, -0.25, -100};
}

// Integer values that wrap in narrower integer destinations.
V wrapping_values(DType src) {
  switch (src) {
    case DType::kI16: return {300, -129, 255, 256, -32768};
    case DType::kI32: return {300, -129, 70000, -70000, 2147483647};
    case DType::kI64: return {300, -129, 70000, 4294967297.0, -4294967297.0};
    case DType::kU8: return {255, 128, 200};
    default: return {};
  }
}

bool float_to_unsigned(DType src, DType dst) {
  return is_floating(src) && dst == DType::kU8;
}

void check_cast(DType src, DType dst, const V& values) {
  if (values.empty()) return;
  int64_t n = static_cast<int64_t>(values.size());
  Tensor s = make_tensor(values, {n}, src);
  V expected;
  for (double v : values) expected.push_back(cast_value(v, src, dst));
  Tensor d = empty({n}, dst);
  d.copy_(s);
  INFO(dname(src) << " -> " << dname(dst));
  CHECK(close_report(read_strided(d), expected) == "");
  Tensor t = s.to(dst);
  CHECK(t.dtype() == dst);
  CHECK(close_report(read_strided(t), expected) == "");
}
}  // namespace

TEST_CASE("copy: every dtype to every dtype", "[copy]") {
  for (DType src : all_dtypes()) {
    for (DType dst : all_dtypes()) {
      check_cast(src, dst, portable_values(src));
      if (!float_to_unsigned(src, dst)) check_cast(src, dst, negative_values(src));
      check_cast(src, dst, wrapping_values(src));
    }
  }
}

TEST_CASE("copy: special float values", "[copy]") {
  Tensor s = make_tensor({NAN, INFINITY, -INFINITY, -0.0, 1e-30, 1e6, 65519, 65520}, {8},
                         DType::kF32);
  // -> bool: NaN and inf are true, zeros false, tiny nonzero true.
  CHECK(read_strided(s.to(DType::kBool)) == V{1, 1, 1, 0, 1, 1, 1, 1});
  // -> f16: inf stays, tiny flushes to zero, 1e6 and 65520 overflow.
  V h = read_strided(s.to(DType::kF16));
  CHECK(std::isnan(h[0]));
  CHECK(h[1] == INFINITY);
  CHECK(h[2] == -INFINITY);
  CHECK(h[3] == 0.0);
  CHECK(std::signbit(h[3]));
  CHECK(h[4] == 0.0);
  CHECK(h[5] == INFINITY);
  CHECK(h[6] == 65504.0);
  CHECK(h[7] == INFINITY);
  // -> bf16 keeps the range.
  V b = read_strided(s.to(DType::kBF16));
  CHECK(std::isnan(b[0]));
  CHECK(b[5] == cast_value(1e6, DType::kBF16));
  CHECK(b[4] == cast_value(1e-30, DType::kBF16));
  // f64 -> f32 rounds; f64 -> f16 rounds through float.
  Tensor d = make_tensor({0.1, 1.0 / 3.0, 1e300, 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)},
                         {4}, DType::kF64);
  V f = read_strided(d.to(DType::kF32));
  CHECK(f[0] == static_cast<double>(0.1f));
  CHECK(f[1] == static_cast<double>(1.0f / 3.0f));
  CHECK(f[2] == INFINITY);
  V hh = read_strided(d.to(DType::kF16));
  CHECK(hh[1] == cast_value(1.0 / 3.0, DType::kF16));
  CHECK(hh[3] == static_cast<float>(Half(static_cast<float>(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)))));
  // float -> int truncates toward zero.
  Tensor tr = make_tensor({2.99, -2.99, 0.5, -0.5, 1e9}, {5}, DType::kF64);
  CHECK(tr.to(DType::kI32).to_vector<int64_t>() == std::vector<int64_t>{2, -2, 0, 0, 1000000000});
  CHECK(tr.to(DType::kI64).to_vector<int64_t>() == std::vector<int64_t>{2, -2, 0, 0, 1000000000});
  // Large int64 -> f64 and -> f32 round to nearest.
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor bi = empty({1}, DType::kI64);
  bi.data<int64_t>()[0] = big;
  CHECK(bi.to(DType::kF64).to_vector<double>()[0] == static_cast<double>(big));
  CHECK(bi.to(DType::kF32).to_vector<float>()[0] == static_cast<float>(big));
  // int64 -> int64 copy keeps every bit.
  Tensor bc = empty({1}, DType::kI64);
  bc.copy_(bi);
  CHECK(bc.data<int64_t>()[0] == big);
}

TEST_CASE("copy: to() returns the same tensor when nothing changes", "[copy]") {
  Tensor a = make_tensor(iota(4), {4});
  Tensor same = a.to(DType::kF32);
  CHECK(same.storage().get() == a.storage().get());
  Tensor same2 = a.to(host_device());
  CHECK(same2.storage().get() == a.storage().get());
  Tensor other = a.to(DType::kF64);
  CHECK(other.storage().get() != a.storage().get());
  Tensor both = a.to(host_device(), DType::kI16);
  CHECK(both.dtype() == DType::kI16);
  CHECK(read_strided(both) == iota(4));
  // Converting a non-contiguous tensor gives its values in order.
  Tensor m = make_tensor(iota(6), {2, 3});
  Tensor mt = m.t().to(DType::kI32);
  CHECK(mt.sizes() == Shape{3, 2});
  CHECK(mt.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("copy: non-contiguous sources and destinations", "[copy]") {
  Tensor base = make_tensor(iota(24), {2, 3, 4});
  Tensor src = base.permute({2, 0, 1});  // [4, 2, 3]
  V expect = read_strided(src);

  for (DType dt : {DType::kF32, DType::kF64, DType::kI32, DType::kF16}) {
    INFO(dname(dt));
    Tensor dst = empty({4, 2, 3}, dt);
    dst.copy_(src);
    CHECK(close_report(read_strided(dst), expect) == "");
  }

  // Into a strided destination: only its elements change.
  Tensor big = zeros({6, 8}, DType::kF64);
  Tensor window = big.slice(0, 1, 5).slice(1, 0, 8, 2);  // [4, 4]
  Tensor vals = make_tensor(iota(16, 1), {4, 4}, DType::kF32);
  window.copy_(vals);
  V got = read_strided(big);
  V ref(48, 0.0);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) ref[(r + 1) * 8 + 2 * c] = 1 + r * 4 + c;
  CHECK(close_report(got, ref) == "");

  // Transposed destination from transposed source, both strided.
  Tensor a = zeros({5, 7}, DType::kI64);
  Tensor b = make_tensor(iota(35), {7, 5}, DType::kI16);
  a.t().copy_(b);
  V aref(35);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) aref[i * 7 + j] = j * 5 + i;
  CHECK(read_strided(a) == aref);

  // Large transposed copy (exercises any blocked / parallel path).
  Tensor lsrc = make_tensor(iota(1000 * 700), {1000, 700});
  Tensor ldst = empty({700, 1000}, DType::kF32);
  ldst.copy_(lsrc.t());
  V lg = read_strided(ldst);
  int bad = 0;
  for (int i = 0; i < 700; ++i)
    for (int j = 0; j < 1000; ++j) bad += lg[i * 1000 + j] != static_cast<double>(j * 700 + i);
  CHECK(bad == 0);

  // Copy from a view of itself into another part of the same storage.
  Tensor s = make_tensor(iota(10), {10});
  s.slice(0, 5, 10).copy_(s.slice(0, 0, 5));
  CHECK(read_strided(s) == V{0, 1, 2, 3, 4, 0, 1, 2, 3, 4});
}

TEST_CASE("copy: broadcasting sources, 0-d and zero-size", "[copy]") {
  Tensor row = make_tensor({1, 2, 3}, {3}, DType::kI32);
  Tensor dst = empty({2, 3}, DType::kF32);
  dst.copy_(row);
  CHECK(read_strided(dst) == V{1, 2, 3, 1, 2, 3});
  Tensor col = make_tensor({5, 6}, {2, 1});
  Tensor d3 = empty({4, 2, 3}, DType::kF64);
  d3.copy_(col);
  V ref;
  for (int k = 0; k < 4; ++k)
    for (double v : {5.0, 6.0})
      for (int j = 0; j < 3; ++j) ref.push_back(v);
  CHECK(read_strided(d3) == ref);
  // 0-d source fills.
  Tensor s = make_tensor({7.5}, {}, DType::kF64);
  Tensor df = empty({2, 2}, DType::kI8);
  df.copy_(s);
  CHECK(read_strided(df) == V(4, 7.0));
  // 0-d destination from a one-element tensor of shape [1]? Not allowed:
  // [1] does not broadcast to []. From 0-d: fine.
  Tensor d0 = empty({}, DType::kF32);
  d0.copy_(make_tensor({3}, {}, DType::kI64));
  CHECK(d0.item<double>() == 3.0);
  // The free function is the same as the method.
  Tensor d1 = empty({3}, DType::kF64);
  copy_(d1, row);
  CHECK(read_strided(d1) == V{1, 2, 3});
  // copy_ returns the destination.
  Tensor& r = d1.copy_(make_tensor({9, 9, 9}, {3}));
  CHECK(&r == &d1);
  // Zero-size copies do nothing and do not throw.
  Tensor z = empty({0, 3});
  z.copy_(empty({0, 3}, DType::kI64));
  z.copy_(make_tensor({1, 2, 3}, {3}));
  CHECK(z.numel() == 0);
}

TEST_CASE("copy: shape errors", "[copy]") {
  Tensor dst = empty({2, 3});
  CHECK_THROWS_AS(dst.copy_(empty({4})), ValueError);
  CHECK_THROWS_AS(dst.copy_(empty({3, 3})), ValueError);
  CHECK_THROWS_AS(dst.copy_(empty({2, 2, 3})), ValueError);  // src has more elements
  CHECK_THROWS_AS(dst.copy_(empty({2})), ValueError);
  Tensor d0 = empty({});
  CHECK_THROWS_AS(d0.copy_(empty({2})), ValueError);
  // The destination is unchanged after a failed copy.
  Tensor keep = make_tensor(iota(6), {2, 3});
  CHECK_THROWS_AS(keep.copy_(make_tensor({1, 1, 1, 1}, {4})), ValueError);
  CHECK(read_strided(keep) == iota(6));
  // The message names both shapes.
  CHECK_THROWS_MATCHES(dst.copy_(empty({4})), ValueError,
                       MessageContains({"[2, 3]", "[4]"}));
}

TEST_CASE("copy: overlapping destinations are rejected as in PyTorch", "[copy][overlap]") {
  // Several destination elements share one memory location.
  Tensor e = zeros({3, 1}).expand({3, 4});
  CHECK_THROWS_AS(e.copy_(ones({3, 4})), ValueError);
  // Source and destination partially overlap.
  Tensor a = make_tensor(iota(5), {5});
  CHECK_THROWS_AS(a.slice(0, 1, 5).copy_(a.slice(0, 0, 4)), ValueError);
  // Copying a tensor onto itself is fine.
  Tensor b = make_tensor(iota(4), {4});
  b.copy_(b);
  CHECK(read_strided(b) == iota(4));
}

TEST_CASE("reference helpers: they can tell right from wrong", "[copy][reference]") {
  // close_report flags mismatches, NaN vs number, and sign of infinity.
  CHECK(close_report({1.0}, {1.1}) != "");
  CHECK(close_report({1.0}, {1.0 + 1e-7}, 1e-6, 0) == "");
  CHECK(close_report({NAN}, {1.0}) != "");
  CHECK(close_report({NAN}, {NAN}) == "");
  CHECK(close_report({INFINITY}, {-INFINITY}) != "");
  CHECK(close_report({1, 2}, {1}) != "");
  CHECK(close_report_tol({1.0}, {1.5}, {0.4}) != "");
  // Naive casts.
  CHECK(cast_value(-3, DType::kI64, DType::kU8) == 253);
  CHECK(cast_value(300, DType::kI32, DType::kI8) == 44);
  CHECK(cast_value(-2.7, DType::kF32, DType::kI16) == -2);
  CHECK(cast_value(0.3, DType::kF64, DType::kBool) == 1);
  CHECK(cast_value(1.0 / 3.0, DType::kF16) == 0.333251953125);
  // The strided reader follows strides and offsets, not memory order.
  Tensor m = make_tensor(iota(6), {2, 3});
  CHECK(read_strided(m.t()) == V{0, 3, 1, 4, 2, 5});
  CHECK(read_strided(m.select(1, 2)) == V{2, 5});
  // The message matcher needs every part.
  MessageContains both({"add", "[2, 3]"});
  CHECK(both.match(ValueError("add: bad shape [2, 3]")));
  CHECK_FALSE(both.match(ValueError("add: bad shape [3]")));
}
