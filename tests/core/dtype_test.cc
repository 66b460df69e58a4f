// DType basics, PyTorch's promotion table, result_type with 0-d tensors and
// Scalars, and the Half / BFloat16 conversions against a naive rounding
// reference computed in double.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/core/dtype.h"
#include "runtime/core/half.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using tessera::testing::dname;

namespace {

constexpr DType b1 = DType::kBool, u1 = DType::kU8, i1 = DType::kI8,
                i2 = DType::kI16, i4 = DType::kI32, i8 = DType::kI64,
                f2 = DType::kF16, bf = DType::kBF16, f4 = DType::kF32,
                f8 = DType::kF64;

// Nearest value of a binary floating format with `mant_bits` stored
// mantissa bits and minimum normal exponent `emin`, ties to even, computed in
// double; returns +-inf when the rounded magnitude reaches 2^(emax+1).
double naive_round(double x, int mant_bits, int emin, int emax) {
  if (std::isnan(x)) return x;
  if (x == 0.0) return x;
  double ax = std::fabs(x);
  int e = static_cast<int>(std::floor(std::log2(ax)));
  // log2 can be off by one near powers of two; fix e so 2^e <= ax < 2^(e+1).
  while (std::ldexp(1.0, e) > ax) --e;
  while (std::ldexp(1.0, e + 1) <= ax) ++e;
  if (e < emin) e = emin;  // subnormal range: fixed quantum
  double quantum = std::ldexp(1.0, e - mant_bits);
  double q = ax / quantum;  // exact: scaling by a power of two
  double r = std::nearbyint(q);  // default rounding mode: ties to even
  double out = r * quantum;
  if (out >= std::ldexp(1.0, emax + 1)) out = INFINITY;
  return std::signbit(x) ? -out : out;
}

double naive_half(float f) { return naive_round(f, 10, -14, 15); }
double naive_bf16(float f) { return naive_round(f, 7, -126, 127); }

}  // namespace

TEST_CASE("dtype: itemsize, names and categories", "[dtype]") {
  CHECK(itemsize(b1) == 1);
  CHECK(itemsize(u1) == 1);
  CHECK(itemsize(i1) == 1);
  CHECK(itemsize(i2) == 2);
  CHECK(itemsize(i4) == 4);
  CHECK(itemsize(i8) == 8);
  CHECK(itemsize(f2) == 2);
  CHECK(itemsize(bf) == 2);
  CHECK(itemsize(f4) == 4);
  CHECK(itemsize(f8) == 8);
  CHECK(itemsize(f2) == sizeof(Half));
  CHECK(itemsize(bf) == sizeof(BFloat16));

  CHECK(dtype_name(b1) == "bool");
  CHECK(dtype_name(u1) == "uint8");
  CHECK(dtype_name(i1) == "int8");
  CHECK(dtype_name(i2) == "int16");
  CHECK(dtype_name(i4) == "int32");
  CHECK(dtype_name(i8) == "int64");
  CHECK(dtype_name(f2) == "float16");
  CHECK(dtype_name(bf) == "bfloat16");
  CHECK(dtype_name(f4) == "float32");
  CHECK(dtype_name(f8) == "float64");

  for (DType t : tessera::testing::all_dtypes()) {
    INFO(dname(t));
    bool fl = t == f2 || t == bf || t == f4 || t == f8;
    CHECK(is_floating(t) == fl);
    CHECK(is_integral(t) == (!fl && t != b1));
    CHECK(is_signed(t) == (t != b1 && t != u1));
    DTypeCategory c = category(t);
    CHECK(c == (t == b1 ? DTypeCategory::kBool
                        : fl ? DTypeCategory::kFloating : DTypeCategory::kIntegral));
  }
  CHECK(default_dtype_for(DTypeCategory::kBool) == b1);
  CHECK(default_dtype_for(DTypeCategory::kIntegral) == i8);
  CHECK(default_dtype_for(DTypeCategory::kFloating) == f4);

  CHECK(dtype_v<float> == f4);
  CHECK(dtype_v<Half> == f2);
  CHECK(dtype_v<BFloat16> == bf);
  CHECK(dtype_v<uint8_t> == u1);
  CHECK(dtype_v<int64_t> == i8);
}

TEST_CASE("dtype: promote_types matches torch.promote_types for every pair",
          "[dtype]") {
  // Rows and columns in the order b1 u1 i1 i2 i4 i8 f2 bf f4 f8, as printed
  // by torch.promote_types in PyTorch 2.x.
  const DType expected[10][10] = {
      {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  const auto& all = tessera::testing::all_dtypes();
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      INFO(dname(all[i]) << " + " << dname(all[j]));
      CHECK(dname(promote_types(all[i], all[j])) == dname(expected[i][j]));
    }
  }
  // The famous ones, spelled out.
  CHECK(promote_types(u1, i1) == i2);
  CHECK(promote_types(f2, bf) == f4);
  CHECK(promote_types(bf, f2) == f4);
  CHECK(promote_types(i8, f2) == f2);
  CHECK(promote_types(i4, bf) == bf);
  CHECK(promote_types(b1, u1) == u1);
  CHECK(promote_types(b1, f2) == f2);
}

TEST_CASE("dtype: result_type with dimensioned tensors, 0-d tensors, Scalars",
          "[dtype]") {
  auto dimmed = [](DType t) { return zeros({2}, t); };
  auto zero_d = [](DType t) { return zeros({}, t); };

  // Dimensioned tensors: plain promotion.
  CHECK(result_type(dimmed(u1), dimmed(i1)) == i2);
  CHECK(result_type(dimmed(f2), dimmed(bf)) == f4);
  CHECK(result_type(dimmed(i4), dimmed(f2)) == f2);

  // Scalars.
  CHECK(result_type(dimmed(i4), Scalar(2.5)) == f4);
  CHECK(result_type(dimmed(i1), Scalar(int64_t{1000})) == i1);
  CHECK(result_type(dimmed(u1), Scalar(-1)) == u1);
  CHECK(result_type(dimmed(b1), Scalar(1)) == i8);
  CHECK(result_type(dimmed(b1), Scalar(true)) == b1);
  CHECK(result_type(dimmed(b1), Scalar(1.5)) == f4);
  CHECK(result_type(dimmed(bf), Scalar(2.5)) == bf);
  CHECK(result_type(dimmed(f2), Scalar(1e10)) == f2);
  CHECK(result_type(dimmed(f8), Scalar(2.5f)) == f8);
  CHECK(result_type(dimmed(i8), Scalar(true)) == i8);
  CHECK(result_type(dimmed(f4), Scalar(7)) == f4);

  // 0-d tensors only count when of a higher category; then their own dtype.
  CHECK(result_type(dimmed(i1), zero_d(i8)) == i1);
  CHECK(result_type(zero_d(i8), dimmed(i1)) == i1);
  CHECK(result_type(dimmed(f2), zero_d(f8)) == f2);
  CHECK(result_type(dimmed(i4), zero_d(f8)) == f8);
  CHECK(result_type(zero_d(f2), dimmed(i4)) == f2);
  CHECK(result_type(zero_d(b1), dimmed(i1)) == i1);
  CHECK(result_type(dimmed(b1), zero_d(f8)) == f8);
  CHECK(result_type(dimmed(b1), zero_d(u1)) == u1);

  // Two 0-d tensors: plain promotion.
  CHECK(result_type(zero_d(i1), zero_d(i8)) == i8);
  CHECK(result_type(zero_d(f2), zero_d(f4)) == f4);

  // 0-d tensor and Scalar: the 0-d tensor is the "dimensioned" side.
  CHECK(result_type(zero_d(i4), Scalar(2.5)) == f4);
  CHECK(result_type(zero_d(f8), Scalar(2.5)) == f8);
  CHECK(result_type(zero_d(i1), Scalar(5)) == i1);
}

TEST_CASE("half: known conversions", "[half]") {
  CHECK(Half(1.0f).bits == 0x3c00);
  CHECK(Half(-2.0f).bits == 0xc000);
  CHECK(Half(1.0f / 3.0f).bits == 0x3555);
  CHECK(static_cast<float>(Half(1.0f / 3.0f)) == 0.333251953125f);
  CHECK(Half(65504.0f).bits == 0x7bff);
  CHECK(Half(65519.0f).bits == 0x7bff);  // below the midpoint to 65536
  CHECK(Half(65520.0f).bits == 0x7c00);  // the midpoint rounds to inf
  CHECK(Half(-65520.0f).bits == 0xfc00);
  CHECK(Half(1e9f).bits == 0x7c00);
  CHECK(Half(INFINITY).bits == 0x7c00);
  CHECK(Half(-INFINITY).bits == 0xfc00);
  // Subnormals: 2^-24 is the smallest; 2^-25 is a tie that goes to even 0.
  CHECK(Half(std::ldexp(1.0f, -24)).bits == 0x0001);
  CHECK(static_cast<float>(Half::from_bits(0x0001)) == std::ldexp(1.0f, -24));
  CHECK(Half(std::ldexp(1.0f, -25)).bits == 0x0000);
  CHECK(Half(1.5f * std::ldexp(1.0f, -25)).bits == 0x0001);
  CHECK(Half(3.0f * std::ldexp(1.0f, -25)).bits == 0x0002);  // tie 1.5 q -> 2
  CHECK(Half(std::ldexp(1.0f, -14)).bits == 0x0400);        // min normal
  CHECK(static_cast<float>(Half::from_bits(0x03ff)) ==
        1023.0f * std::ldexp(1.0f, -24));
  CHECK(Half(std::ldexp(1.0f, -30)).bits == 0x0000);
  CHECK(Half(-std::ldexp(1.0f, -24)).bits == 0x8001);
  // Ties to even in the normal range.
  CHECK(Half(1.0f + std::ldexp(1.0f, -11)).bits == 0x3c00);
  CHECK(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits == 0x3c02);
  CHECK(Half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits == 0x3c01);
  // Signed zero and NaN.
  CHECK(Half(-0.0f).bits == 0x8000);
  CHECK(std::signbit(static_cast<float>(Half(-0.0f))));
  CHECK(std::isnan(static_cast<float>(Half(NAN))));
  CHECK(std::isnan(static_cast<float>(Half(-NAN))));
  CHECK(std::isnan(static_cast<float>(Half::from_bits(0x7e00))));
  CHECK(std::isinf(static_cast<float>(Half::from_bits(0x7c00))));
}

TEST_CASE("half: every bit pattern round-trips through float", "[half]") {
  int bad = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    Half h = Half::from_bits(static_cast<uint16_t>(b));
    float f = h;
    uint32_t exp = (b >> 10) & 0x1f, mant = b & 0x3ff;
    if (exp == 0x1f && mant != 0) {
      if (!std::isnan(f)) ++bad;
      continue;
    }
    // Independent decode of the bits.
    double sign = (b & 0x8000) ? -1.0 : 1.0;
    double expect = exp == 0x1f ? INFINITY
                    : exp == 0  ? std::ldexp(static_cast<double>(mant), -24)
                                : std::ldexp(1.0 + mant / 1024.0, static_cast<int>(exp) - 15);
    expect *= sign;
    if (static_cast<double>(f) != expect || std::signbit(f) != (sign < 0)) ++bad;
    if (Half(f).bits != b) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("half: float -> half matches naive round-to-nearest-even", "[half]") {
  // A sweep over magnitudes from deep subnormal to overflow, plus exact
  // midpoints between neighbouring halves.
  int bad = 0;
  std::string first;
  auto check = [&](float f) {
    double expect = naive_half(f);
    double got = static_cast<float>(Half(f));
    bool ok = (std::isnan(expect) && std::isnan(got)) ||
              (got == expect && std::signbit(got) == std::signbit(expect));
    if (!ok && bad++ == 0) {
      first = std::to_string(f) + " -> " + std::to_string(got) + " expected " +
              std::to_string(expect);
    }
  };
  std::vector<double> xs = tessera::testing::lcg_values(20000, 7, -30.0, 17.0);
  for (double e : xs) {
    float f = static_cast<float>(std::exp2(e));
    check(f);
    check(-f);
  }
  for (uint32_t b = 0; b < 0x7c00; b += 7) {
    float lo = Half::to_float(static_cast<uint16_t>(b));
    float hi = Half::to_float(static_cast<uint16_t>(b + 1));
    float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    check(mid);
    check(std::nextafter(mid, 0.0f));
    check(std::nextafter(mid, INFINITY));
  }
  INFO(first);
  CHECK(bad == 0);
}

TEST_CASE("bfloat16: known conversions and rounding", "[half]") {
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  CHECK(BFloat16(1.0f / 3.0f).bits == 0x3eab);  // 0x3eaaaaab rounds up
  CHECK(BFloat16(-2.0f).bits == 0xc000);
  // Ties to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  CHECK(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits == 0x3f80);
  CHECK(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits == 0x3f82);
  CHECK(BFloat16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)).bits == 0x3f81);
  CHECK(static_cast<float>(BFloat16(65520.0f)) == 65536.0f);
  CHECK(BFloat16(std::numeric_limits<float>::max()).bits == 0x7f80);  // rounds to inf
  CHECK(BFloat16(INFINITY).bits == 0x7f80);
  CHECK(BFloat16(-0.0f).bits == 0x8000);
  CHECK(std::isnan(static_cast<float>(BFloat16(NAN))));
  CHECK(std::isnan(static_cast<float>(BFloat16(std::bit_cast<float>(0x7f800001u)))));
  CHECK(static_cast<float>(BFloat16(std::ldexp(1.0f, -133))) == std::ldexp(1.0f, -133));

  int bad = 0;
  std::string first;
  std::vector<double> xs = tessera::testing::lcg_values(20000, 11, -140.0, 127.9);
  for (double e : xs) {
    for (float f : {static_cast<float>(std::exp2(e)), -static_cast<float>(std::exp2(e))}) {
      double expect = naive_bf16(f);
      double got = static_cast<float>(BFloat16(f));
      if (got != expect && bad++ == 0) {
        first = std::to_string(f) + " -> " + std::to_string(got);
      }
    }
  }
  // Every bf16 is exactly the top half of an f32, and round-trips.
  for (uint32_t b = 0; b < 65536; ++b) {
    uint32_t exp = (b >> 7) & 0xff, mant = b & 0x7f;
    if (exp == 0xff && mant != 0) continue;
    float f = BFloat16::from_bits(static_cast<uint16_t>(b));
    if (std::bit_cast<uint32_t>(f) != (b << 16)) ++bad;
    if (BFloat16(f).bits != b) ++bad;
  }
  INFO(first);
  CHECK(bad == 0);
}
