#!/usr/bin/env python3
"""Tessera's ops against PyTorch's CPU path, timed in the same run.

Runs the C++ benchmark binary //bench:ops_bench on the CPU device, then the
same benchmarks in torch on the same thread count with the same timing
method, and writes the ratios (ours over torch's throughput) with the
issue's goals. Each further device of --devices (default vulkan:0) gets the
same benchmarks and a table of its own: its figures next to the CPU
device's and torch's, reported and not judged (on this machine Vulkan is
lavapipe, a CPU driver). An absent device is noted and skipped.

    results/bench/ops.json   every figure, both sides
    results/bench/ops.md     a Markdown table (also printed)
    results/bench/ops.png    a bar chart of the ratios with their goals

A missed goal prints MISS and does not fail; an error (the binary failing,
an op raising on either side) exits 1. An op that tessera does not have yet
is shown "n/a" and does not fail either. See bench/README.md.

Usage: bench/compare_torch.py [--bin PATH] [--out DIR] [--threads N] [--rounds N]
                              [--devices vulkan:0,...]
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Must match ops_bench.cc: warm-up calls, then repeats of about this many
# seconds each; the figure is the median seconds per call over the repeats.
TARGET_REPEAT_SECONDS = 0.1
WARMUP_CALLS = 2
# One run of ops_bench takes about half a minute on 2 cores; a hang fails.
BINARY_TIMEOUT_SECONDS = 600

# name -> goal: the minimum ratio of tessera's throughput to torch's; None
# for rows shown for information (the kernels without the allocation of the
# result: out-of-place, torch's 64 MiB results come from glibc's mmap and
# pay page faults on every call, which the caching allocator avoids).
TORCH_GOALS = {
    "add_f32_16M": 0.9,
    "mul_f32_16M": 0.9,
    "add_out_f32_16M": None,
    "mul_out_f32_16M": None,
    "exp_f32_4M": 0.9,
    "log_f32_4M": 0.9,
    "gelu_f32_4M": 0.9,
    "gelu_tanh_f32_4M": 0.9,
    "silu_f32_4M": 0.9,
    "matmul_f32_512": 0.9,
    "matmul_f32_1024": 0.9,
    "matmul_f32_2048": 0.9,
    "sum_f32_4096x4096": 0.9,
    "sum_dim1_f32_4096x4096": 0.9,
    "softmax_f32_4096x4096": 0.9,
    "layer_norm_f32_4096x4096": 0.9,
    "conv2d_f32_resnet": 0.7,
}
# Elementwise ops must also reach this fraction of the run's memcpy
# bandwidth (bytes moved per second, reads plus writes).
MEMCPY_GOALS = {"add_f32_16M": 0.8, "mul_f32_16M": 0.8}


# -- torch side ---------------------------------------------------------------

def time_calls(fn, sync=lambda: None):
    """Seconds per call of fn, as ops_bench.cc's time_calls measures it;
    sync() closes each timed span (a device synchronize for a GPU)."""
    for _ in range(WARMUP_CALLS):
        fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-9)
    calls = min(max(round(TARGET_REPEAT_SECONDS / one), 1), 10000)
    repeats = 3 if one > 0.5 else 7
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        per_call.append((time.perf_counter() - t0) / calls)
    per_call.sort()
    return {"seconds": per_call[len(per_call) // 2], "min_seconds": per_call[0],
            "repeats": repeats, "calls_per_repeat": calls}


def torch_benchmarks(torch):
    """(name, unit, work, fn) for the torch side, same shapes as ops_bench."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float32)

    out = []
    n = 1 << 24
    src, dst = randn(n), torch.empty(n)
    out.append(("copy_f32_16M", "GB/s", 2.0 * 4 * n, lambda: dst.copy_(src)))
    a, b = randn(n), randn(n)
    out.append(("add_f32_16M", "GB/s", 3.0 * 4 * n, lambda: torch.add(a, b)))
    out.append(("mul_f32_16M", "GB/s", 3.0 * 4 * n, lambda: torch.mul(a, b)))
    c = torch.empty(n)
    out.append(("add_out_f32_16M", "GB/s", 3.0 * 4 * n, lambda: torch.add(a, b, out=c)))
    out.append(("mul_out_f32_16M", "GB/s", 3.0 * 4 * n, lambda: torch.mul(a, b, out=c)))
    n = 1 << 22
    t = randn(n)
    positive = t.abs() + 0.1
    out.append(("exp_f32_4M", "GB/s", 2.0 * 4 * n, lambda: torch.exp(t)))
    out.append(("log_f32_4M", "GB/s", 2.0 * 4 * n, lambda: torch.log(positive)))
    out.append(("gelu_f32_4M", "GB/s", 2.0 * 4 * n, lambda: F.gelu(t)))
    out.append(("gelu_tanh_f32_4M", "GB/s", 2.0 * 4 * n, lambda: F.gelu(t, approximate="tanh")))
    out.append(("silu_f32_4M", "GB/s", 2.0 * 4 * n, lambda: F.silu(t)))
    for m in (512, 1024, 2048):
        x, y = randn(m, m), randn(m, m)
        out.append((f"matmul_f32_{m}", "GFLOP/s", 2.0 * m ** 3,
                    lambda x=x, y=y: torch.matmul(x, y)))
    rows = cols = 4096
    x = randn(rows, cols)
    w, bias = randn(cols), randn(cols)
    elems = float(rows * cols)
    out.append(("sum_f32_4096x4096", "GB/s", 4.0 * elems, lambda: x.sum()))
    out.append(("sum_dim1_f32_4096x4096", "GB/s", 4.0 * (elems + rows), lambda: x.sum(1)))
    out.append(("softmax_f32_4096x4096", "GB/s", 8.0 * elems, lambda: torch.softmax(x, 1)))
    out.append(("layer_norm_f32_4096x4096", "GB/s", 8.0 * elems + 8.0 * cols,
                lambda: F.layer_norm(x, (cols,), w, bias, 1e-5)))
    N, C, K, H, W, R, S = 8, 64, 64, 56, 56, 3, 3
    inp, cw, cb = randn(N, C, H, W), randn(K, C, R, S), randn(K)
    out.append(("conv2d_f32_resnet", "GFLOP/s", 2.0 * N * K * C * R * S * H * W,
                lambda: F.conv2d(inp, cw, cb, 1, 1, 1, 1)))
    return out


def run_torch(threads):
    import torch

    torch.set_num_threads(threads)
    results = {}
    with torch.inference_mode():
        for name, unit, work, fn in torch_benchmarks(torch):
            try:
                t = time_calls(fn)
                t.update(status="ok", unit=unit, work=work,
                         throughput=work / t["seconds"] / 1e9)
                print(f"  {name:<26} {t['seconds'] * 1e3:10.3f} ms "
                      f"{t['throughput']:9.2f} {unit}", flush=True)
            except Exception as e:  # reported as an error row, exit 1
                t = {"status": "error", "unit": unit, "work": work, "error": repr(e)}
                print(f"  {name:<26} error: {e!r}", flush=True)
            results[name] = t
    return results, torch.__version__, torch.get_num_threads()


# -- tessera side -------------------------------------------------------------

def run_tessera(binary, threads, device="cpu"):
    env = dict(os.environ, TESSERA_NUM_THREADS=str(threads))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ops_bench.json"
        env["TESSERA_BENCH_JSON"] = str(path)
        # Its table goes straight to our stdout, as progress.
        try:
            proc = subprocess.run([str(binary), "--device", device], env=env,
                                  timeout=BINARY_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{binary} ran past {BINARY_TIMEOUT_SECONDS} s") from None
        if not path.exists():
            raise RuntimeError(f"{binary} exited {proc.returncode} without writing JSON")
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        doc = json.loads(lines[-1])
    # An op that threw is a per-row error (reported below); any other
    # non-zero exit is the harness failing.
    if proc.returncode != 0 and not any(r["status"] == "error" for r in doc["results"]):
        raise RuntimeError(f"{binary} exited {proc.returncode}")
    return doc


def better(old, new):
    """The result to keep of two rounds: an error sticks, else the faster."""
    if old is None:
        return new
    if "error" in (old["status"], new["status"]):
        return old if old["status"] == "error" else new
    if new["status"] == "ok" and (old["status"] != "ok" or new["seconds"] < old["seconds"]):
        return new
    return old


def merge_round(kept, doc):
    """Keeps each benchmark's better result of two rounds of one device."""
    if kept is None:
        return doc
    merged = {r["name"]: r for r in kept["results"]}
    for r in doc["results"]:
        merged[r["name"]] = better(merged.get(r["name"]), r)
    kept["results"] = list(merged.values())
    return kept


def run_rounds(binary, threads, rounds, devices):
    """Alternates the sides `rounds` times and keeps each benchmark's
    fastest round, so that a burst of load from other processes on a shared
    machine (which hits one side's run, not the other's) is less likely to
    decide a ratio. Returns the CPU device's results, the other devices'
    (by device, absent ones included), torch's."""
    ours, others, theirs = None, {}, {}
    for i in range(1, rounds + 1):
        print(f"[round {i}/{rounds}] tessera cpu: {binary}", flush=True)
        ours = merge_round(ours, run_tessera(binary, threads))
        for device in devices:
            if others.get(device, {}).get("status") == "absent":
                continue
            print(f"[round {i}/{rounds}] tessera {device}: {binary}", flush=True)
            others[device] = merge_round(others.get(device), run_tessera(binary, threads, device))
        print(f"[round {i}/{rounds}] torch, {threads} thread(s)", flush=True)
        results, version, torch_threads = run_torch(threads)
        for name, r in results.items():
            theirs[name] = better(theirs.get(name), r)
    return ours, others, theirs, version, torch_threads


# -- comparison ---------------------------------------------------------------

def fmt_side(r):
    if r is None:
        return "-"
    if r["status"] != "ok":
        return r["status"]
    return f"{r['throughput']:.1f} {r['unit']} ({r['seconds'] * 1e3:.2f} ms)"


def compare(ours, theirs):
    """Rows of the table: one per goal, plus the memcpy reference."""
    by_name = {r["name"]: r for r in ours["results"]}
    memcpys = [r for n, r in by_name.items() if n.startswith("memcpy") and r["status"] == "ok"]
    best_memcpy = max(memcpys, key=lambda r: r["throughput"]) if memcpys else None
    rows = []
    if best_memcpy is not None:
        torch_copy = theirs.get("copy_f32_16M")
        ratio = (best_memcpy["throughput"] / torch_copy["throughput"]
                 if torch_copy and torch_copy["status"] == "ok" else None)
        rows.append(dict(benchmark=f"{best_memcpy['name']} (vs torch copy_)",
                         shape=best_memcpy["shape"], tessera=fmt_side(best_memcpy),
                         torch=fmt_side(torch_copy), ratio=ratio, goal=None, status="info"))
    for name, goal in TORCH_GOALS.items():
        mine, ref = by_name.get(name), theirs.get(name)
        row = dict(benchmark=name, shape=(mine or {}).get("shape", ""), tessera=fmt_side(mine),
                   torch=fmt_side(ref), ratio=None, goal=goal)
        if mine is None or ref is None:
            row["status"] = "ERROR"
            row["error"] = "missing from " + ("ops_bench" if mine is None else "torch")
        elif mine["status"] == "not available":
            row["status"] = "n/a"
        elif mine["status"] != "ok" or ref["status"] != "ok":
            row["status"] = "ERROR"
            row["error"] = mine.get("error") or ref.get("error")
        else:
            row["ratio"] = mine["throughput"] / ref["throughput"]
            if goal is None:
                row["status"] = "info"
            else:
                row["status"] = "ok" if row["ratio"] >= goal else "MISS"
        rows.append(row)
        if name in MEMCPY_GOALS:
            mgoal = MEMCPY_GOALS[name]
            mrow = dict(benchmark=f"{name} vs memcpy", shape=row["shape"],
                        tessera=row["tessera"], torch="memcpy " + fmt_side(best_memcpy),
                        ratio=None, goal=mgoal)
            if row["status"] == "ERROR" or best_memcpy is None:
                mrow["status"] = "ERROR"
                mrow["error"] = row.get("error") or "no memcpy figure"
            elif mine["status"] != "ok":
                mrow["status"] = "n/a"
            else:
                mrow["ratio"] = mine["throughput"] / best_memcpy["throughput"]
                mrow["status"] = "ok" if mrow["ratio"] >= mgoal else "MISS"
            rows.append(mrow)
    return rows


def compare_device(doc, cpu, theirs):
    """Rows for a non-CPU device: its figure, the CPU device's and torch's,
    and the ratios to both. No goals: reported, not judged."""
    cpu_by_name = {r["name"]: r for r in cpu["results"]}
    rows = []
    for r in doc["results"]:
        name = r["name"]
        ref = theirs.get("copy_f32_16M" if name == "memcpy_device" else name)
        mine_cpu = cpu_by_name.get(name)
        row = dict(benchmark=name, shape=r.get("shape", ""), device=fmt_side(r),
                   cpu=fmt_side(mine_cpu), torch=fmt_side(ref), vs_torch=None, vs_cpu=None,
                   status=r["status"] if r["status"] != "ok" else "info")
        if r["status"] == "error":
            row["status"] = "ERROR"
            row["error"] = r.get("error")
        if r["status"] == "ok":
            if ref and ref["status"] == "ok":
                row["vs_torch"] = r["throughput"] / ref["throughput"]
            if mine_cpu and mine_cpu["status"] == "ok":
                row["vs_cpu"] = r["throughput"] / mine_cpu["throughput"]
        rows.append(row)
    return rows


def device_markdown(device, doc, rows):
    if doc.get("status") == "absent":
        return f"\n### tessera {device}\n\nNo such device on this machine: not run.\n"
    out = ["", f"### tessera {device} ({doc['device']})", "",
           "Reported, not judged. memcpy_device is a device-to-device copy_ (torch: CPU copy_).",
           "",
           f"| benchmark | shape | tessera {device} | tessera cpu | torch cpu | "
           f"/ torch | / tessera cpu |",
           "|---|---|---|---|---|---:|---:|"]
    for r in rows:
        vt = f"{r['vs_torch']:.2f}" if r["vs_torch"] is not None else "-"
        vc = f"{r['vs_cpu']:.2f}" if r["vs_cpu"] is not None else "-"
        out.append(f"| {r['benchmark']} | {r['shape']} | {r['device']} | {r['cpu']} | "
                   f"{r['torch']} | {vt} | {vc} |")
    out.extend(f"- {r['benchmark']}: {r['error']}" for r in rows if r.get("error"))
    return "\n".join(out) + "\n"


def markdown(rows, header):
    out = [header, "",
           "| benchmark | shape | tessera | torch | ratio | goal | result |",
           "|---|---|---|---|---:|---:|---|"]
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        goal = f">= {r['goal']}" if r["goal"] is not None else "-"
        out.append(f"| {r['benchmark']} | {r['shape']} | {r['tessera']} | {r['torch']} | "
                   f"{ratio} | {goal} | {r['status']} |")
    errors = [r for r in rows if r.get("error")]
    if errors:
        out.append("")
        out.extend(f"- {r['benchmark']}: {r['error']}" for r in errors)
    return "\n".join(out) + "\n"


def plot(rows, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r["goal"] is not None or r["ratio"] is not None]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(shown) + 1.5))
    colors = {"ok": "tab:green", "MISS": "tab:red"}
    for i, r in enumerate(shown):
        value = r["ratio"] if r["ratio"] is not None else 0.0
        ax.barh(i, value, color=colors.get(r["status"], "lightgray"))
        if r["goal"] is not None:
            ax.plot([r["goal"], r["goal"]], [i - 0.4, i + 0.4], color="black", linewidth=2)
        label = f"{value:.2f}" if r["ratio"] is not None else r["status"]
        ax.text(value + 0.01, i, label, va="center", fontsize=8)
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([r["benchmark"] for r in shown], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel("tessera / torch throughput (vs memcpy rows: / memcpy bandwidth); "
                  "black tick = goal")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def default_threads():
    env = os.environ.get("TESSERA_NUM_THREADS")
    if env:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=Path, default=ROOT / "bazel-bin" / "bench" / "ops_bench",
                   help="the ops_bench binary (default: bazel-bin/bench/ops_bench)")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "bench",
                   help="folder for ops.json, ops.md, ops.png")
    p.add_argument("--threads", type=int, default=default_threads(),
                   help="threads for both sides (default: TESSERA_NUM_THREADS or the cores)")
    p.add_argument("--rounds", type=int, default=2,
                   help="alternate the two sides this many times, keep each one's best")
    p.add_argument("--devices", default="vulkan:0",
                   help="further tessera devices to time, comma-separated ('' for none)")
    args = p.parse_args()
    if not args.bin.exists():
        sys.exit(f"compare_torch: {args.bin} not found; bazel build //bench:ops_bench first")
    if args.threads < 1 or args.rounds < 1:
        sys.exit("compare_torch: --threads and --rounds must be at least 1")

    try:
        devices = [d for d in args.devices.split(",") if d.strip()]
        ours, others, theirs, torch_version, torch_threads = run_rounds(
            args.bin, args.threads, args.rounds, devices)
    except (RuntimeError, OSError, ValueError, KeyError) as e:  # the harness itself failed
        print(f"compare_torch: error: {e}", file=sys.stderr)
        return 1
    if ours["threads"] != args.threads or torch_threads != args.threads:
        print(f"warning: thread counts differ: asked {args.threads}, tessera used "
              f"{ours['threads']}, torch {torch_threads}", flush=True)

    rows = compare(ours, theirs)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"Tessera vs torch {torch_version} on {ours['device']}; "
              f"threads: tessera {ours['threads']}, torch {torch_threads}; {stamp}. "
              "ratio = tessera / torch throughput (vs memcpy rows: / best memcpy bandwidth "
              f"of the run); median of repeats, best of {args.rounds} alternating rounds.")
    table = markdown(rows, header)
    device_rows = {}
    for device, doc in others.items():
        device_rows[device] = [] if doc.get("status") == "absent" else compare_device(doc, ours,
                                                                                       theirs)
        table += device_markdown(device, doc, device_rows[device])

    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"bench": "ops_vs_torch", "date": stamp, "host": platform.node(),
           "threads": args.threads, "torch_version": torch_version,
           "timing": {"warmup_calls": WARMUP_CALLS, "rounds": args.rounds,
                      "target_repeat_seconds": TARGET_REPEAT_SECONDS,
                      "statistic": "median seconds per call over repeats"},
           "rows": rows, "tessera": ours, "torch": theirs,
           "devices": {d: {"tessera": others[d], "rows": device_rows[d]} for d in others}}
    (args.out / "ops.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "ops.md").write_text(table)
    plot(rows, args.out / "ops.png", header.split(";")[0])
    print()
    print(table, end="")
    missed = sum(r["status"] == "MISS" for r in rows)
    absent = sum(r["status"] == "n/a" for r in rows)
    errors = sum(r["status"] == "ERROR" for r in rows)
    errors += sum(r["status"] == "ERROR" for d in device_rows.values() for r in d)
    print(f"\n{len(rows)} rows: {missed} goal(s) missed, {absent} not available, "
          f"{errors} error(s); written to {args.out}/ops.{{json,md,png}}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
