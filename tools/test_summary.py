#!/usr/bin/env python3
"""Summarizes a `./dev test` run: Bazel tests and pytest suites.

Counts are per test case:
  - a Bazel test whose test.log has the line that //tests/support:catch_main
    prints last ("tessera-test-summary: passed=N failed=N skipped=N")
    contributes those counts (a test that Bazel marks failed without any
    failed test case, e.g. a crash after the run or a timeout, adds one
    failure);
  - any other Bazel test (no such line: not Catch2, or it crashed mid-run)
    counts as one test, passed or failed as Bazel says;
  - a test target that failed to build counts as one failure; one that
    Bazel skipped as incompatible with the platform as one skip;
  - a pytest suite contributes its JUnit XML's test cases.

Bazel caches passing tests; a cached test's test.log is still there from
the run that produced it and is read all the same, so the counts are
complete whether or not anything ran this time.

Where things are comes from Bazel's Build Event Protocol file
(--build_event_json_file): which targets are tests, their status, their
test.log files and the error messages of a failed build.

Prints the build errors (if any), skip reasons, a table of suites and, as
the very last line, "N passed, N failed, N skipped". Exits 1 if anything
failed, else 0.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

SUMMARY_RE = re.compile(
    r"^tessera-test-summary: passed=(\d+) failed=(\d+) skipped=(\d+)\s*$")
SKIPPED_RE = re.compile(r"^SKIPPED: (.*): (.*)$")
# Debian's /etc/bazel/bazelrc turns on --sandbox_debug, whose chatter we drop.
SANDBOX_NOISE_RE = re.compile(r"^\d+\.\d+: src/main/tools/")

# Bazel's exit codes (https://bazel.build/run/scripts#exit-codes).
BAZEL_OK, BAZEL_BUILD_FAILED, BAZEL_TESTS_FAILED, BAZEL_NO_TESTS = 0, 1, 3, 4


@dataclasses.dataclass
class Suite:
    name: str
    status: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float | None = None  # its run time (a cached Bazel test: that of the run cached)
    cached: bool = False
    # reason -> number of test cases skipped for it
    skip_reasons: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)


def uri_to_path(uri: str) -> str:
    if uri.startswith("file://"):
        return urllib.request.url2pathname(urllib.parse.urlparse(uri).path)
    return uri


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def parse_test_log(text: str):
    """(passed, failed, skipped) from the last summary line, or None; and
    the skip reasons."""
    counts = None
    reasons = collections.Counter()
    for line in text.splitlines():
        m = SUMMARY_RE.match(line)
        if m:
            counts = tuple(int(g) for g in m.groups())
            continue
        m = SKIPPED_RE.match(line)
        if m:
            reasons[m.group(2)] += 1
    return counts, reasons


# -- Bazel ------------------------------------------------------------------

class Bep:
    """What a Build Event Protocol JSON file says about the tests."""

    def __init__(self, path: str | None):
        self.tests: dict[str, str] = {}        # label -> rule kind
        self.completed: dict[str, str] = {}    # label -> ok | failed | reason
        self.summary_status: dict[str, str] = {}
        # label -> {(run, shard): (attempt, status, test.log path, seconds, cached)}
        self.results: dict[str, dict] = collections.defaultdict(dict)
        self.stderr: list[str] = []
        if path:
            self._read(path)

    def _read(self, path: str) -> None:
        text = read_text(path) or ""
        for line in text.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a file cut short by an interrupted build
            self._add(event)

    def _add(self, event: dict) -> None:
        eid = event.get("id", {})
        if "targetConfigured" in eid:
            conf = event.get("configured", {})
            kind = conf.get("targetKind", "")
            if "testSize" in conf or kind.endswith("_test rule"):
                self.tests[eid["targetConfigured"]["label"]] = kind
        elif "targetCompleted" in eid:
            label = eid["targetCompleted"]["label"]
            if "aborted" in event:
                self.completed[label] = event["aborted"].get("reason", "ABORTED")
            else:
                ok = event.get("completed", {}).get("success", False)
                self.completed[label] = "ok" if ok else "failed"
        elif "testResult" in eid:
            rid = eid["testResult"]
            res = event.get("testResult", {})
            log = next((uri_to_path(o["uri"])
                        for o in res.get("testActionOutput", [])
                        if o.get("name") == "test.log" and "uri" in o), None)
            key = (rid.get("run", 1), rid.get("shard", 1))
            attempt = rid.get("attempt", 1)
            known = self.results[rid["label"]].get(key)
            if known is None or attempt >= known[0]:  # last retry wins
                seconds = int(res.get("testAttemptDurationMillis", 0)) / 1000
                cached = bool(res.get("cachedLocally")) or bool(
                    res.get("executionInfo", {}).get("cachedRemotely"))
                self.results[rid["label"]][key] = (
                    attempt, res.get("status", "NO_STATUS"), log, seconds, cached)
        elif "testSummary" in eid:
            self.summary_status[eid["testSummary"]["label"]] = (
                event.get("testSummary", {}).get("overallStatus", "NO_STATUS"))
        elif "progress" in eid:
            err = event.get("progress", {}).get("stderr")
            if err:
                self.stderr.append(err)
        elif "aborted" in event and "targetCompleted" not in eid:
            # e.g. a pattern that failed to load
            desc = event["aborted"].get("description")
            if desc:
                self.stderr.append("ERROR: " + desc + "\n")


def fallback_log(testlogs: str | None, label: str) -> str | None:
    """bazel-testlogs/<pkg>/<target>/test.log for //pkg:target."""
    if not testlogs or not label.startswith("//"):
        return None
    pkg, _, name = label[2:].partition(":")
    return os.path.join(testlogs, pkg, name, "test.log")


def bazel_suites(bep: Bep, testlogs: str | None) -> list[Suite]:
    suites = []
    for label in sorted(bep.tests):
        results = bep.results.get(label, {})
        if not results:
            done = bep.completed.get(label)
            if done == "SKIPPED":  # incompatible with the target platform
                suite = Suite(label, "SKIPPED (incompatible)", skipped=1)
                suite.skip_reasons["incompatible with the platform"] += 1
            elif done == "ok":  # built, not run (e.g. interrupted)
                suite = Suite(label, bep.summary_status.get(label, "NO STATUS"),
                              failed=1)
            else:
                suite = Suite(label, "FAILED TO BUILD", failed=1)
            suites.append(suite)
            continue

        status = bep.summary_status.get(label)
        if status is None:
            statuses = {r[1] for r in results.values()}
            status = "PASSED" if statuses == {"PASSED"} else "FAILED"
        suite = Suite(label, status.replace("_", " "))
        # Shards run side by side; the longest is the suite's time.
        suite.seconds = max(r[3] for r in results.values())
        suite.cached = all(r[4] for r in results.values())
        for _attempt, run_status, log, _seconds, _cached in results.values():
            text = read_text(log) if log else None
            if text is None:
                text = read_text(fallback_log(testlogs, label) or "")
            counts, reasons = parse_test_log(text or "")
            if counts is None:
                if run_status == "PASSED":
                    suite.passed += 1
                else:
                    suite.failed += 1
                continue
            passed, failed, skipped = counts
            if run_status not in ("PASSED", "FLAKY") and failed == 0:
                failed = 1  # e.g. crashed after the run, or timed out
            suite.passed += passed
            suite.failed += failed
            suite.skipped += skipped
            suite.skip_reasons.update(reasons)
        suites.append(suite)
    return suites


def build_errors(bep: Bep, log_path: str | None, limit: int = 150) -> list[str]:
    """The ERROR blocks of Bazel's output, each once, without command lines
    and sandbox chatter."""
    text = "".join(bep.stderr)
    if not text and log_path:
        text = read_text(log_path) or ""
    blocks: list[list[str]] = []
    block: list[str] | None = None
    in_command = False
    for line in text.splitlines():
        if SANDBOX_NOISE_RE.match(line):
            continue
        if line.startswith("ERROR:"):
            block = [line]
            blocks.append(block)
            in_command = "error executing command" in line
            continue
        if re.match(r"^(INFO|WARNING|DEBUG|FAIL|Target |Executed |\[\d|//)", line):
            block = None
            continue
        if block is None:
            continue
        if in_command:  # "  (cd ... && \", "  exec env - \", ... ")"
            if not line.rstrip().endswith("\\"):
                in_command = False
            continue
        block.append(line)
    out: list[str] = []
    seen: set[str] = set()
    for b in blocks:
        # The same failure repeats for the pic and non-pic compile of a file.
        key = "\n".join(b[1:]) if len(b) > 1 else b[0]
        if key in seen:
            continue
        seen.add(key)
        out += b
    if len(out) > limit:
        out = out[:limit] + [f"... ({len(out) - limit} more lines)"]
    return out


# -- pytest -----------------------------------------------------------------

def pytest_suite(name: str, xml_path: str, rc: int) -> Suite:
    """A pytest run's JUnit XML; rc 5 means no tests were collected."""
    suite = Suite(name, "PASSED")
    root = None
    if os.path.exists(xml_path):
        try:
            root = ET.parse(xml_path).getroot()
        except ET.ParseError:
            root = None
    if root is not None:
        times = [float(ts.get("time", 0) or 0) for ts in root.iter("testsuite")]
        suite.seconds = sum(times) if times else None
        for case in root.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                suite.failed += 1
            elif case.find("skipped") is not None:
                suite.skipped += 1
                reason = case.find("skipped").get("message", "") or "skipped"
                suite.skip_reasons[reason] += 1
            else:
                suite.passed += 1
    if rc == 5:
        suite.status = "NO TESTS"
    elif rc != 0:
        suite.status = "FAILED"
        if suite.failed == 0:  # pytest failed before or outside the tests
            suite.failed = 1
    return suite


# -- Report -----------------------------------------------------------------

def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest:02d}s"


def format_time(suite: Suite) -> str:
    """The suite's run time; '(cached)' marks a Bazel result from an earlier run."""
    if suite.seconds is None:
        return "-"
    return format_seconds(suite.seconds) + (" (cached)" if suite.cached else "")


def print_report(suites: list[Suite], errors: list[str]) -> int:
    if errors:
        print()
        print("Bazel reported errors:")
        for line in errors:
            print("  " + line)

    skip_lines = []
    for s in suites:
        for reason, n in sorted(s.skip_reasons.items()):
            skip_lines.append(f"  {s.name}: {n} skipped: {reason}")
    if skip_lines:
        print()
        print("Skipped:")
        for line in skip_lines:
            print(line)

    print()
    width = max([len("suite")] + [len(s.name) for s in suites])
    swidth = max([len("status")] + [len(s.status) for s in suites])
    header = (f"{'suite':<{width}}  {'status':<{swidth}}  "
              f"{'passed':>6}  {'failed':>6}  {'skipped':>7}  {'time':>15}")
    print(header)
    print("-" * len(header))
    for s in suites:
        print(f"{s.name:<{width}}  {s.status:<{swidth}}  "
              f"{s.passed:>6}  {s.failed:>6}  {s.skipped:>7}  {format_time(s):>15}")
    if not suites:
        print("(no test suites)")
    print("-" * len(header))

    passed = sum(s.passed for s in suites)
    failed = sum(s.failed for s in suites)
    skipped = sum(s.skipped for s in suites)
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return 1 if failed else 0


def bazel_run(bep_path: str, exit_code: int, testlogs: str | None, log: str | None,
              label: str | None = None) -> tuple[list[Suite], list[str]]:
    """The suites and build errors of one `bazel test` run; with a label
    (a sanitizer config), each suite's name ends in " [label]"."""
    bep = Bep(bep_path)
    suites = bazel_suites(bep, testlogs)
    errors: list[str] = []
    if exit_code not in (BAZEL_OK, BAZEL_TESTS_FAILED, BAZEL_NO_TESTS):
        errors = build_errors(bep, log) or [f"bazel test exited with code {exit_code}"]
        # A failure that is not any test target's own (a library, a
        # binary, a BUILD file) still has to show in the counts.
        if not any(s.status == "FAILED TO BUILD" for s in suites):
            suites.append(Suite(f"bazel build (exit {exit_code})", "FAILED", failed=1))
    if label:
        for suite in suites:
            suite.name = f"{suite.name} [{label}]"
    return suites, errors


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bep", help="Bazel's --build_event_json_file")
    ap.add_argument("--bazel-exit", type=int, default=None,
                    help="bazel test's exit code (omit if Bazel did not run)")
    ap.add_argument("--bazel-log", help="Bazel's console output, if captured")
    ap.add_argument("--testlogs", help="bazel-testlogs, where BEP lacks a path")
    ap.add_argument("--extra-bazel", nargs=4, action="append", default=[],
                    metavar=("LABEL", "BEP", "EXIT_CODE", "TESTLOGS"),
                    help="another bazel test run (a sanitizer config): its suites count "
                         "too, named 'TARGET [LABEL]'")
    ap.add_argument("--pytest", nargs=3, action="append", default=[],
                    metavar=("NAME", "JUNIT_XML", "EXIT_CODE"),
                    help="a pytest suite's name, JUnit XML and exit code")
    args = ap.parse_args(argv)

    suites: list[Suite] = []
    errors: list[str] = []
    if args.bazel_exit is not None:
        run_suites, run_errors = bazel_run(args.bep, args.bazel_exit, args.testlogs,
                                           args.bazel_log)
        suites += run_suites
        errors += run_errors
    for label, bep_path, rc, testlogs in args.extra_bazel:
        run_suites, run_errors = bazel_run(bep_path, int(rc), testlogs, None, label)
        suites += run_suites
        errors += run_errors
    for name, xml_path, rc in args.pytest:
        suites.append(pytest_suite(name, xml_path, int(rc)))
    return print_report(suites, errors)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
