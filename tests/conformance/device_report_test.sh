#!/usr/bin/env bash
# tools/device_report.py over the CPU device's add and softmax cases.
set -euo pipefail
report="$1"
conformance="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}/report"
python3 "$report" cpu --no-bench --cases 'cpu: add,cpu: softmax' \
  --conformance "$conformance" --out-dir "$out" >"$out.log" 2>&1 || {
  cat "$out.log"
  echo "FAIL: device_report.py exited non-zero"
  exit 1
}
md="$out/cpu.md"
fail() { cat "$md"; echo "FAIL: $*"; exit 1; }
grep -q '^- conformance cases: 2 passed, 0 failed, 0 skipped' "$md" || fail "wrong counts"
grep -q '^| add | .*float32.* |  |  |$' "$md" || fail "add is not listed as native"
grep -q '^| softmax | .*float64.* |  |  |$' "$md" || fail "softmax is not listed as native"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert d['ops']['add']['float32'][0] == 'native', d['ops']['add']" "$out/cpu.json" ||
  fail "the JSON does not list add float32 as native"
echo "tessera-test-summary: passed=1 failed=0 skipped=0"
