// main() for every Catch2 (v2) test binary of Tessera, plus skipping.
//
// Runs the Catch session as usual (all of Catch's command-line options
// work) and registers a listener that classifies each test case as passed,
// failed or skipped (see skip.h), prints "SKIPPED: <test>: <reason>" for the
// skipped ones and, when the run ends, prints the machine-readable line
//   tessera-test-summary: passed=N failed=N skipped=N
// that tools/test_summary.py reads from Bazel's test.log.
//
// Under `bazel test --test_filter=SPEC`, Bazel passes SPEC in the
// environment (TESTBRIDGE_TEST_ONLY); it is given to Catch as a test spec.
// Under `shard_count = N` in a BUILD rule, Bazel runs the binary N times
// with TEST_TOTAL_SHARDS and TEST_SHARD_INDEX; each run takes every Nth of
// the test cases its command line selects (Catch v2 has no sharding).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <malloc.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/skip.h"

namespace tessera::testing {
namespace {

// The test case now running (set by the listener) and the skips recorded
// for it. Catch runs test cases one at a time on the main thread.
struct SkipRegistry {
  std::string current_test;
  bool in_test = false;
  std::map<std::string, std::string> reasons;  // test name -> reason
  // Test cases classified so far.
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

SkipRegistry& registry() {
  static SkipRegistry r;
  return r;
}

}  // namespace

void record_skip(const std::string& reason) {
  SkipRegistry& r = registry();
  if (!r.in_test) {
    std::cerr << "TESSERA_SKIP(\"" << reason
              << "\") called outside a running test case; ignored\n";
    return;
  }
  r.reasons.emplace(r.current_test, reason);  // keeps the first reason
}

bool current_test_skipped() {
  const SkipRegistry& r = registry();
  return r.in_test && r.reasons.count(r.current_test) != 0;
}

namespace {

class SummaryListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    TestEventListenerBase::testCaseStarting(info);
    SkipRegistry& r = registry();
    r.current_test = info.name;
    r.in_test = true;
    r.reasons.erase(info.name);
  }

  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    SkipRegistry& r = registry();
    const std::string& name = stats.testInfo.name;
    // Catch's own verdict for the test case (it accounts for [!shouldfail]).
    const bool failed = stats.totals.testCases.failed > 0;
    auto skip = r.reasons.find(name);
    if (failed) {
      ++r.failed;
    } else if (skip != r.reasons.end()) {
      ++r.skipped;
      std::cout << "SKIPPED: " << name << ": " << skip->second << std::endl;
    } else {
      ++r.passed;
    }
    r.in_test = false;
    TestEventListenerBase::testCaseEnded(stats);
  }

  // Also called when a test case crashes (Catch's SIGSEGV/SIGABRT handler
  // ends the run, counting that test case as failed, before the process
  // dies), so the line is there even then. Listeners run before the
  // console reporter, hence the line comes just before Catch's totals.
  void testRunEnded(Catch::TestRunStats const& stats) override {
    const SkipRegistry& r = registry();
    std::cout << "tessera-test-summary: passed=" << r.passed
              << " failed=" << r.failed << " skipped=" << r.skipped
              << std::endl;
    TestEventListenerBase::testRunEnded(stats);
  }
};

CATCH_REGISTER_LISTENER(SummaryListener)

// A test case name as a Catch test spec that matches it alone: quoted, with
// the characters the spec parser reads (comma, quote, backslash) escaped.
std::string exact_name_spec(const std::string& name) {
  std::string spec = "\"";
  for (char c : name) {
    if (c == ',' || c == '"' || c == '\\') spec += '\\';
    spec += c;
  }
  return spec + "\"";
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  try {
    return std::stoi(v);
  } catch (...) {
    return fallback;
  }
}

}  // namespace

// Narrows the session's test spec to this shard's test cases when Bazel
// shards the test. Returns false when the shard has none (more shards than
// test cases): the caller then reports an empty run rather than let an
// empty spec select every test.
bool select_shard(Catch::Session& session) {
  const int total = env_int("TEST_TOTAL_SHARDS", 1);
  const int index = env_int("TEST_SHARD_INDEX", 0);
  if (total <= 1) return true;
  // Tells Bazel that this binary shards (it fails the test otherwise when
  // the status file is requested and not written).
  if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) {
    std::ofstream touch(status, std::ios::app);
  }
  Catch::ConfigData data = session.configData();
  if (data.listTests || data.listTestNamesOnly || data.listTags || data.listReporters) {
    return true;
  }
  Catch::Config& config = session.config();
  const std::vector<Catch::TestCase> tests =
      Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config);
  std::vector<std::string> spec;
  for (size_t i = static_cast<size_t>(index); i < tests.size(); i += static_cast<size_t>(total)) {
    if (!spec.empty()) spec.emplace_back(",");  // separate filters: any of them
    spec.push_back(exact_name_spec(tests[i].name));
  }
  if (spec.empty()) return false;
  data.testsOrTags = std::move(spec);
  session.useConfigData(data);
  return true;
}

}  // namespace tessera::testing

// catch_runtime (BUILD) compiles this file without main, for programs
// that link Catch-based libraries but run themselves (the op fuzzer).
#ifndef TESSERA_CATCH_NO_MAIN
int main(int argc, char* argv[]) {
  // Test harnesses (the conformance suite's reference vectors above all)
  // allocate and free blocks of a few MiB over and over. glibc serves each
  // with a fresh mmap by default and returns it at once, so every one
  // costs its page faults again: a quarter of the conformance suite's time
  // was the kernel's. Keeping such blocks in the heap (up to the 32 MiB
  // that mallopt allows) and not trimming it makes them reused.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  std::vector<char*> args(argv, argv + argc);
  // Bazel's --test_filter arrives as TESTBRIDGE_TEST_ONLY: a Catch test spec
  // (a name, wildcards, [tags]) added to the command line.
  const char* filter = std::getenv("TESTBRIDGE_TEST_ONLY");
  std::string filter_arg;
  if (filter != nullptr && *filter != '\0') {
    filter_arg = filter;
    args.push_back(filter_arg.data());
  }
  Catch::Session session;
  const int parsed = session.applyCommandLine(static_cast<int>(args.size()), args.data());
  if (parsed != 0) return parsed;
  if (!tessera::testing::select_shard(session)) {
    std::cout << "tessera-test-summary: passed=0 failed=0 skipped=0" << std::endl;
    return 0;
  }
  return session.run();
}
#endif  // TESSERA_CATCH_NO_MAIN
