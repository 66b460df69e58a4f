// Proves a sanitizer config is live: each canary (a program with a
// deliberate bug) runs in a subprocess and the sanitizer's report must
// appear in its output, with a failing exit. In a build without that
// sanitizer the case is skipped, never passed.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

#include "tests/support/skip.h"

namespace {

struct Run {
  int exit_code;
  std::string output;
};

// Runs the program at $env_name (a path relative to the runfiles, which is
// the test's working directory), stdout and stderr together.
Run run_canary(const char* env_name) {
  const char* path = std::getenv(env_name);
  REQUIRE(path != nullptr);
  const std::string command = std::string(path) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

// The canary at $env_name must fail and print `report`.
void check_reported(const char* env_name, const char* report) {
  const Run run = run_canary(env_name);
  INFO(run.output);
  CHECK(run.exit_code != 0);
  CHECK(run.output.find(report) != std::string::npos);
}

}  // namespace

TEST_CASE("sanitizers: ASan reports the heap-buffer-overflow canary", "[sanitizers]") {
#ifndef TESSERA_SANITIZER_ASAN
  TESSERA_SKIP("not an ASan build (bazel test --config=asan)");
#else
  check_reported("TESSERA_ASAN_CANARY", "AddressSanitizer: heap-buffer-overflow");
#endif
}

TEST_CASE("sanitizers: UBSan reports the signed-overflow canary", "[sanitizers]") {
#ifndef TESSERA_SANITIZER_ASAN
  TESSERA_SKIP("not an ASan+UBSan build (bazel test --config=asan)");
#else
  check_reported("TESSERA_UBSAN_CANARY", "runtime error: signed integer overflow");
#endif
}

TEST_CASE("sanitizers: TSan reports the data-race canary", "[sanitizers]") {
#ifndef TESSERA_SANITIZER_TSAN
  TESSERA_SKIP("not a TSan build (bazel test --config=tsan)");
#else
  check_reported("TESSERA_TSAN_CANARY", "ThreadSanitizer: data race");
#endif
}
