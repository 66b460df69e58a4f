"""How much of PyTorch's op_db runs on a tessera device, and how natively.

For every OpInfo entry of torch.testing._internal's op_db that supports
float32 on the CPU (random and uninitialized-memory ops left out: their
values cannot match sample by sample), up to --samples of its float32
sample inputs are made for the tessera device (as PyTorch's device-generic
tests make them), run there and, copied, on the CPU, and the outputs are
compared with torch.testing.assert_close. An op is

- clean: every sample whose CPU reference runs gives the CPU's result on
  tessera (a sample the CPU itself rejects is left out);
- native: clean, and no aten op ran through the bridge's CPU fallback
  while its samples ran (torch_tessera.fallback_stats()).

The report (Markdown on stdout, and JSON with --json) gives both shares
and lists the ops that fail and the aten ops that still fall back, each
with the op_db entries that reach it. docs/bridge.md quotes its totals.

    .venv/bin/python tools/op_db_report.py [--device tessera:1] [--json out.json]

It is a report, not a test: tests/bridge/test_opinfo.py checks the ops
the runtime implements on every device.
"""

import argparse
import collections
import itertools
import json
import os
import sys
import time
import warnings

import torch
import torch_tessera

os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_map  # noqa: E402

# Ops whose values are random or uninitialized memory: no per-sample
# comparison with the CPU is meaningful.
NONDETERMINISTIC_WORDS = ("rand", "dropout", "bernoulli", "multinomial", "normal", "uniform",
                          "empty", "exponential", "geometric", "cauchy", "log_normal",
                          "randperm", "rrelu", "fractional", "lowrank")

TOLERANCE = dict(rtol=1e-4, atol=1e-5, equal_nan=True)


def deterministic_float32_ops():
    selected = []
    for op in op_db:
        name = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        if any(word in name for word in NONDETERMINISTIC_WORDS):
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        selected.append((name, op))
    return selected


def to_cpu(value, device):
    """The CPU twin of a sample value made for `device`: its tensors copied
    to the CPU, a device argument naming `device` (factory ops:
    ones(..., device=...)) made to name the CPU. Tensors the sample keeps on
    the CPU (tensor_split's indices) stay, as in PyTorch's device tests."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu() if value.device.type == device.type else value
    if isinstance(value, torch.device) and value.type == device.type:
        return torch.device("cpu")
    if isinstance(value, str) and value.startswith(device.type):
        return "cpu"
    return value


def draws_random_numbers(sample):
    """Samples with dropout (scaled_dot_product_attention, multi-head
    attention): tessera draws from its own Philox generator."""
    return any(sample.kwargs.get(k, 0) for k in ("dropout_p", "dropout"))


def compare(actual, expected, device, placed):
    """`placed`: where the sample puts its outputs (a device= argument, as
    ones_like(x, device="cpu") has), else the device."""
    leaves, _ = tree_flatten(actual)
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.device.type != placed.type:
            raise AssertionError(f"an output is on {leaf.device}, not on {placed}")
    torch.testing.assert_close(tree_map(lambda v: v.cpu() if isinstance(v, torch.Tensor) else v,
                                        actual), expected,
                               **TOLERANCE)


def run_op(op, device, max_samples):
    """(status, detail, fallback ops) for one op: status is clean, failed or
    no-sample."""
    compared, failure, fallbacks = 0, None, set()
    # Samples are made for the device, as PyTorch's device-generic tests
    # make them, and copied to the CPU for the reference.
    try:
        samples = list(itertools.islice(
            op.sample_inputs(device, torch.float32, requires_grad=False), max_samples))
    except Exception as e:
        return "failed", f"making samples: {type(e).__name__}: {str(e)[:160]}", []
    for sample in samples:
        if draws_random_numbers(sample):
            continue
        try:
            on_cpu = tree_map(lambda v: to_cpu(v, device),
                              (sample.input, sample.args, sample.kwargs))
            expected = op(on_cpu[0], *on_cpu[1], **on_cpu[2])
        except Exception:
            continue  # the reference rejects it: not tessera's concern
        try:
            torch_tessera.reset_fallback_stats()
            actual = op(sample.input, *sample.args, **sample.kwargs)
            fallbacks |= set(torch_tessera.fallback_stats())
            placed = torch.device(sample.kwargs.get("device", device))
            compare(actual, expected, device, placed)
            compared += 1
        except Exception as e:
            fallbacks |= set(torch_tessera.fallback_stats())
            message = str(e).strip().splitlines()[0] if str(e).strip() else ""
            failure = f"{type(e).__name__}: {message[:160]}"
            break
    fallbacks = sorted(fallbacks)
    if failure is not None:
        return "failed", failure, fallbacks
    if compared == 0:
        return "no-sample", "no float32 sample runs on the CPU", fallbacks
    return "clean", "", fallbacks


def report(device, max_samples, only):
    results = {}
    ops = deterministic_float32_ops()
    if only:
        ops = [(name, op) for name, op in ops if any(word in name for word in only)]
    start = time.monotonic()
    for i, (name, op) in enumerate(ops):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            status, detail, fallbacks = run_op(op, device, max_samples)
        results[name] = {"status": status, "detail": detail, "fallbacks": fallbacks}
        if (i + 1) % 50 == 0:
            print(f"  ... {i + 1} of {len(ops)} ops, {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
    return results


def summarize(results, device):
    judged = {n: r for n, r in results.items() if r["status"] != "no-sample"}
    clean = [n for n, r in judged.items() if r["status"] == "clean"]
    native = [n for n in clean if not judged[n]["fallbacks"]]
    failed = sorted(n for n, r in judged.items() if r["status"] == "failed")
    by_fallback = collections.defaultdict(list)
    for name in clean:
        for aten_op in judged[name]["fallbacks"]:
            by_fallback[aten_op].append(name)
    lines = [
        f"# op_db on {device} ({torch_tessera.__name__}, torch {torch.__version__})",
        "",
        f"- ops with a float32 sample that runs on the CPU: {len(judged)}"
        f" (of {len(results)} deterministic float32 ops)",
        f"- clean (every sample equals the CPU's): {len(clean)}"
        f" ({100.0 * len(clean) / max(len(judged), 1):.1f}%)",
        f"- native (clean, no CPU fallback): {len(native)}"
        f" ({100.0 * len(native) / max(len(clean), 1):.1f}% of clean)",
        "",
        f"## Failing ops ({len(failed)})",
        "",
    ]
    lines += [f"- `{n}`: {judged[n]['detail']}" for n in failed]
    lines += ["", f"## aten ops that still run through the CPU fallback ({len(by_fallback)})", ""]
    for aten_op, names in sorted(by_fallback.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(f"`{n}`" for n in sorted(names)[:6])
        more = f" and {len(names) - 6} more" if len(names) > 6 else ""
        lines.append(f"- `{aten_op}` ({len(names)} op_db entries: {shown}{more})")
    return "\n".join(lines), {"clean": len(clean), "native": len(native), "judged": len(judged)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="tessera:0")
    parser.add_argument("--samples", type=int, default=8, help="samples per op (default 8)")
    parser.add_argument("--only", nargs="*", default=[], help="ops whose name contains one of these")
    parser.add_argument("--json", help="also write the per-op results here")
    args = parser.parse_args()
    device = torch.device(args.device)
    results = report(device, args.samples, args.only)
    text, totals = summarize(results, device)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": str(device), "totals": totals, "ops": results}, f, indent=1)


if __name__ == "__main__":
    main()
