#!/usr/bin/env bash
# Runs two Catch2 binaries linked with catch_main and checks the summary
# line they print, which ./dev test counts (tools/test_summary.py), and
# their exit codes.
set -uo pipefail

selftest="$1"
fixture="$2"
status=0

# expect NAME SHOULD_FAIL(0|1) WANT_LINE -- COMMAND...
expect() {
  local name="$1" should_fail="$2" want="$3"
  shift 4
  local out rc lines
  out="$("$@" 2>&1)"
  rc=$?
  lines="$(grep '^tessera-test-summary:' <<<"$out")"
  if [[ "$lines" != "$want" ]]; then
    echo "FAIL $name: summary line(s) '$lines', want exactly '$want'"
    status=1
  elif [[ "$should_fail" == 1 && "$rc" == 0 ]] || [[ "$should_fail" == 0 && "$rc" != 0 ]]; then
    echo "FAIL $name: exit code $rc"
    status=1
  else
    echo "ok $name: $want (exit code $rc)"
    return
  fi
  # Indented, so that its summary line does not count as this test's own.
  sed 's/^/  | /' <<<"$out"
}

expect selftest 0 "tessera-test-summary: passed=1 failed=0 skipped=1" -- "$selftest"
# Output captured first: with pipefail, `grep -q` exiting at its first match
# can kill the writer with SIGPIPE and fail the pipeline at random.
selftest_out="$("$selftest" 2>&1)"
if ! grep -q '^SKIPPED: catch_main selftest: a skipped test case: ' <<<"$selftest_out"; then
  echo "FAIL selftest: no SKIPPED line"
  status=1
fi

expect fixture 1 "tessera-test-summary: passed=1 failed=2 skipped=1" -- "$fixture"

# Bazel's --test_filter arrives as TESTBRIDGE_TEST_ONLY.
expect filtered 0 "tessera-test-summary: passed=0 failed=0 skipped=1" -- \
  env TESTBRIDGE_TEST_ONLY='fixture: skips' "$fixture"

expect crash 1 "tessera-test-summary: passed=0 failed=1 skipped=0" -- "$fixture" '[crash]'

exit $status
