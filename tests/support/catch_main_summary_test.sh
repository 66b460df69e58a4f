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

# Bazel's sharding (shard_count): every Nth of the selected test cases, by
# exact name ("fixture: fails, then skips" has a comma, which a test spec
# reads as "or"), the status file touched; a shard with none runs none.
status_file="${TEST_TMPDIR:-/tmp}/shard_status"
rm -f "$status_file"
shard() {
  env TEST_TOTAL_SHARDS="$1" TEST_SHARD_INDEX="$2" TEST_SHARD_STATUS_FILE="$status_file" "${@:3}"
}
expect shard-0-of-3 0 "tessera-test-summary: passed=1 failed=0 skipped=1" -- shard 3 0 "$fixture"
expect shard-1-of-3 1 "tessera-test-summary: passed=0 failed=1 skipped=0" -- shard 3 1 "$fixture"
expect shard-2-of-3 1 "tessera-test-summary: passed=0 failed=1 skipped=0" -- shard 3 2 "$fixture"
shard_out="$(shard 3 2 "$fixture" 2>&1)"
if ! grep -q '^fixture: fails, then skips' <<<"$shard_out"; then
  echo "FAIL shard-2-of-3: did not run 'fixture: fails, then skips'"
  status=1
fi
if [[ ! -e "$status_file" ]]; then
  echo "FAIL shards: TEST_SHARD_STATUS_FILE not written"
  status=1
fi
expect shard-empty 0 "tessera-test-summary: passed=0 failed=0 skipped=0" -- shard 5 4 "$fixture"
# With a filter, the shards split what it selects.
expect shard-filtered 0 "tessera-test-summary: passed=0 failed=0 skipped=1" -- \
  shard 2 1 env TESTBRIDGE_TEST_ONLY='*skips' "$fixture"

exit $status
