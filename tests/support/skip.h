// Skipping Catch2 test cases: TESSERA_SKIP("reason").
//
// Catch2 v2 has no notion of a skipped test, and a test that returns early
// would be counted as passed. That would hide, for instance, a device that
// is absent on this machine. TESSERA_SKIP records the skip for the test case
// that is running and returns from its body; the listener in catch_main.cc
// then reports the test case as skipped (not passed), prints
//   SKIPPED: <test name>: <reason>
// and counts it in the line printed when the run ends
//   tessera-test-summary: passed=N failed=N skipped=N
// which ./dev test (tools/test_summary.py) reads from Bazel's test.log.
//
// Use it only directly in a TEST_CASE (or TEMPLATE_TEST_CASE) body, before
// any SECTION: it expands to a `return;`, so inside a helper function it
// would only return from the helper, and inside a SECTION Catch would still
// run the test case again for the other sections. A test case that calls it
// after a failed CHECK is counted as failed.
//
//   TEST_CASE("vulkan: add") {
//     if (vulkan_device_count() == 0) TESSERA_SKIP("no Vulkan device");
//     ...
//   }
//
// Link //tests/support:catch_main (it provides main() and the listener).
#pragma once

#include <string>

namespace tessera::testing {

// Marks the test case now running as skipped, with a reason. Called by
// TESSERA_SKIP; the first reason given for a test case is kept.
void record_skip(const std::string& reason);

// True if the test case now running has called TESSERA_SKIP.
bool current_test_skipped();

}  // namespace tessera::testing

#define TESSERA_SKIP(reason)                       \
  do {                                             \
    ::tessera::testing::record_skip(reason);       \
    return;                                        \
  } while (false)
