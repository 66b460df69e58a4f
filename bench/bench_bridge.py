"""The PyTorch bridge against torch's own CPU path, in one process.

Two figures, each with its goal from the issue:

  add_1elem_overhead   x + y on one-element tensors: the fixed cost of one
                       op through the dispatcher, the bridge kernel and the
                       runtime front end. Median seconds per op;
                       ratio = tessera time / torch CPU time, goal <= 1.5.
  mlp_train_step       one training step (forward, cross-entropy, backward,
                       SGD with momentum) of a 784-1024-1024-10 MLP on a
                       batch of 128 float32 rows. Steps per second;
                       ratio = tessera / torch CPU throughput, goal >= 0.8.

Both sides run with the same thread count (torch.set_num_threads; the
runtime's CPU device uses the same cores through oneTBB) and take turns
loop by loop, so that load from other processes falls on both alike. The
figures are medians over the loops; "ratio (best)" compares each side's
fastest loop, the figure least disturbed by such load.

Writes one JSON object (a line, appended) to $TESSERA_BENCH_JSON (default
results/bench/bench_bridge.json) and the Markdown table to bridge.md in the
same folder, and prints the table. A missed goal prints MISS but is not an
error; the exit status is non-zero only when a benchmark could not run.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import torch  # noqa: E402

try:
    import torch_tessera  # noqa: F401  (normally autoloaded by import torch)
except ImportError:  # not installed: the in-tree package with its built _C.so
    sys.path.insert(0, str(ROOT / "bridge"))
    import torch_tessera  # noqa: F401


def interleaved_timings(sides, repeats, calls, warmup):
    """{side: sorted seconds per call, one figure per repeat}. The sides take
    turns repeat by repeat, so that load from other processes on the machine
    falls on both alike."""
    for fn, sync in sides.values():
        for _ in range(warmup):
            fn()
        if sync is not None:
            sync()
    per_call = {name: [] for name in sides}
    for _ in range(repeats):
        for name, (fn, sync) in sides.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if sync is not None:
                sync()
            per_call[name].append((time.perf_counter() - t0) / calls)
    return {name: sorted(times) for name, times in per_call.items()}


def summarize(times):
    return {"median": statistics.median(times), "best": times[0], "repeats": len(times)}


def bench_add_overhead(device, args):
    x_cpu, y_cpu = torch.ones(1), torch.full((1,), 2.0)
    x_dev, y_dev = x_cpu.to(device), y_cpu.to(device)
    torch.testing.assert_close((x_dev + y_dev).cpu(), x_cpu + y_cpu)

    torch_tessera.reset_fallback_stats()
    _ = x_dev + y_dev
    fallback_ops = sorted(torch_tessera.fallback_stats())

    sync = torch.tessera.synchronize
    times = interleaved_timings({"torch": (lambda: x_cpu + y_cpu, None),
                                 "tessera": (lambda: x_dev + y_dev, lambda: sync(device))},
                                repeats=args.add_repeats, calls=2000, warmup=2000)
    tessera, cpu = summarize(times["tessera"]), summarize(times["torch"])
    ratio = tessera["median"] / cpu["median"]
    return {"benchmark": "add_1elem_overhead", "shape": "x + y, [1] f32",
            "measure": "us per op", "tessera": tessera["median"] * 1e6,
            "torch": cpu["median"] * 1e6, "ratio": ratio,
            "ratio_best": tessera["best"] / cpu["best"],
            "ratio_is": "tessera time / torch time (median over repeats of 2000 ops)",
            "goal": "<= 1.5", "met": ratio <= 1.5,
            "seconds": {"tessera": tessera, "torch": cpu}, "fallback_ops": fallback_ops}


def make_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                               torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                               torch.nn.Linear(1024, 10))


def mlp_step_fn(device):
    model = make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(128, 784, generator=gen).to(device)
    y = torch.randint(0, 10, (128,), generator=gen).to(device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def bench_mlp_step(device, args):
    cpu_step, dev_step = mlp_step_fn("cpu"), mlp_step_fn(device)
    # Same weights, same data: the first losses agree, or the timing compares
    # different work.
    torch.testing.assert_close(dev_step().detach().cpu(), cpu_step().detach(),
                               rtol=1e-4, atol=1e-5)

    torch_tessera.reset_fallback_stats()
    dev_step()
    torch.tessera.synchronize(device)
    fallback = torch_tessera.fallback_stats()

    sync = torch.tessera.synchronize
    times = interleaved_timings({"torch": (cpu_step, None),
                                 "tessera": (dev_step, lambda: sync(device))},
                                repeats=args.mlp_repeats, calls=2, warmup=3)
    tessera, cpu = summarize(times["tessera"]), summarize(times["torch"])
    ratio = cpu["median"] / tessera["median"]
    return {"benchmark": "mlp_train_step", "shape": "784-1024-1024-10, batch 128 f32, SGD momentum",
            "measure": "steps/s", "tessera": 1.0 / tessera["median"], "torch": 1.0 / cpu["median"],
            "ratio": ratio, "ratio_best": cpu["best"] / tessera["best"],
            "ratio_is": "tessera throughput / torch throughput (median over repeats of 2 steps)",
            "goal": ">= 0.8", "met": ratio >= 0.8,
            "seconds": {"tessera": tessera, "torch": cpu},
            "fallback_calls_per_step": sum(fallback.values()),
            "fallback_ops": sorted(fallback)}


def markdown(rows, header):
    out = [header, "",
           "| benchmark | shape | measure | tessera | torch CPU | ratio | ratio (best) | goal | result |",
           "|---|---|---|---:|---:|---:|---:|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['benchmark']} | {r['shape']} | - | - | - | - | - | {r['goal']} | ERROR |")
            continue
        out.append(f"| {r['benchmark']} | {r['shape']} | {r['measure']} | {r['tessera']:.2f} | "
                   f"{r['torch']:.2f} | {r['ratio']:.3f} | {r['ratio_best']:.3f} | {r['goal']} | "
                   f"{'met' if r['met'] else 'MISS'} |")
    out.append("")
    for r in rows:
        if "error" in r:
            out.append(f"- {r['benchmark']}: {r['error']}")
        elif r.get("fallback_ops"):
            calls = r.get("fallback_calls_per_step")
            calls = f"{calls} calls a step, " if calls is not None else ""
            out.append(f"- {r['benchmark']}: through the CPU fallback ({calls}"
                       f"{len(r['fallback_ops'])} ops): {', '.join(r['fallback_ops'])}")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    p.add_argument("--add-repeats", type=int, default=101,
                   help="timed loops of 2000 adds, each side (default 101)")
    p.add_argument("--mlp-repeats", type=int, default=15,
                   help="timed loops of 2 training steps, each side (default 15)")
    args = p.parse_args()

    if torch.tessera.device_count() == 0:
        print("bench_bridge: no tessera device", file=sys.stderr)
        return 1
    torch.set_num_threads(args.threads)
    device = torch.device("tessera", 0)

    rows = []
    for bench, shape, goal in ((bench_add_overhead, "x + y, [1] f32", "<= 1.5"),
                               (bench_mlp_step, "784-1024-1024-10, batch 128 f32", ">= 0.8")):
        try:
            rows.append(bench(device, args))
        except Exception as e:  # report and go on with the other benchmark
            rows.append({"benchmark": bench.__name__.removeprefix("bench_"), "shape": shape,
                         "goal": goal, "error": f"{type(e).__name__}: {e}"})

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"Bridge: tessera:0 ({torch.tessera.get_device_name(device)}) vs torch "
              f"{torch.__version__} CPU; {torch.get_num_threads()} threads; {stamp}. "
              "The sides alternate loop by loop; figures are medians over the loops, "
              "ratio (best) compares the fastest loops.")
    table = markdown(rows, header)

    json_path = Path(os.environ.get("TESSERA_BENCH_JSON",
                                    ROOT / "results" / "bench" / "bench_bridge.json"))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"bench": "bridge", "date": stamp, "host": platform.node(),
           "threads": torch.get_num_threads(), "torch_version": torch.__version__,
           "add_repeats": args.add_repeats, "mlp_repeats": args.mlp_repeats, "rows": rows}
    with open(json_path, "a") as f:
        f.write(json.dumps(doc) + "\n")
    (json_path.parent / "bridge.md").write_text(table)
    print(table, end="")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
