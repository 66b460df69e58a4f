"""How PyTorch's optim_db runs on a tessera device: per optimizer and
implementation, whether it matches the CPU and how often it needs the CPU
fallback.

Runs the cases of tests/bridge/test_optim_db.py (optim_db_parity.py: every
optimizer input, with the capturable ones, 5 steps and a state_dict round
trip, plus the db's LR scheduler sets) on one tessera device and prints a
Markdown table, one row per optimizer and implementation (for-loop,
foreach, fused, differentiable): the cases, whether all of them match the
CPU, the calls that went through the bridge's CPU fallback
(torch_tessera.fallback_stats()) and the aten ops they reached; then the
totals and the cases that differ. docs/bridge.md quotes it.

    .venv/bin/python tools/optim_db_status.py [--device tessera:1]
"""

import argparse
import collections
import os
import sys
import time
import warnings

import torch
import torch_tessera

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bridge"))
os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
from optim_db_parity import SPARSE_REASON, implementations, run_optimizer, run_schedulers  # noqa: E402
from torch.testing._internal.common_optimizers import optim_db  # noqa: E402


def collect(device):
    """{(optimizer, implementation): [CaseResult]} and the optimizers left out."""
    rows, left_out = {}, []
    for optim_info in optim_db:
        if optim_info.only_supports_sparse_grads:
            left_out.append(optim_info.name)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = run_optimizer(optim_info, device) + run_schedulers(optim_info, device)
        for implementation in implementations(optim_info):
            rows[(optim_info.name, implementation)] = [
                r for r in results if r.implementation == implementation]
    return rows, left_out


def fallback_calls(results):
    calls = collections.Counter()
    for result in results:
        calls.update(result.fallback_calls)
    return calls


def render(rows, left_out, device, seconds):
    lines = [
        f"# optim_db on {device} (torch {torch.__version__})",
        "",
        "| optimizer | implementation | cases | matches CPU | fallback calls "
        "| aten ops through the fallback |",
        "|---|---|---:|---|---:|---|",
    ]
    for (name, implementation), results in rows.items():
        failed = [r for r in results if not r.ok]
        match = "yes" if not failed else f"no ({len(failed)} of {len(results)} differ)"
        calls = fallback_calls(results)
        ops = ", ".join(f"`{op.removeprefix('aten::')}`" for op in sorted(calls)) or "-"
        lines.append(f"| {name} | {implementation} | {len(results)} | {match} | "
                     f"{sum(calls.values())} | {ops} |")
    everything = [r for results in rows.values() for r in results]
    total_calls = fallback_calls(everything)
    matching_rows = sum(all(r.ok for r in results) for results in rows.values())
    native_rows = sum(all(r.ok and not r.fallback_calls for r in results) for results in rows.values())
    lines += [
        "",
        f"- rows (optimizer x implementation): {len(rows)}; matching the CPU: {matching_rows}; "
        f"matching with no fallback call: {native_rows}",
        f"- cases: {len(everything)}; matching the CPU: {sum(r.ok for r in everything)} "
        f"({sum(r.outcome == 'rejected like CPU' for r in everything)} of them rejected like the CPU)",
        f"- fallback calls: {sum(total_calls.values())}, to {len(total_calls)} aten ops: "
        + (", ".join(f"`{op.removeprefix('aten::')}` {n}" for op, n in total_calls.most_common()) or "none"),
        f"- left out: {', '.join(left_out) or 'none'} ({SPARSE_REASON})",
        f"- {seconds:.0f} s",
    ]
    failed = [r for r in everything if not r.ok]
    if failed:
        lines += ["", f"## Cases that differ from the CPU ({len(failed)})", ""]
        lines += [f"- {r.optimizer}, {r.implementation}, {r.desc}: {r.detail}" for r in failed]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="tessera:0")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type != "tessera" or device.index is None or device.index >= torch.tessera.device_count():
        parser.error(f"--device {args.device}: expected tessera:N with N below "
                     f"{torch.tessera.device_count()} (this process's tessera devices)")
    start = time.monotonic()
    rows, left_out = collect(device)
    print(render(rows, left_out, device, time.monotonic() - start))


if __name__ == "__main__":
    main()
