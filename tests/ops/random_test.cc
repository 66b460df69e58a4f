// Random numbers: the Philox4x32-10 known answers, rand/randn/uniform_/
// normal_ ranges and moments, reproducibility from seeds, the counter
// layout promised by philox.h, and layout independence of the values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/random/generator.h"
#include "runtime/random/philox.h"
#include "tests/ops/reference.h"

using namespace tessera;
using namespace tessera::testing;

namespace {
using V = std::vector<double>;

struct Moments {
  double mean, std, min, max;
};
Moments moments(const V& v) {
  double s = 0, ss = 0, mn = INFINITY, mx = -INFINITY;
  for (double x : v) {
    s += x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  double m = s / v.size();
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / (v.size() - 1)), mn, mx};
}
}  // namespace

TEST_CASE("philox: Random123 known-answer vectors", "[random][philox]") {
  // Counter (c0..c3) and key (k0, k1) all zero.
  PhiloxBlock z = philox4x32_10(0, 0, 0);
  CHECK(z[0] == 0x6627e8d5u);
  CHECK(z[1] == 0xe169c58du);
  CHECK(z[2] == 0xbc57ac4cu);
  CHECK(z[3] == 0x9b00dbd8u);
  // All ones.
  PhiloxBlock f = philox4x32_10(~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0});
  CHECK(f[0] == 0x408f276du);
  CHECK(f[1] == 0x41c83b0eu);
  CHECK(f[2] == 0xa20bc7c6u);
  CHECK(f[3] == 0x6d5451fdu);
  // The digits of pi: counter 243f6a88 85a308d3 13198a2e 03707344,
  // key a4093822 299f31d0; packed as (lo32, hi32) pairs.
  PhiloxBlock p = philox4x32_10(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull,
                                0x0370734413198a2eull);
  CHECK(p[0] == 0xd16cfe09u);
  CHECK(p[1] == 0x94fdccebu);
  CHECK(p[2] == 0x5001e420u);
  CHECK(p[3] == 0x24126ea1u);
}

TEST_CASE("philox: helper functions are in range", "[random][philox]") {
  PhiloxState s{1234, 0};
  double umin = 1, umax = 0, nsum = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    float u = philox_uniform_float(s, i);
    double d = philox_uniform_double(s, i);
    double n = philox_normal(s, i);
    CHECK((u >= 0.0f && u < 1.0f));
    CHECK((d >= 0.0 && d < 1.0));
    CHECK(std::isfinite(n));
    umin = std::min(umin, d);
    umax = std::max(umax, d);
    nsum += n;
  }
  CHECK(umin < 0.001);
  CHECK(umax > 0.999);
  CHECK(std::fabs(nsum / 20000) < 0.05);
  CHECK(philox_uint32(s, 5) == philox4x32_10(1234, 1, 0)[1]);
  CHECK(philox_blocks_for(10) >= 10);
}

TEST_CASE("random: rand is uniform in [0, 1) for each floating dtype", "[random]") {
  for (DType t : floating_dtypes()) {
    INFO(dname(t));
    Generator g(42);
    Tensor r = rand({100000}, t, &g);
    CHECK(r.dtype() == t);
    CHECK(r.sizes() == Shape{100000});
    V v = read_strided(r);
    Moments m = moments(v);
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);  // also for f16/bf16: never rounds up to 1
    CHECK(m.min < 0.01);
    CHECK(m.max > 0.99);
    CHECK(std::fabs(m.mean - 0.5) < 0.01);
    CHECK(std::fabs(m.std - std::sqrt(1.0 / 12.0)) < 0.01);
    // Deciles roughly equal.
    std::vector<int> bins(10, 0);
    for (double x : v) bins[std::min(9, static_cast<int>(x * 10))]++;
    for (int b : bins) CHECK(std::abs(b - 10000) < 600);
  }
  CHECK(rand({3}).dtype() == DType::kF32);
  CHECK(rand({0}).numel() == 0);
  CHECK(rand({}).dim() == 0);
}

TEST_CASE("random: randn has mean 0 and std 1", "[random]") {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    INFO(dname(t));
    Generator g(7);
    V v = read_strided(randn({100000}, t, &g));
    Moments m = moments(v);
    CHECK(std::fabs(m.mean) < 0.02);
    CHECK(std::fabs(m.std - 1.0) < 0.02);
    CHECK(m.min < -3.0);
    CHECK(m.max > 3.0);
    int within1 = 0;
    for (double x : v) within1 += std::fabs(x) < 1.0;
    CHECK(std::fabs(within1 / 100000.0 - 0.6827) < 0.01);
  }
}

TEST_CASE("random: seeds make values reproducible", "[random]") {
  Generator g1(123), g2(123), g3(124);
  V a = read_strided(rand({1000}, {}, &g1));
  V b = read_strided(rand({1000}, {}, &g2));
  V c = read_strided(rand({1000}, {}, &g3));
  CHECK(a == b);
  CHECK(a != c);
  // The next call on the same generator gives new values.
  V a2 = read_strided(rand({1000}, {}, &g1));
  CHECK(a2 != a);
  // Re-seeding restarts the sequence.
  g1.manual_seed(123);
  CHECK(g1.seed() == 123);
  CHECK(read_strided(rand({1000}, {}, &g1)) == a);
  // State save and restore.
  PhiloxState st = g1.state();
  V n1 = read_strided(randn({500}, {}, &g1));
  g1.set_state(st);
  CHECK(read_strided(randn({500}, {}, &g1)) == n1);
  // The default generator of the CPU follows manual_seed.
  manual_seed(99);
  V d1 = read_strided(rand({64}));
  V n2 = read_strided(randn({64}));
  manual_seed(99);
  CHECK(read_strided(rand({64})) == d1);
  CHECK(read_strided(randn({64})) == n2);
  CHECK(default_generator(host_device()).seed() == 99);
  // Values within one tensor are not all equal and do not repeat in blocks.
  std::set<double> distinct(a.begin(), a.end());
  CHECK(distinct.size() > 990);
  CHECK(Generator().seed() == Generator::kDefaultSeed);
}

TEST_CASE("random: values follow the counter layout of philox.h", "[random]") {
  const uint64_t seed = 0x1234567890abcdefull;
  Generator g(seed);
  PhiloxState s0 = g.state();
  CHECK(s0.seed == seed);
  CHECK(s0.offset == 0);
  V r = read_strided(rand({37}, DType::kF32, &g));
  for (uint64_t i = 0; i < 37; ++i) {
    INFO(i);
    CHECK(r[i] == static_cast<double>(philox_uniform_float(s0, i)));
  }
  // The generator moved past the counters it used.
  PhiloxState s1 = g.state();
  CHECK(s1.seed == seed);
  CHECK(s1.offset >= philox_blocks_for(37));
  V r2 = read_strided(rand({5}, DType::kF64, &g));
  for (uint64_t i = 0; i < 5; ++i) CHECK(r2[i] == philox_uniform_double(s1, i));
  PhiloxState s2 = g.state();
  V n = read_strided(randn({9}, DType::kF64, &g));
  for (uint64_t i = 0; i < 9; ++i) CHECK(n[i] == philox_normal(s2, i));
  PhiloxState s3 = g.state();
  Tensor u = empty({6});
  uniform_(u, -2.0, 3.0, &g);
  V uv = read_strided(u);
  for (uint64_t i = 0; i < 6; ++i) {
    double expect = -2.0 + 5.0 * philox_uniform_float(s3, i);
    CHECK(std::fabs(uv[i] - expect) <= 1e-6);
  }
}

TEST_CASE("random: values do not depend on the output layout", "[random]") {
  for (DType t : {DType::kF32, DType::kF64}) {
    INFO(dname(t));
    // uniform_ on a transposed view vs a contiguous tensor of that shape:
    // equal values at each row-major index.
    Tensor base = empty({40, 30}, t);
    Tensor tv = base.t();  // [30, 40], non-contiguous
    Tensor c = empty({30, 40}, t);
    Generator g1(5), g2(5);
    uniform_(tv, 0.0, 1.0, &g1);
    uniform_(c, 0.0, 1.0, &g2);
    CHECK(tv.to_vector<double>() == c.to_vector<double>());
    // normal_ on a strided slice.
    Tensor big = zeros({20, 50}, t);
    Tensor sl = big.slice(1, 0, 50, 2);  // [20, 25]
    Tensor c2 = empty({20, 25}, t);
    Generator g3(6), g4(6);
    normal_(sl, 0.0, 1.0, &g3);
    normal_(c2, 0.0, 1.0, &g4);
    CHECK(sl.to_vector<double>() == c2.to_vector<double>());
    // The other columns of the base are untouched.
    V bv = read_strided(big);
    int touched = 0;
    for (int i = 0; i < 20; ++i)
      for (int j = 1; j < 50; j += 2) touched += bv[i * 50 + j] != 0.0;
    CHECK(touched == 0);
    // rand of a shape gives the same values as rand of the flat size.
    Generator g5(8), g6(8);
    CHECK(rand({7, 11}, t, &g5).to_vector<double>() == rand({77}, t, &g6).to_vector<double>());
  }
  // Large tensors (parallel generation) match element-wise generation.
  Generator g7(9);
  PhiloxState s = g7.state();
  V big = read_strided(rand({1 << 20}, DType::kF32, &g7));
  int bad = 0;
  for (uint64_t i = 0; i < (1u << 20); i += 997) {
    bad += big[i] != static_cast<double>(philox_uniform_float(s, i));
  }
  CHECK(bad == 0);
}

TEST_CASE("random: uniform_ and normal_ parameters", "[random]") {
  Generator g(11);
  Tensor u = empty({50000}, DType::kF64);
  Tensor& ur = uniform_(u, -2.0, 3.0, &g);
  CHECK(&ur == &u);
  Moments m = moments(read_strided(u));
  CHECK(m.min >= -2.0);
  CHECK(m.max < 3.0);
  CHECK(std::fabs(m.mean - 0.5) < 0.05);
  CHECK(std::fabs(m.std - 5.0 / std::sqrt(12.0)) < 0.05);
  Tensor n = empty({50000});
  normal_(n, 5.0, 2.0, &g);
  Moments mn = moments(read_strided(n));
  CHECK(std::fabs(mn.mean - 5.0) < 0.05);
  CHECK(std::fabs(mn.std - 2.0) < 0.05);
  // Degenerate ranges.
  Tensor e = empty({10});
  uniform_(e, 1.5, 1.5, &g);
  CHECK(read_strided(e) == V(10, 1.5));
  normal_(e, 3.0, 0.0, &g);
  CHECK(read_strided(e) == V(10, 3.0));
  // Zero-size outputs are fine.
  Tensor z = empty({0, 4});
  uniform_(z, 0, 1, &g);
  normal_(z, 0, 1, &g);
  // Errors.
  CHECK_THROWS_AS(uniform_(e, 3.0, 2.0, &g), ValueError);
  CHECK_THROWS_AS(normal_(e, 0.0, -1.0, &g), ValueError);
  CHECK_THROWS_AS(rand({3}, DType::kI32), TypeError);
  CHECK_THROWS_AS(rand({3}, DType::kBool), TypeError);
  CHECK_THROWS_AS(randn({3}, DType::kI64), TypeError);
  CHECK_THROWS_AS(rand({-1}), ValueError);
}

TEST_CASE("random: concurrent draws from one generator use disjoint counters",
          "[random]") {
  Generator g(2024);
  std::vector<V> parts(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { parts[t] = read_strided(rand({2000}, DType::kF64, &g)); });
  }
  for (auto& th : threads) th.join();
  std::set<double> all;
  for (const V& p : parts) all.insert(p.begin(), p.end());
  CHECK(all.size() == 8000);
  // Each draw got one of the four consecutive counter ranges a sequential
  // run would have used.
  std::set<int> used;
  for (const V& p : parts) {
    for (int k = 0; k < 4; ++k) {
      PhiloxState st{2024, k * philox_blocks_for(2000)};
      bool same = true;
      for (uint64_t i = 0; i < 2000 && same; ++i) same = p[i] == philox_uniform_double(st, i);
      if (same) used.insert(k);
    }
  }
  CHECK(used.size() == 4);
  CHECK(g.state().offset == 4 * philox_blocks_for(2000));
}
