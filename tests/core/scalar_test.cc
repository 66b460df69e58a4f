// Scalar: kinds, categories, conversions with C++ cast semantics, printing,
// and how a Scalar's kind decides the dtype of factories and ops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/core/half.h"
#include "runtime/core/scalar.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;

TEST_CASE("scalar: kinds from C++ types", "[scalar]") {
  CHECK(Scalar().is_integral());
  CHECK(Scalar().to<int64_t>() == 0);
  CHECK(Scalar(true).is_bool());
  CHECK(Scalar(false).kind() == Scalar::Kind::kBool);
  CHECK(Scalar(3).is_integral());
  CHECK(Scalar(int8_t{-3}).is_integral());
  CHECK(Scalar(uint8_t{200}).is_integral());
  CHECK(Scalar(uint8_t{200}).to<int64_t>() == 200);
  CHECK(Scalar(int64_t{1} << 62).to<int64_t>() == (int64_t{1} << 62));
  CHECK(Scalar(2.5).is_floating());
  CHECK(Scalar(2.5f).is_floating());
  CHECK(Scalar(Half(1.5f)).is_floating());
  CHECK(Scalar(Half(1.5f)).to<double>() == 1.5);
  CHECK(Scalar(BFloat16(-0.25f)).is_floating());
  CHECK(Scalar(BFloat16(-0.25f)).to<float>() == -0.25f);

  CHECK(Scalar(true).category() == DTypeCategory::kBool);
  CHECK(Scalar(7).category() == DTypeCategory::kIntegral);
  CHECK(Scalar(7.0).category() == DTypeCategory::kFloating);
  CHECK_FALSE(Scalar(7.0).is_integral());
  CHECK_FALSE(Scalar(7).is_floating());
  CHECK_FALSE(Scalar(1).is_bool());
}

TEST_CASE("scalar: conversions follow C++ casts", "[scalar]") {
  CHECK(Scalar(2.9).to<int32_t>() == 2);
  CHECK(Scalar(-2.9).to<int64_t>() == -2);
  CHECK(Scalar(-3).to<uint8_t>() == 253);
  CHECK(Scalar(300).to<int8_t>() == 44);
  CHECK(Scalar(70000).to<int16_t>() == 4464);
  CHECK(Scalar(0.1).to<bool>());
  CHECK_FALSE(Scalar(0.0).to<bool>());
  CHECK(Scalar(-0.0).to<bool>() == false);
  CHECK(Scalar(std::nan("")).to<bool>());
  CHECK(Scalar(2).to<bool>());
  CHECK_FALSE(Scalar(0).to<bool>());
  CHECK(Scalar(true).to<double>() == 1.0);
  CHECK(Scalar(true).to<int32_t>() == 1);
  CHECK(Scalar(false).to<float>() == 0.0f);
  CHECK(Scalar(7).to<double>() == 7.0);
  CHECK(Scalar(0.1).to<float>() == 0.1f);
  CHECK(Scalar(0.1).to<double>() == 0.1);
  // int64 beyond 2^53 keeps its exact value as an int.
  int64_t big = (int64_t{1} << 53) + 1;
  CHECK(Scalar(big).to<int64_t>() == big);
  // 16-bit floats round to nearest even through float.
  CHECK(Scalar(1.0 / 3.0).to<Half>().bits == 0x3555);
  CHECK(Scalar(1.0 / 3.0).to<BFloat16>().bits == 0x3eab);
  CHECK(Scalar(70000.0).to<Half>().bits == 0x7c00);
  CHECK(Scalar(3).to<Half>().bits == 0x4200);
  CHECK(std::isinf(Scalar(1e300).to<float>()));
}

TEST_CASE("scalar: to_string", "[scalar]") {
  CHECK(Scalar(true).to_string() == "True");
  CHECK(Scalar(false).to_string() == "False");
  CHECK(Scalar(42).to_string() == "42");
  CHECK(Scalar(-7).to_string() == "-7");
  CHECK(Scalar(2.5).to_string() == "2.5");
}

TEST_CASE("scalar: the kind decides the dtype of full and of ops", "[scalar]") {
  CHECK(full({2}, Scalar(true)).dtype() == DType::kBool);
  CHECK(full({2}, Scalar(3)).dtype() == DType::kI64);
  CHECK(full({2}, Scalar(3.0)).dtype() == DType::kF32);
  CHECK(full({2}, Scalar(Half(3.0f))).dtype() == DType::kF32);

  Tensor i = zeros({2}, DType::kI32);
  CHECK(add(i, Scalar(1)).dtype() == DType::kI32);
  CHECK(add(i, Scalar(1.0)).dtype() == DType::kF32);
  CHECK(add(i, Scalar(true)).dtype() == DType::kI32);
  Tensor b = zeros({2}, DType::kBool);
  CHECK(add(b, Scalar(true)).dtype() == DType::kBool);
  CHECK(add(b, Scalar(2)).dtype() == DType::kI64);
  CHECK(mul(b, Scalar(0.5)).dtype() == DType::kF32);
  Tensor h = ones({2}, DType::kF16);
  Tensor r = mul(h, Scalar(1e3));
  CHECK(r.dtype() == DType::kF16);
  CHECK(r.to_vector<double>() == std::vector<double>{1000.0, 1000.0});
  // The Scalar is used at full precision before rounding to the result.
  Tensor d = ones({1}, DType::kF64);
  CHECK(add(d, Scalar(0.1)).item<double>() == 1.1);
  Tensor l = zeros({1}, DType::kI64);
  CHECK(add(l, Scalar(int64_t{1} << 60)).item<int64_t>() == (int64_t{1} << 60));
  CHECK(add(l, Scalar((int64_t{1} << 60) + 1)).item<int64_t>() == (int64_t{1} << 60) + 1);
}
