"""The tessera Python module (bindings/) against PyTorch, NumPy and the C++
runtime, in one run; the goals come from the Python-module issue:

  add_1elem_overhead  x + y on one-element f32 tensors on cpu:0: the fixed
                      cost of one op through pybind11 and the runtime front
                      end. Median seconds per op; ratio = tessera time /
                      torch.add's (CPU), goal <= 1.0; NumPy's time beside.
  numpy_round_trip    tessera.from_numpy(a) then .numpy() of 64 MiB against
                      the same of 64 KiB: no copy means the time does not
                      grow with the size; ratio = 64 MiB time / 64 KiB
                      time, goal <= 2.0.
  python_vs_cpp       large ops from Python (add, mul of 16M floats; a 1024
                      matmul; a row sum of 4096 x 4096) against the same rows
                      of the C++ ops_bench binary on cpu:0, run by this script;
                      ratio = Python time / C++ time, goal <= 1.05.

Writes one JSON line to $TESSERA_BENCH_JSON (default
results/bench/bench_bindings.json) and bindings.md beside it. A missed goal
prints MISS; the exit status is non-zero only when a row could not run.
"""

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
try:
    import tessera
except ImportError:  # not installed: the in-tree package with its built extension
    sys.path.insert(0, str(ROOT / "bindings"))
    import tessera


def timed(fn, calls, repeats, warmup=None):
    """Sorted seconds per call, one figure per repeat."""
    for _ in range(warmup if warmup is not None else calls):
        fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls)
    return sorted(out)


def interleaved(sides, calls, repeats):
    """{name: sorted seconds per call}; the sides take turns repeat by repeat."""
    for fn in sides.values():
        for _ in range(calls):
            fn()
    per = {name: [] for name in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            per[name].append((time.perf_counter() - t0) / calls)
    return {name: sorted(v) for name, v in per.items()}


def add_overhead():
    x, y = tessera.ones(1), tessera.ones(1)
    a, b = np.ones(1, np.float32), np.ones(1, np.float32)
    sides = {"tessera": lambda: x + y, "numpy": lambda: a + b}
    try:
        import torch

        torch.set_num_threads(2)
        tx, ty = torch.ones(1), torch.ones(1)
        sides["torch"] = lambda: torch.add(tx, ty)
    except ImportError:
        pass
    times = interleaved(sides, calls=2000, repeats=51)
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    row = {"benchmark": "add_1elem_overhead", "measure": "us per op", "tessera": med["tessera"],
           "numpy": med["numpy"], "goal": "<= 1.0"}
    if "torch" in med:
        row.update(torch=med["torch"], ratio=med["tessera"] / med["torch"])
        row["met"] = row["ratio"] <= 1.0
    return row


def numpy_round_trip():
    def once(array):
        t = tessera.from_numpy(array)
        back = t.numpy()
        assert np.shares_memory(back, array)

    small = np.ones(64 * 1024 // 4, np.float32)
    large = np.ones(64 * 1024 * 1024 // 4, np.float32)
    times = interleaved({"64KiB": lambda: once(small), "64MiB": lambda: once(large)},
                        calls=200, repeats=21)
    s, lg = (statistics.median(times[k]) * 1e6 for k in ("64KiB", "64MiB"))
    ratio = lg / s
    return {"benchmark": "numpy_round_trip", "measure": "us per round trip", "64KiB": s,
            "64MiB": lg, "ratio": ratio, "goal": "<= 2.0", "met": ratio <= 2.0}


def cpp_rows():
    """ops_bench's cpu suite on cpu:0: {row name: median seconds}."""
    bin_dir = Path(os.environ.get("TESSERA_BAZEL_BIN", ROOT / "bazel-bin"))
    exe = bin_dir / "bench" / "ops_bench"
    if not exe.exists():
        raise FileNotFoundError(f"{exe} is not built (bazel build //bench:ops_bench)")
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        env = dict(os.environ, TESSERA_BENCH_JSON=f.name)
        subprocess.run([str(exe), "--device", "cpu:0", "--suite", "cpu"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        doc = json.loads(Path(f.name).read_text().splitlines()[-1])
    return {r["name"]: r["seconds"] for r in doc["results"] if r.get("status") == "ok"}


def python_vs_cpp():
    cpp = cpp_rows()
    g = tessera.Generator(0)
    n = 1 << 24
    a, b = tessera.randn(n, generator=g), tessera.randn(n, generator=g)
    m1, m2 = tessera.randn(1024, 1024, generator=g), tessera.randn(1024, 1024, generator=g)
    x = tessera.randn(4096, 4096, generator=g)
    cases = {
        "add_f32_16M": (lambda: a + b, 10),
        "mul_f32_16M": (lambda: a * b, 10),
        "matmul_f32_1024": (lambda: m1 @ m2, 5),
        "sum_f32_4096x4096": (lambda: x.sum(), 10),
    }
    rows = []
    for name, (fn, calls) in cases.items():
        if name not in cpp:
            continue
        py = statistics.median(timed(fn, calls=calls, repeats=7, warmup=2))
        ratio = py / cpp[name]
        rows.append({"benchmark": f"python_vs_cpp {name}", "measure": "ms per call",
                     "python": py * 1e3, "cpp": cpp[name] * 1e3, "ratio": ratio,
                     "goal": "<= 1.05", "met": ratio <= 1.05})
    return rows


def table(rows):
    lines = ["| benchmark | measure | tessera / Python | reference | ratio | goal | result |",
             "|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        if r["benchmark"] == "add_1elem_overhead":
            ours, ref = r["tessera"], r.get("torch", float("nan"))
            ref_text = f"{ref:.3f} (torch), {r['numpy']:.3f} (numpy)"
        elif r["benchmark"] == "numpy_round_trip":
            ours, ref_text = r["64MiB"], f"{r['64KiB']:.3f} (64 KiB)"
        else:
            ours, ref_text = r["python"], f"{r['cpp']:.3f} (C++)"
        ratio = r.get("ratio")
        result = "" if ratio is None else ("met" if r["met"] else "MISS")
        lines.append(f"| {r['benchmark']} | {r['measure']} | {ours:.3f} | {ref_text} | "
                     f"{'' if ratio is None else f'{ratio:.3f}'} | {r['goal']} | {result} |")
    return "\n".join(lines)


def main():
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows, failed = [], 0
    for make in (add_overhead, numpy_round_trip, python_vs_cpp):
        try:
            made = make()
            rows.extend(made if isinstance(made, list) else [made])
        except Exception as e:  # noqa: BLE001 - reported, and the exit status says so
            failed += 1
            print(f"bench_bindings: {make.__name__} failed: {e}", file=sys.stderr)
    text = (f"tessera module on {tessera.get_device_properties('cpu')['name']}; {stamp}\n\n"
            + table(rows))
    print(text)
    json_path = Path(os.environ.get("TESSERA_BENCH_JSON",
                                    ROOT / "results" / "bench" / "bench_bindings.json"))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    with open(json_path, "a") as f:
        f.write(json.dumps({"bench": "bindings", "date": stamp, "host": platform.node(),
                            "rows": rows}) + "\n")
    (json_path.parent / "bindings.md").write_text(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
