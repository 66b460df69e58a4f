#!/usr/bin/env python3
"""Tessera's CUDA device against torch.cuda, timed in the same run on one GPU.

Runs //bench:ops_bench --device cuda:N (its "gpu" suite of shapes), then the
same benchmarks through torch on the same GPU with the same timing method
(warm-up, then the median over repeats of the seconds per call, each repeat
ending with a synchronize), alternating the two sides --rounds times and
keeping each benchmark's best round. Writes, with the CUDA issue's goals:

    OUT/gpu_ops.json   every figure, both sides
    OUT/gpu_ops.md     a Markdown table (also printed)

Float32 GEMMs and convolutions compare like with like: TF32 off on both
sides (torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32 False),
except the matmul_tf32 row, where both sides allow it.

A missed goal prints MISS and does not fail; an error (the binary failing,
an op raising on either side) exits 1; no CUDA device on either side exits
2 after writing what it has.

Usage: bench/compare_torch_gpu.py [--bin PATH] [--out DIR] [--device cuda:0]
                                  [--rounds N]
"""

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_torch  # noqa: E402  (the shared timing, rounds and JSON reading)

ROOT = Path(__file__).resolve().parent.parent

# name -> minimum ratio of tessera's throughput to torch's (the CUDA issue's
# performance section); None: shown, not judged.
TORCH_GOALS = {
    "add_f32_16M": 0.95,
    "mul_f32_16M": 0.95,
    "add_f32_256M": 0.95,
    "mul_f32_256M": 0.95,
    "sum_f32_8192x8192": 1.0,
    "sum_dim1_f32_8192x8192": 1.0,
    "softmax_f32_8192x8192": 1.0,
    "layer_norm_f32_8192x8192": 1.0,
    "softmax_f32_32768x1024": 1.0,
    "layer_norm_f32_32768x1024": 1.0,
    "matmul_f32_4096": 0.95,
    "matmul_tf32_4096": 0.95,
    "matmul_f16_4096": 0.95,
    "matmul_bf16_4096": 0.95,
    "conv2d_f32_resnet_b32": 0.8,
    "add_latency_1": None,
    "copy_h2d_pinned_64M": None,
    "copy_d2h_pinned_64M": None,
}
# Elementwise ops against the run's device-to-device copy bandwidth.
MEMCPY_GOALS = {"add_f32_16M": 0.85, "mul_f32_16M": 0.85,
                "add_f32_256M": 0.85, "mul_f32_256M": 0.85}
# The launch overhead of a 1-element add, asynchronous: at most this.
LATENCY_GOAL_US = 5.0


def torch_benchmarks(torch, device):
    """(name, unit, work, fn, setup) for torch; setup runs before timing."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float32).to(device)

    def precision(tf32):
        def setup():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        return setup

    fp32 = precision(False)
    out = []
    n = 1 << 24
    src, dst = randn(n), torch.empty(n, device=device)
    out.append(("memcpy_device", "GB/s", 2.0 * 4 * n, lambda: dst.copy_(src), fp32))
    for n, tag in ((1 << 24, "16M"), (1 << 28, "256M")):
        a, b = randn(n), randn(n)
        if tag == "256M":
            big = torch.empty(n, device=device)
            out.append(("memcpy_device_256M", "GB/s", 2.0 * 4 * n,
                        lambda big=big, a=a: big.copy_(a), fp32))
        out.append((f"add_f32_{tag}", "GB/s", 3.0 * 4 * n, lambda a=a, b=b: torch.add(a, b), fp32))
        out.append((f"mul_f32_{tag}", "GB/s", 3.0 * 4 * n, lambda a=a, b=b: torch.mul(a, b), fp32))
    for rows, cols in ((8192, 8192), (32768, 1024)):
        x, w, bias = randn(rows, cols), randn(cols), randn(cols)
        elems = float(rows * cols)
        tag = f"{rows}x{cols}"
        if rows == 8192:
            out.append((f"sum_f32_{tag}", "GB/s", 4.0 * elems, lambda x=x: x.sum(), fp32))
            out.append((f"sum_dim1_f32_{tag}", "GB/s", 4.0 * (elems + rows),
                        lambda x=x: x.sum(1), fp32))
        out.append((f"softmax_f32_{tag}", "GB/s", 8.0 * elems,
                    lambda x=x: torch.softmax(x, 1), fp32))
        out.append((f"layer_norm_f32_{tag}", "GB/s", 8.0 * elems + 8.0 * cols,
                    lambda x=x, w=w, bias=bias, cols=cols: F.layer_norm(x, (cols,), w, bias, 1e-5),
                    fp32))
    m = 4096
    a, b = randn(m, m), randn(m, m)
    flops = 2.0 * m ** 3
    out.append(("matmul_f32_4096", "GFLOP/s", flops, lambda: torch.matmul(a, b), fp32))
    out.append(("matmul_tf32_4096", "GFLOP/s", flops, lambda: torch.matmul(a, b),
                precision(True)))
    for dtype, tag in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        ah, bh = a.to(dtype), b.to(dtype)
        out.append((f"matmul_{tag}_4096", "GFLOP/s", flops,
                    lambda ah=ah, bh=bh: torch.matmul(ah, bh), fp32))
    N, C, K, H, W, R, S = 32, 64, 64, 56, 56, 3, 3
    inp, cw, cb = randn(N, C, H, W), randn(K, C, R, S), randn(K)
    out.append(("conv2d_f32_resnet_b32", "GFLOP/s", 2.0 * N * K * C * R * S * H * W,
                lambda: F.conv2d(inp, cw, cb, 1, 1, 1, 1), fp32))
    n = 1 << 24
    pinned, on_device = torch.randn(n, generator=g).pin_memory(), torch.empty(n, device=device)
    out.append(("copy_h2d_pinned_64M", "GB/s", 4.0 * n,
                lambda: on_device.copy_(pinned, non_blocking=True), fp32))
    out.append(("copy_d2h_pinned_64M", "GB/s", 4.0 * n,
                lambda: pinned.copy_(on_device, non_blocking=True), fp32))
    one_a, one_b = randn(1), randn(1)
    out.append(("add_latency_1", "Gcall/s", 1.0, lambda: torch.add(one_a, one_b), fp32))
    return out


def run_torch(device):
    import torch

    results = {}
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    with torch.inference_mode():
        for name, unit, work, fn, setup in torch_benchmarks(torch, device):
            setup()
            try:
                t = compare_torch.time_calls(fn, torch.cuda.synchronize)
                t.update(status="ok", unit=unit, work=work, throughput=work / t["seconds"] / 1e9)
                print(f"  {name:<28} {t['seconds'] * 1e3:10.4f} ms "
                      f"{t['throughput']:10.2f} {unit}", flush=True)
            except Exception as e:  # an error row, exit 1
                t = {"status": "error", "unit": unit, "work": work, "error": repr(e)}
                print(f"  {name:<28} error: {e!r}", flush=True)
            results[name] = t
        torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    return results, torch.__version__, torch.cuda.get_device_name(device)


def compare(ours, theirs, torch_goals=None, memcpy_goals=None, latency_goal_us=LATENCY_GOAL_US):
    """The table's rows for one device's ops_bench JSON (ours) against torch's
    results by name (theirs), judged by the given goals (default: the CUDA
    device's)."""
    torch_goals = TORCH_GOALS if torch_goals is None else torch_goals
    memcpy_goals = MEMCPY_GOALS if memcpy_goals is None else memcpy_goals
    by_name = {r["name"]: r for r in ours["results"]}
    copies = [r for n, r in by_name.items() if n.startswith("memcpy") and r["status"] == "ok"]
    best_copy = max(copies, key=lambda r: r["throughput"]) if copies else None
    rows = []
    for name in ("memcpy_device", "memcpy_device_256M"):
        mine, ref = by_name.get(name), theirs.get(name)
        ratio = (mine["throughput"] / ref["throughput"]
                 if mine and ref and "ok" == mine["status"] == ref["status"] else None)
        rows.append(dict(benchmark=f"{name} (copy_)", shape=(mine or {}).get("shape", ""),
                         tessera=compare_torch.fmt_side(mine), torch=compare_torch.fmt_side(ref),
                         ratio=ratio, goal=None, status="info"))
    for name, goal in torch_goals.items():
        mine, ref = by_name.get(name), theirs.get(name)
        row = dict(benchmark=name, shape=(mine or {}).get("shape", ""),
                   tessera=compare_torch.fmt_side(mine), torch=compare_torch.fmt_side(ref),
                   ratio=None, goal=goal)
        if mine is None or ref is None:
            row["status"] = "ERROR"
            row["error"] = "missing from " + ("ops_bench" if mine is None else "torch")
        elif mine["status"] != "ok" or ref["status"] != "ok":
            row["status"] = "n/a" if mine["status"] == "not available" else "ERROR"
            row["error"] = mine.get("error") or ref.get("error")
        else:
            row["ratio"] = mine["throughput"] / ref["throughput"]
            row["status"] = "info" if goal is None else ("ok" if row["ratio"] >= goal else "MISS")
        if name == "add_latency_1" and row["ratio"] is not None:
            us, torch_us = mine["seconds"] * 1e6, ref["seconds"] * 1e6
            row["tessera"], row["torch"] = f"{us:.2f} us/op", f"{torch_us:.2f} us/op"
            row["goal"] = f"<= {latency_goal_us} us"
            row["status"] = "ok" if us <= latency_goal_us else "MISS"
        rows.append(row)
        if name in memcpy_goals:
            mrow = dict(benchmark=f"{name} vs copy", shape=row["shape"], tessera=row["tessera"],
                        torch="copy " + compare_torch.fmt_side(best_copy), ratio=None,
                        goal=memcpy_goals[name])
            if row["status"] in ("ERROR", "n/a") or best_copy is None:
                mrow["status"] = "n/a"
            else:
                mrow["ratio"] = mine["throughput"] / best_copy["throughput"]
                mrow["status"] = "ok" if mrow["ratio"] >= mrow["goal"] else "MISS"
            rows.append(mrow)
    return rows


def markdown(rows, header):
    out = [header, "",
           "| benchmark | shape | tessera | torch | ratio | goal | result |",
           "|---|---|---|---|---:|---:|---|"]
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        goal = r["goal"] if isinstance(r["goal"], str) else (
            f">= {r['goal']}" if r["goal"] is not None else "-")
        out.append(f"| {r['benchmark']} | {r['shape']} | {r['tessera']} | {r['torch']} | "
                   f"{ratio} | {goal} | {r['status']} |")
    out.extend(f"- {r['benchmark']}: {r['error']}" for r in rows if r.get("error"))
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=Path, default=ROOT / "bazel-bin" / "bench" / "ops_bench")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    p.add_argument("--device", default="cuda:0", help="tessera's and torch's device")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    if not args.bin.exists():
        sys.exit(f"compare_torch_gpu: {args.bin} not found; bazel build //bench:ops_bench first")

    ours, theirs, torch_version, gpu = None, {}, None, None
    try:
        import torch
        if not torch.cuda.is_available():
            print("compare_torch_gpu: torch sees no CUDA device", file=sys.stderr)
            return 2
        for i in range(1, args.rounds + 1):
            print(f"[round {i}/{args.rounds}] tessera {args.device}: {args.bin}", flush=True)
            doc = compare_torch.run_tessera(args.bin, 1, args.device)
            if doc.get("status") == "absent":
                print(f"compare_torch_gpu: tessera has no {args.device}", file=sys.stderr)
                return 2
            ours = compare_torch.merge_round(ours, doc)
            print(f"[round {i}/{args.rounds}] torch {torch.__version__} on {args.device}",
                  flush=True)
            results, torch_version, gpu = run_torch(args.device)
            for name, r in results.items():
                theirs[name] = compare_torch.better(theirs.get(name), r)
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        print(f"compare_torch_gpu: error: {e}", file=sys.stderr)
        return 1

    rows = compare(ours, theirs)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"Tessera {args.device} vs torch {torch_version} on {gpu}; {stamp}. "
              "ratio = tessera / torch throughput (vs copy rows: / the run's best "
              "device-to-device copy); median of repeats, best of "
              f"{args.rounds} alternating rounds; f32 GEMM/conv with TF32 off on both sides "
              "except matmul_tf32.")
    table = markdown(rows, header)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"bench": "gpu_ops_vs_torch", "date": stamp, "host": platform.node(), "gpu": gpu,
           "torch_version": torch_version, "rounds": args.rounds, "rows": rows,
           "tessera": ours, "torch": theirs}
    (args.out / "gpu_ops.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "gpu_ops.md").write_text(table)
    print()
    print(table, end="")
    missed = sum(r["status"] == "MISS" for r in rows)
    errors = sum(r["status"] == "ERROR" for r in rows)
    print(f"\n{len(rows)} rows: {missed} goal(s) missed, {errors} error(s); "
          f"written to {args.out}/gpu_ops.{{json,md}}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
