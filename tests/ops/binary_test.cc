// add / sub / mul / div: every dtype and dtype pair against a naive
// reference, broadcasting, non-contiguous inputs, alpha, Scalar operands,
// 0-d promotion, in-place variants and their errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {
using V = std::vector<double>;

enum class Op { kAdd, kSub, kMul, kDiv };
const char* op_name(Op op) {
  switch (op) {
    case Op::kAdd: return "add";
    case Op::kSub: return "sub";
    case Op::kMul: return "mul";
    case Op::kDiv: return "div";
  }
  return "?";
}

// Values of a (shape sa) at each element of out_shape, by broadcasting.
V broadcast_values(const V& a, const Shape& sa, const Shape& out) {
  V r;
  Shape st = naive_contiguous_strides(sa);
  int64_t n = naive_numel(out);
  std::vector<int64_t> idx(out.size(), 0);
  size_t lead = out.size() - sa.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sa.size(); ++d) {
      if (sa[d] != 1) off += idx[lead + d] * st[d];
    }
    r.push_back(a[off]);
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

// The naive result of op on stored values a (dtype ta) and b (dtype tb),
// in result dtype r (div: the floating dtype of the result).
V reference(Op op, const V& a, DType ta, const V& b, DType tb, DType r,
            double alpha = 1.0) {
  V out;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = cast_value(a[i], ta, r), y = cast_value(b[i], tb, r);
    double v;
    if (r == DType::kBool) {
      v = op == Op::kMul ? (x != 0 && y != 0) : (x != 0 || (alpha != 0 && y != 0));
    } else if (!is_floating(r)) {
      int64_t xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
      int64_t al = static_cast<int64_t>(alpha);
      int64_t res = op == Op::kAdd ? xi + al * yi : op == Op::kSub ? xi - al * yi : xi * yi;
      v = cast_value(static_cast<double>(res), DType::kI64, r);
    } else {
      double res = op == Op::kAdd   ? x + alpha * y
                   : op == Op::kSub ? x - alpha * y
                   : op == Op::kMul ? x * y
                                    : x / y;
      v = cast_value(res, DType::kF64, r);
    }
    out.push_back(v);
  }
  return out;
}

double rtol_for(DType t) {
  switch (t) {
    case DType::kF16: return 1e-3;
    case DType::kBF16: return 1.6e-2;
    case DType::kF32: return 1.3e-6;
    case DType::kF64: return 1e-12;
    default: return 0;
  }
}
double atol_for(DType t) { return is_floating(t) ? (t == DType::kF64 ? 1e-12 : 1e-5) : 0; }

// Sample values for a dtype: small, mixed-sign where allowed, no zeros for
// integer divisors.
V sample(DType t, int64_t n, uint64_t seed, bool nonzero = false) {
  if (t == DType::kBool) return lcg_ints(n, seed, nonzero ? 1 : 0, 1);
  if (t == DType::kU8) return lcg_ints(n, seed, nonzero ? 1 : 0, 12);
  if (!is_floating(t)) {
    V v = lcg_ints(n, seed, -9, 9);
    if (nonzero) for (double& x : v) if (x == 0) x = 3;
    return v;
  }
  V v = lcg_values(n, seed, -4.0, 4.0);
  for (double& x : v) {
    x = cast_value(x, t);
    if (nonzero && std::fabs(x) < 0.25) x = 0.5;
  }
  return v;
}

Tensor run(Op op, const Tensor& a, const Tensor& b, Scalar alpha = 1) {
  switch (op) {
    case Op::kAdd: return add(a, b, alpha);
    case Op::kSub: return sub(a, b, alpha);
    case Op::kMul: return mul(a, b);
    case Op::kDiv: return div(a, b);
  }
  return {};
}

DType expected_dtype(Op op, DType r) {
  if (op == Op::kDiv && !is_floating(r)) return DType::kF32;
  return r;
}

int category_rank(DType t) {
  return t == DType::kBool ? 0 : is_floating(t) ? 2 : 1;
}

// torch.result_type for two tensors, written out: a 0-d tensor facing a
// dimensioned one only counts when of a higher category, and then gives its
// own dtype.
DType naive_result_type(const Tensor& a, const Tensor& b) {
  if ((a.dim() == 0) == (b.dim() == 0)) return promote_types(a.dtype(), b.dtype());
  const Tensor& dimmed = a.dim() == 0 ? b : a;
  const Tensor& zero = a.dim() == 0 ? a : b;
  if (category_rank(zero.dtype()) > category_rank(dimmed.dtype())) return zero.dtype();
  return dimmed.dtype();
}

// Checks op(a, b) with its reference; a and b may be any views.
void check_op(Op op, const Tensor& a, const Tensor& b, double alpha = 1.0) {
  DType r = naive_result_type(a, b);
  DType rd = expected_dtype(op, r);
  Shape out = broadcast_shapes(a.sizes(), b.sizes(), "test");
  V av = broadcast_values(read_strided(a), a.sizes(), out);
  V bv = broadcast_values(read_strided(b), b.sizes(), out);
  V ref = reference(op, av, a.dtype(), bv, b.dtype(), rd, alpha);
  Tensor res = alpha == 1.0 ? run(op, a, b) : run(op, a, b, Scalar(alpha));
  INFO(op_name(op) << " " << describe(a) << " , " << describe(b));
  CHECK(res.dtype() == rd);
  CHECK(res.sizes() == out);
  CHECK(close_report(read_strided(res), ref, rtol_for(rd), atol_for(rd)) == "");
}
}  // namespace

TEST_CASE("binary: each op on each dtype", "[binary]") {
  for (DType t : all_dtypes()) {
    Tensor a = make_tensor(sample(t, 12, 1), {3, 4}, t);
    Tensor b = make_tensor(sample(t, 12, 2, true), {3, 4}, t);
    check_op(Op::kAdd, a, b);
    check_op(Op::kMul, a, b);
    check_op(Op::kDiv, a, b);
    if (t != DType::kBool) {
      check_op(Op::kSub, a, b);
    } else {
      CHECK_THROWS_AS(sub(a, b), TypeError);
    }
  }
}

TEST_CASE("binary: every dtype pair promotes like PyTorch", "[binary]") {
  for (DType ta : all_dtypes()) {
    for (DType tb : all_dtypes()) {
      Tensor a = make_tensor(sample(ta, 6, 3), {2, 3}, ta);
      Tensor b = make_tensor(sample(tb, 6, 4, true), {2, 3}, tb);
      CHECK(add(a, b).dtype() == promote_types(ta, tb));
      check_op(Op::kAdd, a, b);
      check_op(Op::kMul, a, b);
      check_op(Op::kDiv, a, b);
      if (ta != DType::kBool && tb != DType::kBool) {
        check_op(Op::kSub, a, b);
      } else {
        INFO(dname(ta) << " - " << dname(tb));
        CHECK_THROWS_MATCHES(sub(a, b), TypeError, MessageContains({"bool"}));
      }
    }
  }
}

TEST_CASE("binary: broadcasting", "[binary]") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1}, {1, 4}},    {{2, 3, 4}, {4}},     {{}, {2, 3}},  {{2, 3}, {}},
      {{0, 3}, {3}},       {{2, 1, 4}, {3, 1}},  {{1}, {5}},    {{5, 1, 1}, {1, 1, 6}},
      {{}, {}},            {{4, 0}, {1}},        {{1, 1}, {2, 2}}};
  for (const auto& [sa, sb] : cases) {
    for (DType t : {DType::kF32, DType::kI32, DType::kF16}) {
      Tensor a = make_tensor(sample(t, naive_numel(sa), 5), sa, t);
      Tensor b = make_tensor(sample(t, naive_numel(sb), 6, true), sb, t);
      check_op(Op::kAdd, a, b);
      check_op(Op::kSub, a, b);
      check_op(Op::kMul, a, b);
      check_op(Op::kDiv, a, b);
    }
  }
  CHECK(broadcast_shapes({3, 1}, {1, 4}, "x") == Shape{3, 4});
  CHECK(broadcast_shapes({}, {2}, "x") == Shape{2});
  CHECK(broadcast_shapes({2, 0}, {1}, "x") == Shape{2, 0});
  CHECK(broadcast_shapes({7, 1, 3}, {2, 1}, "x") == Shape{7, 2, 3});
  CHECK_THROWS_MATCHES(broadcast_shapes({2, 0}, {2, 3}, "myop"), ValueError,
                       MessageContains({"myop"}));
}

TEST_CASE("binary: non-contiguous inputs", "[binary]") {
  for (DType t : {DType::kF32, DType::kF64, DType::kI64, DType::kBF16, DType::kU8}) {
    Tensor base = make_tensor(sample(t, 60, 7), {6, 10}, t);
    Tensor other = make_tensor(sample(t, 60, 8, true), {10, 6}, t);
    Tensor at = base.t();                           // [10, 6] transposed
    Tensor bs = other.slice(0, 0, 10, 2);           // [5, 6] step 2
    Tensor as = base.slice(1, 1, 10, 2).t();        // [5, 6] strided + transposed
    check_op(Op::kAdd, at, other);
    check_op(Op::kMul, other, at);
    check_op(Op::kSub, as, bs);
    check_op(Op::kDiv, as, bs);
    // Expanded operand.
    Tensor col = make_tensor(sample(t, 5, 9, true), {5, 1}, t).expand({5, 6});
    check_op(Op::kAdd, bs, col);
    check_op(Op::kDiv, col, bs);
  }
  // Larger strided case.
  Tensor big = make_tensor(lcg_values(512 * 1024, 10, -1, 1), {512, 1024});
  Tensor bigb = make_tensor(lcg_values(1024 * 512, 11, -1, 1), {1024, 512});
  check_op(Op::kAdd, big, bigb.t());
  check_op(Op::kMul, big.slice(1, 0, 1024, 2), bigb.t().slice(1, 1, 1024, 2));
}

TEST_CASE("binary: alpha", "[binary]") {
  Tensor a = make_tensor({1, 2, 3}, {3}, DType::kI32);
  Tensor b = make_tensor({10, 20, 30}, {3}, DType::kI32);
  CHECK(read_strided(add(a, b, 2)) == V{21, 42, 63});
  CHECK(read_strided(sub(a, b, 3)) == V{-29, -58, -87});
  CHECK(add(a, b, 2).dtype() == DType::kI32);
  Tensor fa = make_tensor({1, 2, 3}, {3});
  Tensor fb = make_tensor({10, 20, 30}, {3});
  CHECK(read_strided(add(fa, fb, 0.5)) == V{6, 12, 18});
  CHECK(read_strided(sub(fa, fb, -0.25)) == V{3.5, 7, 10.5});
  check_op(Op::kAdd, make_tensor(sample(DType::kF64, 8, 12), {8}, DType::kF64),
           make_tensor(sample(DType::kF64, 8, 13), {8}, DType::kF64), 1.7);
  check_op(Op::kSub, make_tensor(sample(DType::kF16, 8, 12), {8}, DType::kF16),
           make_tensor(sample(DType::kF16, 8, 13), {8}, DType::kF16), -0.5);
  // Scalar operand with alpha.
  CHECK(read_strided(add(a, Scalar(5), 2)) == V{11, 12, 13});
  CHECK(read_strided(sub(fa, Scalar(1.0), 4)) == V{-3, -2, -1});
  // A floating alpha needs a floating result.
  CHECK_THROWS_MATCHES(add(a, b, 0.5), TypeError, MessageContains({"alpha"}));
  CHECK_THROWS_AS(sub(a, b, 1.5), TypeError);
  Tensor ai = a.clone();
  CHECK_THROWS_AS(ai.add_(b, 0.5), TypeError);
  CHECK(read_strided(ai) == V{1, 2, 3});
  // In-place with alpha.
  fa.add_(fb, 2);
  CHECK(read_strided(fa) == V{21, 42, 63});
  fa.sub_(fb, 2);
  CHECK(read_strided(fa) == V{1, 2, 3});
}

TEST_CASE("binary: Scalar operands", "[binary]") {
  Tensor i32 = make_tensor({1, -2, 3}, {3}, DType::kI32);
  Tensor r = add(i32, Scalar(2.5));
  CHECK(r.dtype() == DType::kF32);
  CHECK(read_strided(r) == V{3.5, 0.5, 5.5});
  CHECK(add(i32, Scalar(2)).dtype() == DType::kI32);
  CHECK(read_strided(mul(i32, Scalar(-3))) == V{-3, 6, -9});
  Tensor d = div(i32, Scalar(2));
  CHECK(d.dtype() == DType::kF32);
  CHECK(read_strided(d) == V{0.5, -1, 1.5});
  CHECK(read_strided(sub(i32, Scalar(1))) == V{0, -3, 2});
  // uint8 stays uint8 and wraps.
  Tensor u8 = make_tensor({2, 5}, {2}, DType::kU8);
  Tensor m = mul(u8, Scalar(300));
  CHECK(m.dtype() == DType::kU8);
  CHECK(read_strided(m) == V{88, 220});
  CHECK(read_strided(sub(u8, Scalar(7))) == V{251, 254});
  // bool tensors.
  Tensor bt = make_tensor({1, 0}, {2}, DType::kBool);
  CHECK(add(bt, Scalar(true)).dtype() == DType::kBool);
  CHECK(read_strided(add(bt, Scalar(true))) == V{1, 1});
  CHECK(read_strided(mul(bt, Scalar(true))) == V{1, 0});
  Tensor bi = add(bt, Scalar(3));
  CHECK(bi.dtype() == DType::kI64);
  CHECK(read_strided(bi) == V{4, 3});
  CHECK(read_strided(mul(bt, Scalar(2.5))) == V{2.5, 0});
  CHECK_THROWS_AS(sub(bt, Scalar(true)), TypeError);
  CHECK_THROWS_AS(sub(bt, Scalar(1)), TypeError);
  CHECK_THROWS_AS(sub(i32, Scalar(true)), TypeError);
  CHECK_THROWS_AS(sub(bt, Scalar(1.5)), TypeError);
  // Reduced-precision floats keep their dtype.
  Tensor h = make_tensor({1, 2}, {2}, DType::kF16);
  CHECK(add(h, Scalar(0.1)).dtype() == DType::kF16);
  CHECK(read_strided(add(h, Scalar(0.1))) ==
        V{cast_value(1.1, DType::kF16), cast_value(2.1, DType::kF16)});
  Tensor bf = make_tensor({1, 2}, {2}, DType::kBF16);
  CHECK(mul(bf, Scalar(3)).dtype() == DType::kBF16);
  CHECK(read_strided(div(bf, Scalar(4))) == V{0.25, 0.5});
  // The operators.
  Tensor f = make_tensor({1, 2}, {2});
  CHECK(read_strided(f + Scalar(1)) == V{2, 3});
  CHECK(read_strided(f - Scalar(1)) == V{0, 1});
  CHECK(read_strided(f * Scalar(3)) == V{3, 6});
  CHECK(read_strided(f / Scalar(2)) == V{0.5, 1});
  CHECK(read_strided(f + f) == V{2, 4});
  CHECK(read_strided(f - f) == V{0, 0});
  CHECK(read_strided(f * f) == V{1, 4});
  CHECK(read_strided(f / f) == V{1, 1});
}

TEST_CASE("binary: 0-d tensors take part by category", "[binary]") {
  Tensor i8 = make_tensor({100, -100, 5}, {3}, DType::kI8);
  Tensor z64 = make_tensor({100}, {}, DType::kI64);
  Tensor r = add(i8, z64);
  CHECK(r.dtype() == DType::kI8);
  CHECK(read_strided(r) == V{-56, 0, 105});
  Tensor h = make_tensor({1, 2}, {2}, DType::kF16);
  Tensor zf = make_tensor({1.0 / 3.0}, {}, DType::kF64);
  Tensor hr = mul(h, zf);
  CHECK(hr.dtype() == DType::kF16);
  CHECK(close_report(read_strided(hr),
                     V{cast_value(1.0 / 3.0, DType::kF16), cast_value(2.0 / 3.0, DType::kF16)},
                     1e-3, 0) == "");
  Tensor i32 = make_tensor({1, 2}, {2}, DType::kI32);
  Tensor fr = add(i32, zf);
  CHECK(fr.dtype() == DType::kF64);
  CHECK(read_strided(fr) == V{1 + 1.0 / 3.0, 2 + 1.0 / 3.0});
  Tensor zz = add(make_tensor({3}, {}, DType::kI8), make_tensor({4}, {}, DType::kI64));
  CHECK(zz.dtype() == DType::kI64);
  CHECK(zz.dim() == 0);
  CHECK(zz.item<int64_t>() == 7);
}

TEST_CASE("binary: integer wraparound and true division", "[binary]") {
  Tensor a = make_tensor({100, -100, 127}, {3}, DType::kI8);
  CHECK(read_strided(add(a, a)) == V{-56, 56, -2});
  CHECK(read_strided(mul(a, a)) == V{16, 16, 1});
  Tensor u = make_tensor({5}, {1}, DType::kU8);
  CHECK(read_strided(sub(u, make_tensor({7}, {1}, DType::kU8))) == V{254});
  Tensor i = make_tensor({2147483647}, {1}, DType::kI32);
  CHECK(read_strided(add(i, make_tensor({1}, {1}, DType::kI32))) == V{-2147483648.0});
  Tensor n = make_tensor({-7, 7, 1, 0, -1}, {5}, DType::kI64);
  Tensor dd = make_tensor({2, 2, 0, 0, 0}, {5}, DType::kI64);
  Tensor q = div(n, dd);
  CHECK(q.dtype() == DType::kF32);
  V qv = read_strided(q);
  CHECK(qv[0] == -3.5);
  CHECK(qv[1] == 3.5);
  CHECK(qv[2] == INFINITY);
  CHECK(std::isnan(qv[3]));
  CHECK(qv[4] == -INFINITY);
  Tensor bq = div(make_tensor({1, 0}, {2}, DType::kBool), make_tensor({1, 1}, {2}, DType::kBool));
  CHECK(bq.dtype() == DType::kF32);
  CHECK(read_strided(bq) == V{1, 0});
  // int64 arithmetic is exact beyond 2^53.
  Tensor big = empty({1}, DType::kI64);
  big.data<int64_t>()[0] = (int64_t{1} << 60) + 1;
  Tensor big2 = add(big, big);
  CHECK(big2.to_vector<int64_t>()[0] == (int64_t{1} << 61) + 2);
  CHECK(mul(big, make_tensor({1}, {1}, DType::kI64)).to_vector<int64_t>()[0] ==
        (int64_t{1} << 60) + 1);
}

TEST_CASE("binary: in-place variants", "[binary]") {
  Tensor a = make_tensor(iota(6), {2, 3});
  Tensor row = make_tensor({10, 20, 30}, {3});
  Tensor& r = a.add_(row);
  CHECK(&r == &a);
  CHECK(read_strided(a) == V{10, 21, 32, 13, 24, 35});
  a.sub_(row);
  CHECK(read_strided(a) == iota(6));
  a.mul_(make_tensor({2}, {}));
  CHECK(read_strided(a) == V{0, 2, 4, 6, 8, 10});
  a.div_(make_tensor({2, 4}, {2, 1}));
  CHECK(read_strided(a) == V{0, 1, 2, 1.5, 2, 2.5});
  // Aliasing: a op= a.
  Tensor s = make_tensor({1, 2, 3}, {3});
  s.add_(s);
  CHECK(read_strided(s) == V{2, 4, 6});
  s.mul_(s);
  CHECK(read_strided(s) == V{4, 16, 36});
  // On a view: the base changes.
  Tensor base = make_tensor(iota(12), {3, 4});
  base.t().slice(0, 1, 4, 2).add_(make_tensor({100}, {}));  // columns 1 and 3
  CHECK(read_strided(base) == V{0, 101, 2, 103, 4, 105, 6, 107, 8, 109, 10, 111});
  // Castable results: float into int is not, the rest are.
  Tensor f32 = make_tensor({1, 2}, {2});
  f32.add_(make_tensor({0.5, 0.25}, {2}, DType::kF64));
  CHECK(read_strided(f32) == V{1.5, 2.25});
  Tensor h = make_tensor({1, 2}, {2}, DType::kF16);
  h.add_(make_tensor({1, 1}, {2}));
  CHECK(read_strided(h) == V{2, 3});
  Tensor i32 = make_tensor({3, 4}, {2}, DType::kI32);
  i32.add_(make_tensor({2, 3}, {2}, DType::kI64));
  CHECK(read_strided(i32) == V{5, 7});
  i32.mul_(make_tensor({1, 0}, {2}, DType::kBool));
  CHECK(read_strided(i32) == V{5, 0});
  i32.add_(make_tensor({2}, {}, DType::kI64));
  CHECK(read_strided(i32) == V{7, 2});
  Tensor f64 = make_tensor({1}, {1}, DType::kF64);
  f64.add_(make_tensor({1}, {1}, DType::kI8));
  CHECK(read_strided(f64) == V{2});

  Tensor ii = make_tensor({1, 2}, {2}, DType::kI32);
  CHECK_THROWS_MATCHES(ii.add_(make_tensor({1.5, 2}, {2})), TypeError,
                       MessageContains({"cast"}));
  CHECK_THROWS_AS(ii.div_(make_tensor({2, 2}, {2}, DType::kI32)), TypeError);
  CHECK_THROWS_AS(ii.mul_(make_tensor({2.0}, {})), TypeError);  // 0-d float
  Tensor bb = make_tensor({1, 0}, {2}, DType::kBool);
  CHECK_THROWS_AS(bb.add_(make_tensor({1, 1}, {2}, DType::kI64)), TypeError);
  CHECK_THROWS_AS(bb.sub_(make_tensor({1, 1}, {2}, DType::kBool)), TypeError);
  CHECK(read_strided(ii) == V{1, 2});
  CHECK(read_strided(bb) == V{1, 0});
  CHECK_THROWS_AS(ii.sub_(make_tensor({1, 1}, {2}, DType::kBool)), TypeError);
  // The output shape cannot grow.
  Tensor small = make_tensor({1, 2, 3}, {3});
  CHECK_THROWS_MATCHES(small.add_(make_tensor(iota(6), {2, 3})), ValueError,
                       MessageContains({"[3]", "[2, 3]"}));
  CHECK(read_strided(small) == V{1, 2, 3});
  // fill_ / zero_.
  Tensor fz = make_tensor({1, 2, 3}, {3}, DType::kI16);
  fz.fill_(2.9);
  CHECK(read_strided(fz) == V{2, 2, 2});
  fz.zero_();
  CHECK(read_strided(fz) == V{0, 0, 0});
}

TEST_CASE("binary: an in-place float number keeps float64 precision", "[binary]") {
  // A float number next to a float64 tensor must not pass through float32
  // (0.1f is 0.10000000149...), as the out-of-place forms never did.
  for (int op = 0; op < 4; ++op) {
    Tensor x = make_tensor({1.0, 2.0}, {2}, DType::kF64);
    Tensor expected = x.clone();
    switch (op) {
      case 0: add_(x, Scalar(0.1)); expected = add(expected, Scalar(0.1)); break;
      case 1: sub_(x, Scalar(0.1)); expected = sub(expected, Scalar(0.1)); break;
      case 2: mul_(x, Scalar(0.1)); expected = mul(expected, Scalar(0.1)); break;
      case 3: div_(x, Scalar(0.1)); expected = div(expected, Scalar(0.1)); break;
    }
    INFO("op " << op);
    CHECK(read_strided(x) == read_strided(expected));
  }
  Tensor x = make_tensor({1.0}, {1}, DType::kF64);
  add_(x, Scalar(0.1));
  CHECK(x.item<double>() == 1.0 + 0.1);
  // float32 tensors still take the number as float32, as PyTorch does.
  Tensor y = make_tensor({1.0}, {1});
  add_(y, Scalar(0.1));
  CHECK(y.item<float>() == 1.0f + 0.1f);
}

TEST_CASE("binary: a number a 16-bit float cannot hold joins in float32", "[binary]") {
  // PyTorch computes float16/bfloat16 ops in float with the number as a
  // float, rounding once. Rounded to float16 first, 1e5 was inf: h / 1e5
  // gave 0 and (h * 1e5) / 1e5 NaN.
  const float expected = static_cast<float>(Half(3.0f / 1e5f));
  Tensor h = make_tensor({3, 3}, {2}, DType::kF16);
  Tensor q = div(h, Scalar(1e5));
  CHECK(q.dtype() == DType::kF16);
  CHECK(read_strided(q) == V{expected, expected});
  CHECK(read_strided(mul(h, Scalar(1e-5))) ==
        V{static_cast<float>(Half(3.0f * 1e-5f)), static_cast<float>(Half(3.0f * 1e-5f))});
  // A number the result still cannot hold gives what float gives: inf.
  CHECK(read_strided(add(h, Scalar(70000))) == V{INFINITY, INFINITY});
  CHECK(read_strided(add(h, Scalar(1), Scalar(1e5))) == V{INFINITY, INFINITY});
  // In place too.
  Tensor g = make_tensor({3, 3}, {2}, DType::kF16);
  div_(g, Scalar(1e5));
  CHECK(read_strided(g) == V{expected, expected});
  Tensor m = make_tensor({2, 2}, {2}, DType::kF16);
  mul_(m, Scalar(1e-7));  // 2e-7 is a float16 subnormal; 1e-7 alone rounds to 1.19e-7
  CHECK(read_strided(m)[0] == static_cast<float>(Half(2.0f * 1e-7f)));
  // A number wrapped as a 0-d float32/float64 tensor (as the bridge and
  // the bindings pass one) likewise, in every form.
  for (DType wide : {DType::kF32, DType::kF64}) {
    Tensor n = full({}, 1e5, TensorOptions(wide));
    CHECK(read_strided(div(h, n)) == V{expected, expected});
    Tensor inplace = make_tensor({3, 3}, {2}, DType::kF16);
    inplace.div_(n);
    CHECK(read_strided(inplace) == V{expected, expected});
    Tensor out = empty({2}, TensorOptions(DType::kF16));
    div_out(out, h, n);
    CHECK(read_strided(out) == V{expected, expected});
  }
  // bfloat16 keeps float's range but 8 bits: 1.01 rounds to 1.0078 in it.
  Tensor b = make_tensor({1.5}, {1}, DType::kBF16);
  CHECK(read_strided(mul(b, Scalar(1.01))) ==
        V{static_cast<float>(BFloat16(1.5f * 1.01f))});
  add_(b, Scalar(0.001), Scalar(3));
  CHECK(read_strided(b) == V{static_cast<float>(BFloat16(1.5f + 3 * 0.001f))});
}

TEST_CASE("binary: shape errors name the op and both shapes", "[binary]") {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4});
  CHECK_THROWS_MATCHES(add(a, b), ValueError, MessageContains({"add", "[2, 3]", "[4]"}));
  CHECK_THROWS_MATCHES(sub(a, b), ValueError, MessageContains({"sub", "[2, 3]", "[4]"}));
  CHECK_THROWS_MATCHES(mul(a, b), ValueError, MessageContains({"mul", "[2, 3]", "[4]"}));
  CHECK_THROWS_MATCHES(div(b, a), ValueError, MessageContains({"div", "[4]", "[2, 3]"}));
  CHECK_THROWS_AS(add(zeros({2, 3}), zeros({3, 2})), ValueError);
  CHECK_THROWS_AS(add(zeros({0}), zeros({2})), ValueError);
}

TEST_CASE("binary: results are new tensors; large inputs", "[binary]") {
  Tensor a = make_tensor(lcg_values(1 << 20, 21, -100, 100), {1 << 20});
  Tensor b = make_tensor(lcg_values(1 << 20, 22, 0.5, 2), {1 << 20});
  Tensor c = add(a, b);
  CHECK(c.storage().get() != a.storage().get());
  CHECK(c.storage().get() != b.storage().get());
  CHECK(c.is_contiguous());
  check_op(Op::kAdd, a, b);
  check_op(Op::kSub, a, b);
  check_op(Op::kMul, a, b);
  check_op(Op::kDiv, a, b);
  Tensor ai = a.to(DType::kI32);
  check_op(Op::kMul, ai, ai);
  check_op(Op::kAdd, a.to(DType::kBF16), b.to(DType::kF16));
}

TEST_CASE("binary: large broadcast outputs", "[binary]") {
  Tensor col = make_tensor(lcg_values(1024, 31, -1, 1), {1024, 1});
  Tensor row = make_tensor(lcg_values(1024, 32, -1, 1), {1, 1024});
  check_op(Op::kAdd, col, row);
  check_op(Op::kMul, row, col);
  Tensor row64 = make_tensor(lcg_values(1024, 33, 1, 2), {1024}, DType::kF64);
  check_op(Op::kDiv, col.expand({1024, 1024}).t(), row64);
}

TEST_CASE("binary: in-place writes that overlap are rejected as in PyTorch",
          "[binary][overlap]") {
  // More than one element of the output is one memory location.
  Tensor e = zeros({3, 1}).expand({3, 4});
  CHECK_THROWS_AS(e.add_(ones({3, 4})), ValueError);
  CHECK_THROWS_AS(e.mul_(ones({3, 4})), ValueError);
  // Output and input partially overlap.
  Tensor a = make_tensor(iota(5), {5});
  CHECK_THROWS_AS(a.slice(0, 1, 5).add_(a.slice(0, 0, 4)), ValueError);
  Tensor m = make_tensor(iota(4), {2, 2});
  CHECK_THROWS_AS(m.add_(m.t()), ValueError);
  // Full overlap (the same elements in the same order) is fine.
  Tensor f = make_tensor(iota(4), {2, 2});
  f.add_(f.view({2, 2}));
  CHECK(read_strided(f) == V{0, 2, 4, 6});
}

TEST_CASE("binary: many dims, broadcast and permuted", "[binary]") {
  Shape sa = {2, 1, 3, 1, 2, 3}, sb = {3, 1, 4, 2, 1};
  Tensor a = make_tensor(sample(DType::kF32, naive_numel(sa), 41), sa);
  Tensor b = make_tensor(sample(DType::kF64, naive_numel(sb), 42, true), sb, DType::kF64);
  check_op(Op::kAdd, a, b);
  check_op(Op::kDiv, b, a.permute({5, 4, 3, 2, 1, 0}).permute({5, 4, 3, 2, 1, 0}));
  Tensor p = make_tensor(sample(DType::kI32, 2 * 3 * 4 * 5 * 2, 43), {2, 3, 4, 5, 2}, DType::kI32)
                 .permute({4, 2, 0, 3, 1});  // [2, 4, 2, 5, 3]
  Tensor q = make_tensor(sample(DType::kI16, 5 * 3, 44), {5, 3}, DType::kI16);
  check_op(Op::kMul, p, q);
  check_op(Op::kSub, q, p);
}

TEST_CASE("binary: an empty out takes the result's shape; a non-empty one must fit",
          "[binary]") {
  const Tensor a = arange(6, TensorOptions(DType::kF32)).view({2, 3});
  const Tensor b = full({3}, 10.0);
  Tensor out = empty({0});
  Tensor alias = out;  // another handle to the same tensor sees the resize
  add_out(out, a, b);
  CHECK(out.sizes() == Shape{2, 3});
  CHECK(alias.sizes() == Shape{2, 3});
  CHECK(out.is_contiguous());
  CHECK(out.to_vector<double>() == V{10, 11, 12, 13, 14, 15});

  Tensor wrong = empty({4});
  CHECK_THROWS_WITH(add_out(wrong, a, b),
                    Catch::Contains("add") && Catch::Contains("[4]") && Catch::Contains("[2, 3]"));
}
