// mm, bmm and matmul against a naive triple loop in double: every
// supported dtype, 1-D and N-D operands with batch broadcasting, transposed
// and strided operands, zero-size dims, and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {
using V = std::vector<double>;

// Unit roundoff of the accumulation and output tolerances per dtype, in
// the spirit of torch.testing's defaults.
struct Tol {
  double rtol, atol, accum_eps;
};
Tol tol_for(DType t) {
  switch (t) {
    case DType::kF16: return {1e-3, 1e-5, 6e-8};     // accumulates in f32
    case DType::kBF16: return {1.6e-2, 1e-5, 6e-8};  // accumulates in f32
    case DType::kF32: return {1.3e-6, 1e-5, 6e-8};
    case DType::kF64: return {1e-7, 1e-7, 1.2e-16};
    default: return {0, 0, 0};
  }
}

// Naive batched matmul of row-major a [B, M, K] and b [B, K, N] (values as
// stored), giving the product and sum |a||b| for tolerances.
void naive_bmm(const V& a, const V& b, int64_t B, int64_t M, int64_t K, int64_t N,
               V* out, V* mag) {
  out->assign(B * M * N, 0.0);
  mag->assign(B * M * N, 0.0);
  for (int64_t p = 0; p < B; ++p)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0, m = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = a[(p * M + i) * K + k], y = b[(p * K + k) * N + j];
          s += x * y;
          m += std::fabs(x * y);
        }
        (*out)[(p * M + i) * N + j] = s;
        (*mag)[(p * M + i) * N + j] = m;
      }
}

// Compares a result of dtype t with the double reference.
void check_product(const Tensor& res, const V& ref, const V& mag, int64_t K, DType t) {
  V expected, tol;
  Tol tl = tol_for(t);
  for (size_t i = 0; i < ref.size(); ++i) {
    expected.push_back(cast_value(ref[i], t));
    tol.push_back(tl.rtol * std::fabs(ref[i]) + tl.atol + K * tl.accum_eps * mag[i] +
                  tl.rtol * 1e-3 * mag[i]);
  }
  CHECK(close_report_tol(read_strided(res), expected, tol) == "");
}

V values_for(DType t, int64_t n, uint64_t seed) {
  V v = is_floating(t) ? lcg_values(n, seed, -1, 1) : lcg_ints(n, seed, -20, 20);
  for (double& x : v) x = cast_value(x, t);
  return v;
}

// mm of a [M, K] and b [K, N] (any views) vs the reference.
void check_mm(const Tensor& a, const Tensor& b) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  V ref, mag;
  naive_bmm(read_strided(a), read_strided(b), 1, M, K, N, &ref, &mag);
  INFO("mm " << describe(a) << " strides " << shape_to_string(a.strides()) << " @ "
             << describe(b) << " strides " << shape_to_string(b.strides()));
  Tensor r = mm(a, b);
  CHECK(r.dtype() == a.dtype());
  CHECK(r.sizes() == Shape{M, N});
  check_product(r, ref, mag, K, a.dtype());
  Tensor r2 = matmul(a, b);
  CHECK(r2.sizes() == Shape{M, N});
  check_product(r2, ref, mag, K, a.dtype());
}
}  // namespace

TEST_CASE("matmul: mm for each dtype", "[matmul]") {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI64}) {
    INFO(dname(t));
    Tensor a = make_tensor(values_for(t, 3 * 4, 1), {3, 4}, t);
    Tensor b = make_tensor(values_for(t, 4 * 5, 2), {4, 5}, t);
    check_mm(a, b);
    // Sizes that are not multiples of any block.
    Tensor c = make_tensor(values_for(t, 67 * 129, 3), {67, 129}, t);
    Tensor d = make_tensor(values_for(t, 129 * 33, 4), {129, 33}, t);
    check_mm(c, d);
    // Vector-like shapes.
    check_mm(make_tensor(values_for(t, 7, 5), {1, 7}, t), make_tensor(values_for(t, 21, 6), {7, 3}, t));
    check_mm(make_tensor(values_for(t, 7, 5), {7, 1}, t), make_tensor(values_for(t, 3, 6), {1, 3}, t));
  }
  // The other integer dtypes, with wraparound as in PyTorch.
  for (DType t : {DType::kI32, DType::kI16, DType::kU8, DType::kI8}) {
    INFO(dname(t));
    bool u = t == DType::kU8;
    Tensor a = make_tensor(lcg_ints(12, 30, u ? 0 : -5, 5), {3, 4}, t);
    Tensor b = make_tensor(lcg_ints(20, 31, u ? 0 : -5, 5), {4, 5}, t);
    V ref, mag;
    naive_bmm(read_strided(a), read_strided(b), 1, 3, 4, 5, &ref, &mag);
    Tensor r = mm(a, b);
    CHECK(r.dtype() == t);
    CHECK(read_strided(r) == [&] { V c; for (double x : ref) c.push_back(cast_value(x, DType::kI64, t)); return c; }());
  }
  Tensor w8 = full({2, 2}, 100, DType::kI8);
  CHECK(read_strided(mm(w8, ones({2, 2}, DType::kI8))) == V(4, -56));
  CHECK_THROWS_AS(mm(ones({2, 2}, DType::kBool), ones({2, 2}, DType::kBool)), TypeError);
  // Spelled out.
  Tensor a = make_tensor({1, 2, 3, 4}, {2, 2});
  Tensor b = make_tensor({5, 6, 7, 8}, {2, 2});
  CHECK(read_strided(mm(a, b)) == V{19, 22, 43, 50});
  CHECK(mm(a, b).is_contiguous());
}

TEST_CASE("matmul: larger K with K-scaled tolerances", "[matmul]") {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    INFO(dname(t));
    Tensor a = make_tensor(values_for(t, 64 * 1000, 7), {64, 1000}, t);
    Tensor b = make_tensor(values_for(t, 1000 * 48, 8), {1000, 48}, t);
    check_mm(a, b);
  }
  // A bigger f32 product (exercises threading / packing).
  Tensor a = make_tensor(values_for(DType::kF32, 256 * 300, 9), {256, 300});
  Tensor b = make_tensor(values_for(DType::kF32, 300 * 257, 10), {300, 257});
  check_mm(a, b);
}

TEST_CASE("matmul: a weight gradient's shape, a transposed and wide", "[matmul]") {
  // [1024, 2048]^T-stored a times [2048, 128]: m >= 2n with 2^28
  // multiply-adds, which the CPU's oneDNN path runs as the transposed
  // problem (gemm_dnnl.cc); the reference is the triple loop.
  Tensor a = make_tensor(values_for(DType::kF32, 2048 * 1024, 17), {2048, 1024}).t();
  Tensor b = make_tensor(values_for(DType::kF32, 2048 * 128, 18), {2048, 128});
  check_mm(a, b);
  // Into a non-contiguous output row stride (out= a column slice).
  Tensor wide = zeros({1024, 200});
  Tensor out = wide.slice(1, 0, 128);
  mm_out(out, a, b);
  CHECK(read_strided(out) == read_strided(mm(a, b)));
}

TEST_CASE("matmul: a row-major b of a row stride of 1024", "[matmul]") {
  // [128, 1024] x [1024, 1024]: the layout that oneDNN's AVX2 sgemm runs
  // slowly, which the CPU device calls as b's first 4 columns and the rest
  // (gemm_dnnl.cc, on AVX2 machines); also b as a column slice of a wider
  // matrix (the same row stride, b moved by 4 floats) and an out= column
  // slice. The reference is the triple loop.
  Tensor a = make_tensor(values_for(DType::kF32, 128 * 1024, 21), {128, 1024});
  Tensor b = make_tensor(values_for(DType::kF32, 1024 * 1024, 22), {1024, 1024});
  check_mm(a, b);
  Tensor wide = make_tensor(values_for(DType::kF32, 1024 * 1024, 23), {1024, 1024});
  check_mm(a.narrow(0, 0, 64), wide.slice(1, 4, 1024));
  Tensor out_wide = zeros({128, 1040});
  Tensor out = out_wide.slice(1, 0, 1024);
  mm_out(out, a, b);
  CHECK(read_strided(out) == read_strided(mm(a, b)));
}

TEST_CASE("matmul: many rows times a b of a row stride of 512", "[matmul]") {
  // [400, 300] x [300, 512] and a batch of two with a broadcast b: products
  // of >= 384 rows that the CPU device runs on a row-padded copy of such a
  // b (gemm_dnnl.cc, on AVX2 machines), b also as a column slice (n = 500,
  // the same row stride) and into an out= column slice. The reference is
  // the triple loop.
  Tensor a = make_tensor(values_for(DType::kF32, 400 * 300, 31), {400, 300});
  Tensor b = make_tensor(values_for(DType::kF32, 300 * 512, 32), {300, 512});
  check_mm(a, b);
  check_mm(a, b.slice(1, 12, 512));
  Tensor out_wide = zeros({400, 520});
  Tensor out = out_wide.slice(1, 0, 512);
  mm_out(out, a, b);
  CHECK(read_strided(out) == read_strided(mm(a, b)));
  Tensor a2 = make_tensor(values_for(DType::kF32, 2 * 400 * 300, 33), {2, 400, 300});
  const Tensor batched = matmul(a2, b);
  CHECK(read_strided(batched.select(0, 1)) == read_strided(mm(a2.select(0, 1), b)));
}

TEST_CASE("matmul: transposed and strided operands", "[matmul]") {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kI64}) {
    INFO(dname(t));
    Tensor at = make_tensor(values_for(t, 6 * 5, 11), {6, 5}, t).t();   // [5, 6]
    Tensor bt = make_tensor(values_for(t, 4 * 6, 12), {4, 6}, t).t();   // [6, 4]
    Tensor a = make_tensor(values_for(t, 5 * 6, 13), {5, 6}, t);
    Tensor b = make_tensor(values_for(t, 6 * 4, 14), {6, 4}, t);
    check_mm(at, b);
    check_mm(a, bt);
    check_mm(at, bt);
    // Step slices in both dims.
    Tensor big = make_tensor(values_for(t, 12 * 14, 15), {12, 14}, t);
    Tensor as = big.slice(0, 1, 12, 2).slice(1, 0, 14, 2);  // [6, 7]
    Tensor bs = big.slice(0, 0, 7).slice(1, 3, 14, 3);      // [7, 4]
    check_mm(as, bs);
    check_mm(as, bs.t().t());
    // An expanded (stride-0) operand.
    Tensor col = make_tensor(values_for(t, 6, 16), {6, 1}, t).expand({6, 5});
    check_mm(a, col);
  }
}

TEST_CASE("matmul: 1-D operands", "[matmul]") {
  Tensor v = make_tensor({1, 2, 3, 4}, {4});
  Tensor w = make_tensor({5, 6, 7, 8}, {4});
  Tensor dot = matmul(v, w);
  CHECK(dot.dim() == 0);
  CHECK(dot.item<double>() == 70.0);
  Tensor m = make_tensor(iota(20), {4, 5});
  Tensor vm = matmul(v, m);  // [4] @ [4, 5] -> [5]
  CHECK(vm.sizes() == Shape{5});
  V ref, mag;
  naive_bmm({1, 2, 3, 4}, iota(20), 1, 1, 4, 5, &ref, &mag);
  CHECK(read_strided(vm) == ref);
  Tensor m2 = make_tensor(iota(12), {3, 4});
  Tensor mv = matmul(m2, v);  // [3, 4] @ [4] -> [3]
  CHECK(mv.sizes() == Shape{3});
  naive_bmm(iota(12), {1, 2, 3, 4}, 1, 3, 4, 1, &ref, &mag);
  CHECK(read_strided(mv) == ref);
  // Batched with a 1-D operand on either side.
  Tensor b3 = make_tensor(iota(24), {2, 3, 4});
  Tensor bv = matmul(b3, v);  // [2, 3]
  CHECK(bv.sizes() == Shape{2, 3});
  naive_bmm(iota(24), {1, 2, 3, 4, 1, 2, 3, 4}, 2, 3, 4, 1, &ref, &mag);
  CHECK(read_strided(bv) == ref);
  Tensor v3 = make_tensor({1, 2, 3}, {3});
  Tensor vb = matmul(v3, b3);  // [3] @ [2, 3, 4] -> [2, 4]
  CHECK(vb.sizes() == Shape{2, 4});
  naive_bmm({1, 2, 3, 1, 2, 3}, iota(24), 2, 1, 3, 4, &ref, &mag);
  CHECK(read_strided(vb) == ref);
  // Strided 1-D operands, integer dtype.
  Tensor iv = make_tensor(iota(10), {10}, DType::kI64).slice(0, 0, 10, 2);  // 0 2 4 6 8
  Tensor iw = make_tensor(iota(5, 1), {5}, DType::kI64);                     // 1..5
  Tensor idot = matmul(iv, iw);
  CHECK(idot.dtype() == DType::kI64);
  CHECK(idot.item<int64_t>() == 0 * 1 + 2 * 2 + 4 * 3 + 6 * 4 + 8 * 5);
}

TEST_CASE("matmul: batched with broadcasting, and bmm", "[matmul]") {
  for (DType t : {DType::kF32, DType::kF64, DType::kBF16}) {
    INFO(dname(t));
    // [2, 1, 3, 4] @ [5, 4, 2] -> [2, 5, 3, 2]
    V av = values_for(t, 2 * 3 * 4, 21), bv = values_for(t, 5 * 4 * 2, 22);
    Tensor a = make_tensor(av, {2, 1, 3, 4}, t);
    Tensor b = make_tensor(bv, {5, 4, 2}, t);
    Tensor r = matmul(a, b);
    CHECK(r.dtype() == t);
    REQUIRE(r.sizes() == Shape{2, 5, 3, 2});
    // Reference: broadcast by hand to 10 batches.
    V abig, bbig;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 5; ++j) {
        abig.insert(abig.end(), av.begin() + i * 12, av.begin() + (i + 1) * 12);
        bbig.insert(bbig.end(), bv.begin() + j * 8, bv.begin() + (j + 1) * 8);
      }
    V ref, mag;
    naive_bmm(abig, bbig, 10, 3, 4, 2, &ref, &mag);
    check_product(r, ref, mag, 4, t);

    // bmm, also with transposed batch members.
    V xv = values_for(t, 3 * 4 * 5, 23), yv = values_for(t, 3 * 5 * 6, 24);
    Tensor x = make_tensor(xv, {3, 4, 5}, t);
    Tensor y = make_tensor(yv, {3, 5, 6}, t);
    naive_bmm(xv, yv, 3, 4, 5, 6, &ref, &mag);
    Tensor bm = bmm(x, y);
    CHECK(bm.sizes() == Shape{3, 4, 6});
    check_product(bm, ref, mag, 5, t);
    check_product(matmul(x, y), ref, mag, 5, t);
    Tensor xt = make_tensor(read_strided(x.transpose(1, 2)), {3, 5, 4}, t).transpose(1, 2);
    check_product(bmm(xt, y), ref, mag, 5, t);
    Tensor yp = make_tensor(read_strided(y.permute({1, 0, 2})), {5, 3, 6}, t).permute({1, 0, 2});
    check_product(bmm(x, yp), ref, mag, 5, t);
    // A batch-broadcast (stride 0) operand.
    Tensor y1 = make_tensor(values_for(t, 5 * 6, 25), {1, 5, 6}, t);
    V y1big;
    for (int i = 0; i < 3; ++i) {
      V y1v = read_strided(y1);
      y1big.insert(y1big.end(), y1v.begin(), y1v.end());
    }
    naive_bmm(xv, y1big, 3, 4, 5, 6, &ref, &mag);
    check_product(matmul(x, y1), ref, mag, 5, t);
    check_product(bmm(x, y1.expand({3, 5, 6})), ref, mag, 5, t);
  }
}

TEST_CASE("matmul: zero-size dims", "[matmul]") {
  Tensor r = mm(zeros({3, 0}), zeros({0, 4}));
  CHECK(r.sizes() == Shape{3, 4});
  CHECK(read_strided(r) == V(12, 0.0));
  // Garbage in a K=0 output must not leak: fill an input-sized pool first.
  Tensor e1 = full({3, 0}, 5.0), e2 = full({0, 4}, 5.0);
  CHECK(read_strided(matmul(e1, e2)) == V(12, 0.0));
  CHECK(read_strided(mm(zeros({3, 0}, DType::kI64), zeros({0, 2}, DType::kI64))) == V(6, 0.0));
  CHECK(mm(zeros({0, 4}), zeros({4, 5})).sizes() == Shape{0, 5});
  CHECK(mm(zeros({2, 4}), zeros({4, 0})).sizes() == Shape{2, 0});
  CHECK(bmm(zeros({0, 2, 3}), zeros({0, 3, 4})).sizes() == Shape{0, 2, 4});
  CHECK(read_strided(bmm(zeros({2, 2, 0}), zeros({2, 0, 3}))) == V(12, 0.0));
  Tensor d0 = matmul(zeros({0}), zeros({0}));
  CHECK(d0.dim() == 0);
  CHECK(d0.item<double>() == 0.0);
}

TEST_CASE("matmul: errors", "[matmul]") {
  CHECK_THROWS_MATCHES(mm(zeros({3, 4}), zeros({5, 6})), ValueError,
                       MessageContains({"mm", "[3, 4]", "[5, 6]"}));
  CHECK_THROWS_MATCHES(matmul(zeros({3, 4}), zeros({5, 6})), ValueError,
                       MessageContains({"matmul", "[3, 4]", "[5, 6]"}));
  CHECK_THROWS_MATCHES(matmul(zeros({2, 3, 4}), zeros({2, 5, 6})), ValueError,
                       MessageContains({"matmul"}));
  CHECK_THROWS_AS(matmul(zeros({4}), zeros({5})), ValueError);
  CHECK_THROWS_AS(matmul(zeros({3, 4}), zeros({5})), ValueError);
  CHECK_THROWS_AS(matmul(zeros({2, 3, 4}), zeros({3, 4, 2})), ValueError);  // batch 2 vs 3
  CHECK_THROWS_MATCHES(bmm(zeros({2, 3, 4}), zeros({3, 4, 5})), ValueError,
                       MessageContains({"bmm"}));
  CHECK_THROWS_AS(bmm(zeros({2, 3, 4}), zeros({2, 5, 5})), ValueError);
  CHECK_THROWS_AS(bmm(zeros({3, 4}), zeros({4, 5})), ValueError);
  CHECK_THROWS_AS(mm(zeros({4}), zeros({4, 5})), ValueError);
  CHECK_THROWS_AS(mm(zeros({2, 3, 4}), zeros({4, 5})), ValueError);
  // Dtype mismatch.
  CHECK_THROWS_MATCHES(mm(zeros({2, 2}), zeros({2, 2}, DType::kF64)), TypeError,
                       MessageContains({"float32", "float64"}));
  CHECK_THROWS_AS(matmul(zeros({2, 2}, DType::kF16), zeros({2, 2})), TypeError);
  CHECK_THROWS_AS(bmm(zeros({1, 2, 2}, DType::kI64), zeros({1, 2, 2})), TypeError);
  // 0-d operands.
  CHECK_THROWS_MATCHES(matmul(zeros({}), zeros({2})), ValueError,
                       MessageContains({"matmul"}));
  CHECK_THROWS_AS(matmul(zeros({2, 2}), zeros({})), ValueError);
  CHECK_THROWS_AS(mm(zeros({}), zeros({})), ValueError);
}

TEST_CASE("matmul: 16-bit inputs accumulate in float32", "[matmul]") {
  // With f16 accumulation 2048 + 1 == 2048; with bf16, 256 + 1 == 256.
  Tensor h = mm(ones({1, 4096}, DType::kF16), ones({4096, 1}, DType::kF16));
  CHECK(h.item<double>() == 4096.0);
  Tensor b = mm(ones({1, 1000}, DType::kBF16), ones({1000, 2}, DType::kBF16));
  CHECK(read_strided(b) == V(2, 1000.0));
  Tensor hb = bmm(ones({2, 3, 3000}, DType::kF16), ones({2, 3000, 1}, DType::kF16));
  CHECK(read_strided(hb) == V(6, cast_value(3000.0, DType::kF16)));
}

// Elements of a 16-bit result that differ from beta * self + alpha * a b
// computed in double and rounded once to the dtype: a float product and
// sum rounded once leaves only values within float's error of a 16-bit
// tie; a product rounded to 16 bits before the sum missed about a quarter.
int64_t not_rounded_once(const Tensor& got, const V& self, const V& a, const V& b, int64_t B,
                         int64_t M, int64_t K, int64_t N, double beta, double alpha) {
  V prod, mag;
  naive_bmm(a, b, B, M, K, N, &prod, &mag);
  const V g = read_strided(got);
  int64_t off = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double want = cast_value(beta * self[i % self.size()] + alpha * prod[i], got.dtype());
    if (g[i] != want) ++off;
  }
  return off;
}

TEST_CASE("matmul: 16-bit addmm and baddbmm round once", "[matmul]") {
  // Muon's Newton-Schulz step, b * G + c * G G, in bfloat16 (and float16).
  const int64_t M = 32, K = 64, N = 48;
  const double beta = -4.775, alpha = 2.0315;
  for (DType t : {DType::kBF16, DType::kF16}) {
    INFO(dname(t));
    const V av = read_strided(make_tensor(lcg_values(M * K, 61, -1, 1), {M, K}, t));
    const V bv = read_strided(make_tensor(lcg_values(K * N, 62, -1, 1), {K, N}, t));
    const V sv = read_strided(make_tensor(lcg_values(M * N, 63, -1, 1), {M, N}, t));
    const Tensor a = make_tensor(av, {M, K}, t), b = make_tensor(bv, {K, N}, t);
    const Tensor self = make_tensor(sv, {M, N}, t);
    const int64_t budget = M * N / 100;
    CHECK(not_rounded_once(addmm(self, a, b, beta, alpha), sv, av, bv, 1, M, K, N, beta, alpha) <=
          budget);
    Tensor in_place = self.clone();
    addmm_(in_place, a, b, beta, alpha);
    CHECK(not_rounded_once(in_place, sv, av, bv, 1, M, K, N, beta, alpha) <= budget);
    Tensor out = empty({M, N}, t);
    addmm_out(out, self, a, b, beta, alpha);
    CHECK(not_rounded_once(out, sv, av, bv, 1, M, K, N, beta, alpha) <= budget);
    // A bias row broadcast over the rows, as linear's addmm.
    const V bias = read_strided(make_tensor(lcg_values(N, 64, -1, 1), {N}, t));
    CHECK(not_rounded_once(addmm(make_tensor(bias, {N}, t), a, b, 1, 1), bias, av, bv, 1, M, K,
                           N, 1, 1) <= budget);
    const Tensor a3 = a.view({2, M / 2, K}), s3 = self.view({2, M / 2, N});
    const Tensor b3 = make_tensor(bv, {1, K, N}, t).expand({2, K, N});
    V b2 = bv;
    b2.insert(b2.end(), bv.begin(), bv.end());
    CHECK(not_rounded_once(baddbmm(s3, a3, b3, beta, alpha), sv, av, b2, 2, M / 2, K, N, beta,
                           alpha) <= budget);
  }
}

TEST_CASE("matmul: many small matrices in a batch", "[matmul]") {
  V av = values_for(DType::kF32, 1000 * 2 * 3, 51), bv = values_for(DType::kF32, 1000 * 3 * 2, 52);
  Tensor a = make_tensor(av, {1000, 2, 3});
  Tensor b = make_tensor(bv, {1000, 3, 2});
  V ref, mag;
  naive_bmm(av, bv, 1000, 2, 3, 2, &ref, &mag);
  check_product(bmm(a, b), ref, mag, 3, DType::kF32);
  check_product(matmul(a, b), ref, mag, 3, DType::kF32);
  // Batch dims given as a permuted view.
  Tensor ap = make_tensor(read_strided(a.permute({1, 0, 2})), {2, 1000, 3}).permute({1, 0, 2});
  check_product(bmm(ap, b), ref, mag, 3, DType::kF32);
}

TEST_CASE("matmul: f32 products cut over more threads than cores", "[matmul]") {
  // The CPU device cuts an f32 product on its oneDNN path into row blocks,
  // column blocks or both, and spreads batch items, by the thread count
  // (devices/cpu/kernels/gemm_dnnl.cc). Arenas of 1, 3 and 6 threads run
  // each way of cutting on any machine, into blocks whose extents are not
  // multiples of the 16-row alignment.
  auto check_bmm = [](int64_t B, int64_t M, int64_t K, int64_t N, const Tensor& b_view) {
    V av = values_for(DType::kF32, B * M * K, 61);
    V ref, mag;
    naive_bmm(av, read_strided(b_view.expand({B, K, N})), B, M, K, N, &ref, &mag);
    INFO("bmm [" << B << ", " << M << ", " << K << "] @ " << describe(b_view));
    check_product(bmm(make_tensor(av, {B, M, K}), b_view.expand({B, K, N})), ref, mag, K,
                  DType::kF32);
  };
  for (int threads : {1, 3, 6}) {
    INFO(threads << " threads");
    oneapi::tbb::global_control allow(oneapi::tbb::global_control::max_allowed_parallelism,
                                      static_cast<size_t>(threads));
    oneapi::tbb::task_arena arena(threads);
    arena.execute([&] {
      // Both ways at 6 threads: 3 row blocks of 80, 80, 40 by 2 column blocks of 96, 94.
      check_mm(make_tensor(values_for(DType::kF32, 200 * 300, 62), {200, 300}),
               make_tensor(values_for(DType::kF32, 300 * 190, 63), {300, 190}));
      // The same with both operands transposed (sgemm's 'T' layouts).
      check_mm(make_tensor(values_for(DType::kF32, 300 * 200, 64), {300, 200}).t(),
               make_tensor(values_for(DType::kF32, 190 * 300, 65), {190, 300}).t());
      // Few rows: column blocks only. Few columns: row blocks only.
      check_mm(make_tensor(values_for(DType::kF32, 20 * 300, 66), {20, 300}),
               make_tensor(values_for(DType::kF32, 300 * 1000, 67), {300, 1000}));
      check_mm(make_tensor(values_for(DType::kF32, 1000 * 300, 68), {1000, 300}),
               make_tensor(values_for(DType::kF32, 300 * 20, 69), {300, 20}));
      // Batches below and above the thread count, one with a broadcast b.
      check_bmm(2, 200, 300, 190, make_tensor(values_for(DType::kF32, 2 * 300 * 190, 70),
                                              {2, 300, 190}));
      check_bmm(8, 70, 64, 60, make_tensor(values_for(DType::kF32, 64 * 60, 71), {1, 64, 60}));
    });
  }
}
