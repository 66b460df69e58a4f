// Factories: empty, empty_strided, zeros, ones, full (with dtype inference),
// arange (integer, float, negative steps, empty ranges, errors) and *_like.
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
}

TEST_CASE("factories: empty and empty_strided", "[factory]") {
  Tensor e = empty({2, 3});
  CHECK(e.dtype() == DType::kF32);
  CHECK(e.device() == host_device());
  CHECK(e.sizes() == Shape{2, 3});
  CHECK(e.strides() == Shape{3, 1});
  CHECK(e.storage_offset() == 0);
  CHECK(e.is_contiguous());
  CHECK(e.numel() == 6);
  CHECK(e.storage()->nbytes() >= 24);
  CHECK(e.data_ptr() != nullptr);

  for (DType t : all_dtypes()) {
    INFO(dname(t));
    Tensor x = empty({4, 5}, t);
    CHECK(x.dtype() == t);
    CHECK(x.itemsize() == itemsize(t));
    CHECK(x.nbytes() == 20 * itemsize(t));
    // Writable and readable everywhere.
    write_strided(x, lcg_ints(20, 3, 0, 1));
    CHECK(close_report(to_doubles(x), read_strided(x)) == "");
  }
  Tensor s = empty({});
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  Tensor z = empty({3, 0, 2});
  CHECK(z.numel() == 0);
  CHECK(z.to_vector<float>().empty());
  Tensor d = empty({2}, TensorOptions(DType::kI16, host_device()));
  CHECK(d.dtype() == DType::kI16);

  Tensor st = empty_strided({2, 3}, {1, 2});
  CHECK(st.sizes() == Shape{2, 3});
  CHECK(st.strides() == Shape{1, 2});
  CHECK_FALSE(st.is_contiguous());
  CHECK(st.storage()->nbytes() >= 6 * 4);
  write_strided(st, iota(6));
  CHECK(close_report(to_doubles(st), iota(6)) == "");
  Tensor st2 = empty_strided({2, 2}, {0, 1}, DType::kF64);
  CHECK(st2.strides() == Shape{0, 1});
  CHECK(st2.dtype() == DType::kF64);
  CHECK_THROWS_AS(empty_strided({2, 3}, {1}), ValueError);
  CHECK_THROWS_AS(empty_strided({2, 3}, {-1, 1}), ValueError);
}

TEST_CASE("factories: zeros, ones and full for every dtype", "[factory]") {
  for (DType t : all_dtypes()) {
    INFO(dname(t));
    Tensor z = zeros({3, 4}, t);
    CHECK(z.dtype() == t);
    CHECK(read_strided(z) == V(12, 0.0));
    Tensor o = ones({2, 1, 3}, t);
    CHECK(o.sizes() == Shape{2, 1, 3});
    CHECK(read_strided(o) == V(6, 1.0));
    Tensor f = full({5}, 1, t);
    CHECK(f.dtype() == t);
    CHECK(read_strided(f) == V(5, 1.0));
    Tensor f2 = full({2, 2}, 7, t);
    CHECK(read_strided(f2) == V(4, t == DType::kBool ? 1.0 : 7.0));
    Tensor zs = zeros({}, t);
    CHECK(zs.dim() == 0);
    CHECK(read_strided(zs) == V{0.0});
    CHECK(zeros({0, 4}, t).numel() == 0);
  }
  // Defaults.
  CHECK(zeros({2}).dtype() == DType::kF32);
  CHECK(ones({2}).dtype() == DType::kF32);
  // Large enough to take any parallel path.
  Tensor big = ones({1 << 20}, DType::kF64);
  V bv = read_strided(big);
  CHECK(close_report(bv, V(1 << 20, 1.0)) == "");
  Tensor bz = zeros({1 << 20}, DType::kI8);
  CHECK(close_report(read_strided(bz), V(1 << 20, 0.0)) == "");
}

TEST_CASE("factories: full infers its dtype and casts its value", "[factory]") {
  CHECK(full({2}, 7).dtype() == DType::kI64);
  CHECK(full({2}, 2.5).dtype() == DType::kF32);
  CHECK(full({2}, true).dtype() == DType::kBool);
  CHECK(read_strided(full({3}, -4)) == V(3, -4.0));
  CHECK(read_strided(full({2}, 2.5)) == V(2, 2.5));
  CHECK(read_strided(full({2}, true)) == V(2, 1.0));
  // An explicit dtype wins; the value is cast as by a C++ cast.
  Tensor i = full({2}, 3.7, DType::kI32);
  CHECK(i.dtype() == DType::kI32);
  CHECK(read_strided(i) == V(2, 3.0));
  CHECK(read_strided(full({2}, -3.7, DType::kI64)) == V(2, -3.0));
  CHECK(read_strided(full({2}, 0.5, DType::kBool)) == V(2, 1.0));
  CHECK(read_strided(full({2}, 0.0, DType::kBool)) == V(2, 0.0));
  CHECK(read_strided(full({2}, 1.0 / 3.0, DType::kF16)) == V(2, cast_value(1.0 / 3.0, DType::kF16)));
  CHECK(read_strided(full({2}, 1.0 / 3.0, DType::kBF16)) == V(2, cast_value(1.0 / 3.0, DType::kBF16)));
  CHECK(read_strided(full({2}, 0.1, DType::kF64)) == V(2, 0.1));
  CHECK(read_strided(full({2}, 0.1)) == V(2, static_cast<double>(0.1f)));
  CHECK(std::isnan(read_strided(full({1}, NAN))[0]));
  int64_t big = (int64_t{1} << 62) + 3;
  CHECK(full({1}, big).to_vector<int64_t>() == std::vector<int64_t>{big});
}

TEST_CASE("factories: arange", "[factory]") {
  Tensor a = arange(5);
  CHECK(a.dtype() == DType::kI64);
  CHECK(a.sizes() == Shape{5});
  CHECK(read_strided(a) == V{0, 1, 2, 3, 4});
  CHECK(read_strided(arange(1, 4)) == V{1, 2, 3});
  CHECK(read_strided(arange(-3, 3)) == V{-3, -2, -1, 0, 1, 2});
  CHECK(read_strided(arange(10, 0, -3)) == V{10, 7, 4, 1});
  CHECK(arange(10, 0, -3).dtype() == DType::kI64);
  CHECK(read_strided(arange(0, 10, 3)) == V{0, 3, 6, 9});
  CHECK(read_strided(arange(0, 9, 3)) == V{0, 3, 6});

  Tensor f = arange(0, 1, 0.25);
  CHECK(f.dtype() == DType::kF32);
  CHECK(read_strided(f) == V{0, 0.25, 0.5, 0.75});
  Tensor g = arange(2.5);
  CHECK(g.dtype() == DType::kF32);
  CHECK(read_strided(g) == V{0, 1, 2});
  Tensor h = arange(0, 1, 0.1);
  CHECK(h.numel() == 10);
  V hv;
  for (int i = 0; i < 10; ++i) hv.push_back(static_cast<double>(static_cast<float>(i * 0.1)));
  CHECK(close_report(read_strided(h), hv, 1e-6, 1e-7) == "");
  Tensor n = arange(1.0, -1.0, -0.5);
  CHECK(read_strided(n) == V{1, 0.5, 0, -0.5});
  CHECK(arange(1, 2, 0.5).dtype() == DType::kF32);  // any float makes float32

  // Explicit dtype.
  Tensor d = arange(5, DType::kF64);
  CHECK(d.dtype() == DType::kF64);
  CHECK(read_strided(d) == V{0, 1, 2, 3, 4});
  Tensor h16 = arange(0, 4, 1, DType::kF16);
  CHECK(h16.dtype() == DType::kF16);
  CHECK(read_strided(h16) == V{0, 1, 2, 3});
  Tensor i8 = arange(-2, 2, 1, DType::kI8);
  CHECK(i8.dtype() == DType::kI8);
  CHECK(read_strided(i8) == V{-2, -1, 0, 1});

  // A longer float range: start + i * step, not a running sum.
  Tensor l = arange(0, 1000, 0.1, DType::kF64);
  REQUIRE(l.numel() == 10000);
  V lv = read_strided(l);
  V lref(10000);
  for (int i = 0; i < 10000; ++i) lref[i] = i * 0.1;
  CHECK(close_report(lv, lref, 1e-12, 1e-12) == "");

  // int64 ranges are exact beyond 2^53.
  int64_t big = int64_t{1} << 60;
  Tensor bi = arange(big, big + 3);
  CHECK(bi.to_vector<int64_t>() == std::vector<int64_t>{big, big + 1, big + 2});
  Tensor bn = arange(big + 10, big, -4);
  CHECK(bn.to_vector<int64_t>() == std::vector<int64_t>{big + 10, big + 6, big + 2});

  // Empty ranges.
  CHECK(arange(5, 5).numel() == 0);
  CHECK(arange(0).numel() == 0);
  CHECK(arange(5, 5, -1).numel() == 0);
  CHECK(arange(0.5, 0.5, 0.1).numel() == 0);

  // Errors.
  CHECK_THROWS_MATCHES(arange(0, 5, 0), ValueError, MessageContains({"step"}));
  CHECK_THROWS_AS(arange(0.0, 1.0, 0.0), ValueError);
  CHECK_THROWS_AS(arange(5, 0), ValueError);
  CHECK_THROWS_AS(arange(0, 5, -1), ValueError);
  CHECK_THROWS_AS(arange(-1), ValueError);
  CHECK_THROWS_AS(arange(0, INFINITY), ValueError);
  CHECK_THROWS_AS(arange(0, NAN), ValueError);
}

TEST_CASE("factories: *_like keep shape and dtype", "[factory]") {
  for (DType t : all_dtypes()) {
    INFO(dname(t));
    Tensor src = make_tensor(lcg_ints(6, 1, 0, 1), {2, 3}, t);
    Tensor e = empty_like(src);
    CHECK(e.sizes() == src.sizes());
    CHECK(e.dtype() == t);
    CHECK(e.device() == src.device());
    CHECK(e.storage().get() != src.storage().get());
    Tensor z = zeros_like(src);
    CHECK(z.dtype() == t);
    CHECK(read_strided(z) == V(6, 0.0));
    Tensor o = ones_like(src);
    CHECK(o.dtype() == t);
    CHECK(read_strided(o) == V(6, 1.0));
    Tensor f = full_like(src, 1);
    CHECK(f.dtype() == t);
    CHECK(read_strided(f) == V(6, 1.0));
  }
  // full_like casts to the tensor's dtype (no inference from the value).
  Tensor i = zeros({3}, DType::kI32);
  Tensor fi = full_like(i, 2.7);
  CHECK(fi.dtype() == DType::kI32);
  CHECK(read_strided(fi) == V(3, 2.0));
  Tensor fb = full_like(zeros({2}, DType::kF64), 0.1);
  CHECK(read_strided(fb) == V(2, 0.1));

  // Non-contiguous and 0-d sources: same sizes, fresh values.
  Tensor base = make_tensor(iota(6), {2, 3});
  Tensor tr = base.t();
  Tensor ot = ones_like(tr);
  CHECK(ot.sizes() == Shape{3, 2});
  CHECK(read_strided(ot) == V(6, 1.0));
  CHECK(close_report(read_strided(base), iota(6)) == "");  // source untouched
  Tensor zt = zeros_like(make_tensor({5}, {}));
  CHECK(zt.dim() == 0);
  CHECK(read_strided(zt) == V{0.0});
  Tensor ez = empty_like(zeros({0, 3}));
  CHECK(ez.sizes() == Shape{0, 3});
}
