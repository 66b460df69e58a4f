#!/usr/bin/env python3
"""How complete a device is: `./dev device-report NAME`.

Runs, for the device type NAME (cpu, vulkan, cuda, template, or a new one):
  - the conformance suite on NAME:0, with TESSERA_CONFORMANCE_REPORT, which
    records every op x dtype as native (the device's own kernels), host (a
    CPU fallback or a kernel's host staging ran) or failing;
  - the device's own tests (tests/devices:NAME_device*_test), through
    Bazel, if there are any;
  - ops_bench's cpu suite on NAME:0 and on cpu:0, for each row's throughput
    against the CPU device (skipped with --no-bench, and for NAME = cpu).
Prints a summary and a per-op table, and writes them to
results/device-report/NAME.md (and the raw JSON beside it).

Run it through ./dev (which installs what the build needs first); the
binaries must have been built (./dev builds them before calling this).
Exit status: 0 when everything that ran passed (host rows are not
failures: they are the work left), 1 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"tessera-test-summary: passed=(\d+) failed=(\d+) skipped=(\d+)")


def run(cmd, env=None, timeout=3600):
    print("[device-report] " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run(cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def counts(output):
    found = SUMMARY.findall(output)
    if not found:
        return None
    passed, failed, skipped = map(int, found[-1])
    return {"passed": passed, "failed": failed, "skipped": skipped}


def conformance(binary, device, cases, work):
    """Per op: {dtype: (status, host kernels)}; the test counts; failing cases."""
    if not binary.exists():
        sys.exit(f"device-report: {binary} not found: is '{device}' listed in "
                 "tests/conformance/BUILD and conformance.h?")
    report, junit = work / "coverage.json", work / "junit.xml"
    result = run([binary, cases or f"{device}: *", "-r", "junit", "-o", junit],
                 env={"TESSERA_CONFORMANCE_REPORT": str(report)})
    ops = defaultdict(dict)
    if report.exists():
        data = json.loads(report.read_text())
        for combos in data["devices"].values():
            for c in combos:
                ops[c["op"]][c["dtype"]] = (c["status"], c["host_kernels"])
    # The counts from catch_main's summary line (it knows skipped cases,
    # which Catch's reports count as passed); the failing names from JUnit.
    tests = counts(result.stdout + result.stderr) or {"passed": 0, "failed": 0, "skipped": 0}
    failing_cases = []
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failing_cases.append(case.get("name", ""))
    return ops, tests, failing_cases, result.returncode


def device_tests(device):
    """The device's test targets in tests/devices/BUILD (NAME_device*_test),
    run by Bazel so that each gets the arguments and environment its BUILD
    gives it; their counts summed."""
    build = ROOT / "tests" / "devices" / "BUILD"
    if not build.exists():  # e.g. run from Bazel's runfiles
        return None
    names = re.findall(rf'name = "({re.escape(device)}_device\w*_test)"', build.read_text())
    if not names:
        return None
    targets = [f"//tests/devices:{n}" for n in names]
    result = run(["bazel", "test", "--curses=no", "--noshow_progress", *targets])
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for name in names:
        log = ROOT / "bazel-testlogs" / "tests" / "devices" / name / "test.log"
        found = counts(log.read_text(errors="replace")) if log.exists() else None
        if found is None:
            return {"error": f"{name}: no test summary (bazel test exited {result.returncode})"}
        for key in total:
            total[key] += found[key]
    return total


def bench(bin_dir, device, work):
    """{row: (throughput on the device, on cpu:0, unit)}."""
    binary = bin_dir / "bench" / "ops_bench"
    rows = {}
    for dev in (f"{device}:0", "cpu:0"):
        out = work / f"bench_{dev.replace(':', '_')}.json"
        result = run([binary, "--device", dev, "--suite", "cpu"],
                     env={"TESSERA_BENCH_JSON": str(out)})
        if result.returncode != 0 or not out.exists():
            print(result.stdout[-2000:] + result.stderr[-2000:])
            return None
        for r in json.loads(out.read_text())["results"]:
            if r.get("status") == "ok":
                rows.setdefault(r["name"], {})[dev] = (r["throughput"], r["unit"])
    return {name: (v[f"{device}:0"][0], v["cpu:0"][0], v["cpu:0"][1])
            for name, v in rows.items() if f"{device}:0" in v and "cpu:0" in v}


def markdown(device, ops, tests, failing_cases, own_tests, bench_rows):
    statuses = [s for dtypes in ops.values() for s, _ in dtypes.values()]
    native, host, failing = (statuses.count(k) for k in ("native", "host", "failing"))
    total = len(statuses)
    lines = [f"# Device report: {device}", ""]
    lines.append(f"- conformance cases: {tests['passed']} passed, {tests['failed']} failed, "
                 f"{tests['skipped']} skipped")
    if total:
        lines.append(f"- op x dtype combinations: {total}: **{native} native** "
                     f"({100.0 * native / total:.1f}%), {host} through the host, "
                     f"{failing} failing")
    if failing_cases:
        lines.append("- failing conformance cases: " + ", ".join(failing_cases))
    if own_tests is None:
        lines.append(f"- device tests: none (no //tests/devices:{device}_device*_test)")
    else:
        lines.append("- device tests: " + ", ".join(f"{v} {k}" for k, v in own_tests.items()))
    lines += ["", "## Ops", "", "| op | native | through the host (kernels) | failing |",
              "|---|---|---|---|"]
    for op in sorted(ops):
        by = defaultdict(list)
        kernels = set()
        for dtype, (status, k) in ops[op].items():
            by[status].append(dtype)
            if k:
                kernels.update(k.split(","))
        host_cell = " ".join(by["host"]) + (f" ({', '.join(sorted(kernels))})" if kernels else "")
        lines.append(f"| {op} | {' '.join(by['native'])} | {host_cell} | "
                     f"{' '.join(by['failing'])} |")
    if bench_rows:
        lines += ["", f"## ops_bench (cpu suite): {device}:0 against cpu:0", "",
                  "| benchmark | unit | " + device + " | cpu | ratio |", "|---|---|---:|---:|---:|"]
        for name, (mine, cpu, unit) in bench_rows.items():
            lines.append(f"| {name} | {unit} | {mine:.4g} | {cpu:.4g} | {mine / cpu:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", help="device type name (cpu, vulkan, cuda, template, ...)")
    parser.add_argument("--bin", type=Path, default=ROOT / "bazel-bin",
                        help="Bazel's output folder (default: bazel-bin)")
    parser.add_argument("--no-bench", action="store_true", help="skip the benchmark ratios")
    parser.add_argument("--cases", help="a Catch test spec: only these conformance cases "
                        "(default: every case of the device)")
    parser.add_argument("--conformance", type=Path,
                        help="the conformance binary (default: under --bin)")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "results" / "device-report",
                        help="where NAME.md and NAME.json go")
    args = parser.parse_args()
    device = args.device
    out_dir = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = args.conformance or args.bin / "tests" / "conformance" / f"conformance_{device}_test"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ops, tests, failing_cases, rc = conformance(binary, device, args.cases, work)
        own = device_tests(device)
        rows = None if args.no_bench or device == "cpu" else bench(args.bin, device, work)
    text = markdown(device, ops, tests, failing_cases, own, rows)
    (out_dir / f"{device}.md").write_text(text)
    (out_dir / f"{device}.json").write_text(json.dumps(
        {"device": device, "conformance": tests, "failing_cases": failing_cases,
         "ops": {op: {d: list(v) for d, v in dtypes.items()} for op, dtypes in ops.items()},
         "device_tests": own,
         "bench": {k: list(v) for k, v in (rows or {}).items()}}, indent=1))
    print(text)
    print(f"[device-report] written to {out_dir / (device + '.md')}")
    if tests["passed"] + tests["failed"] == 0:
        print(f"[device-report] no conformance case ran on {device}: is the device present?")
        return 1
    ok = rc == 0 and tests["failed"] == 0 and not (own or {}).get("failed") and \
        "error" not in (own or {})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
