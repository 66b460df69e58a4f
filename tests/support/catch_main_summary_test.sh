#!/usr/bin/env bash
# Runs two Catch2 binaries linked with catch_main and checks the last line
# they print, which ./dev test counts (tools/test_summary.py).
set -uo pipefail

selftest="$1"
fixture="$2"
status=0

expect() {  # expect NAME WANT_RC_NONZERO(0|1) WANT_LINE OUTPUT RC
  local name="$1" want_fail="$2" want="$3" out="$4" rc="$5"
  local last
  last="$(printf '%s\n' "$out" | tail -n 1)"
  if [[ "$last" != "$want" ]]; then
    echo "FAIL $name: last line is '$last', want '$want'"
    status=1
  fi
  if [[ "$want_fail" == 1 && "$rc" == 0 ]] || [[ "$want_fail" == 0 && "$rc" != 0 ]]; then
    echo "FAIL $name: exit code $rc"
    status=1
  fi
}

# Nested output is printed only on failure, indented, so that its summary
# lines do not count as this test's own (tools/test_summary.py).
out="$("$selftest" 2>&1)"; rc=$?
expect selftest 0 "tessera-test-summary: passed=1 failed=0 skipped=1" "$out" "$rc"
grep -q '^SKIPPED: catch_main selftest: a skipped test case: ' <<<"$out" \
  || { echo "FAIL selftest: no SKIPPED line"; status=1; }

out="$("$fixture" 2>&1)"; rc=$?
expect fixture 1 "tessera-test-summary: passed=1 failed=2 skipped=1" "$out" "$rc"

# Bazel's --test_filter arrives as TESTBRIDGE_TEST_ONLY.
out="$(TESTBRIDGE_TEST_ONLY='fixture: skips' "$fixture" 2>&1)"; rc=$?
expect filtered 0 "tessera-test-summary: passed=0 failed=0 skipped=1" "$out" "$rc"

if [[ $status != 0 ]]; then
  printf '%s\n' "$out" | sed 's/^/  | /'
else
  echo "catch_main summary lines: OK"
fi
exit $status
