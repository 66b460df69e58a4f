// Overflow-checked size arithmetic: element counts and storage byte sizes,
// directly and through the tensor factories that use them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using tessera::testing::MessageContains;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
int64_t numel_of(std::vector<int64_t> s) { return checked_numel(s, "test_numel"); }
size_t bytes_of(std::vector<int64_t> sizes, std::vector<int64_t> strides,
                int64_t offset, size_t item) {
  return checked_storage_bytes(sizes, strides, offset, item, "test_bytes");
}
}  // namespace

TEST_CASE("checked_math: add and mul", "[checked_math]") {
  CHECK(checked_mul(6, 7, "m") == 42);
  CHECK(checked_mul(-6, 7, "m") == -42);
  CHECK(checked_mul(kMax, 1, "m") == kMax);
  CHECK(checked_add(kMax - 1, 1, "a") == kMax);
  CHECK(checked_mul_size(size_t{1} << 31, 4, "ms") == (size_t{1} << 33));
  CHECK(checked_add_size(SIZE_MAX - 3, 3, "as") == SIZE_MAX);

  CHECK_THROWS_MATCHES(checked_mul(int64_t{1} << 32, int64_t{1} << 31, "my_mul"),
                       ValueError, MessageContains({"my_mul", "overflow"}));
  CHECK_THROWS_MATCHES(checked_mul(kMax, -2, "my_mul"), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_MATCHES(checked_add(kMax, 1, "my_add"), ValueError,
                       MessageContains({"my_add", "overflow"}));
  CHECK_THROWS_MATCHES(checked_mul_size(SIZE_MAX / 2 + 1, 2, "my_ms"), ValueError,
                       MessageContains({"my_ms", "overflow"}));
  CHECK_THROWS_MATCHES(checked_add_size(SIZE_MAX, 1, "my_as"), ValueError,
                       MessageContains({"my_as", "overflow"}));
}

TEST_CASE("checked_math: numel", "[checked_math]") {
  CHECK(numel_of({}) == 1);
  CHECK(numel_of({7}) == 7);
  CHECK(numel_of({2, 3, 4}) == 24);
  CHECK(numel_of({2, 0, 5}) == 0);
  CHECK(numel_of({int64_t{1} << 31, int64_t{1} << 31}) == (int64_t{1} << 62));
  CHECK_THROWS_MATCHES(numel_of({int64_t{1} << 32, int64_t{1} << 32}), ValueError,
                       MessageContains({"test_numel", "overflow"}));
  CHECK_THROWS_MATCHES(numel_of({3, kMax / 2}), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_MATCHES(numel_of({2, -1}), ValueError,
                       MessageContains({"test_numel", "-1"}));
}

TEST_CASE("checked_math: storage bytes", "[checked_math]") {
  // Contiguous [2, 3] float: 6 elements.
  CHECK(bytes_of({2, 3}, {3, 1}, 0, 4) == 24);
  // Offset 5: last element at 5 + 3 + 2 = 10, so 11 elements.
  CHECK(bytes_of({2, 3}, {3, 1}, 5, 4) == 44);
  // Transposed layout needs the same span.
  CHECK(bytes_of({3, 2}, {1, 3}, 0, 8) == 48);
  // Expanded (stride 0) dims take no space.
  CHECK(bytes_of({4, 3}, {0, 1}, 0, 2) == 6);
  // Step-2 slice of 10 elements: [5] stride 2 ends at 8.
  CHECK(bytes_of({5}, {2}, 0, 1) == 9);
  // 0-d: one element at the offset.
  CHECK(bytes_of({}, {}, 0, 4) == 4);
  CHECK(bytes_of({}, {}, 3, 4) == 16);
  // No elements: no bytes, whatever the offset and strides.
  CHECK(bytes_of({0, 3}, {3, 1}, 100, 4) == 0);
  CHECK(bytes_of({3, 0}, {1000, 1}, 0, 4) == 0);

  CHECK_THROWS_MATCHES(bytes_of({int64_t{1} << 40, 2}, {int64_t{1} << 40, 1}, 0, 4),
                       ValueError, MessageContains({"test_bytes", "overflow"}));
  CHECK_THROWS_MATCHES(bytes_of({int64_t{1} << 61}, {1}, 0, 8), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_MATCHES(bytes_of({2}, {1}, kMax - 1, 1), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_AS(bytes_of({2, 3}, {1}, 0, 4), ValueError);
  CHECK_THROWS_AS(bytes_of({2}, {-1}, 0, 4), ValueError);
  CHECK_THROWS_AS(bytes_of({2}, {1}, -1, 4), ValueError);
  CHECK_THROWS_AS(bytes_of({-2}, {1}, 0, 4), ValueError);
}

TEST_CASE("checked_math: factories reject overflowing and negative shapes",
          "[checked_math]") {
  // numel overflows int64.
  CHECK_THROWS_MATCHES(empty({int64_t{1} << 32, int64_t{1} << 32}), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_MATCHES(zeros({int64_t{1} << 31, int64_t{1} << 31, 8}), ValueError,
                       MessageContains({"overflow"}));
  // numel fits, bytes do not (2^61 doubles = 2^64 bytes).
  CHECK_THROWS_MATCHES(empty({int64_t{1} << 61}, DType::kF64), ValueError,
                       MessageContains({"overflow"}));
  CHECK_THROWS_MATCHES(empty_strided({2, 2}, {kMax / 2, 1}), ValueError,
                       MessageContains({"overflow"}));
  // Negative dimensions.
  CHECK_THROWS_MATCHES(empty({2, -1}), ValueError, MessageContains({"-1"}));
  CHECK_THROWS_AS(ones({-3}), ValueError);
  // A zero-size dim makes a huge other dim harmless.
  Tensor z = empty({0, int64_t{1} << 62});
  CHECK(z.numel() == 0);
  CHECK(z.nbytes() == 0);
}

TEST_CASE("checked_math: as_strided and views check storage bounds",
          "[checked_math]") {
  Tensor t = zeros({12});
  // Needs 13 elements of a 12-element storage.
  std::string msg;
  std::string kind = tessera::testing::thrown_kind([&] { t.as_strided({4, 4}, {3, 1}); }, &msg);
  INFO(msg);
  CHECK(kind == "ValueError");
  // Overflowing stride arithmetic.
  kind = tessera::testing::thrown_kind(
      [&] { t.as_strided({3, 3}, {kMax / 2, kMax / 2}); }, &msg);
  INFO(msg);
  CHECK(kind == "ValueError");
  // Fits exactly.
  Tensor v = t.as_strided({3, 4}, {4, 1});
  CHECK(v.numel() == 12);
}
