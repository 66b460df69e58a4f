// Checks //tests/support:catch_main itself: one test case passes and one is
// skipped, so the run must end with
//   tessera-test-summary: passed=1 failed=0 skipped=1
#include <catch2/catch.hpp>

#include "tests/support/skip.h"

TEST_CASE("catch_main selftest: a passing test case") {
  CHECK(1 + 1 == 2);
  CHECK_FALSE(tessera::testing::current_test_skipped());
}

TEST_CASE("catch_main selftest: a skipped test case") {
  TESSERA_SKIP("demonstrates that a skip is reported as skipped");
  FAIL("unreachable: TESSERA_SKIP returns from the test case");
}
