// Not a test on its own: catch_main_summary_test runs it and checks that a
// failing test case counts as failed, also when it calls TESSERA_SKIP after
// the failure, and that the binary exits non-zero.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tests/support/skip.h"

TEST_CASE("fixture: passes") { CHECK(true); }

TEST_CASE("fixture: fails") { CHECK(1 == 2); }

TEST_CASE("fixture: fails, then skips") {
  CHECK(false);
  TESSERA_SKIP("a skip after a failure does not hide the failure");
}

TEST_CASE("fixture: skips") { TESSERA_SKIP("nothing to run here"); }

// Hidden (run only when asked for with "[crash]"): a crash still ends with
// the summary line, counting the crashed test case as failed.
TEST_CASE("fixture: crashes", "[.crash]") {
  CHECK(true);
  std::abort();
}
