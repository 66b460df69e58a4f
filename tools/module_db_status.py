"""Which of PyTorch's module_db modules run on a tessera device, and how
natively: one row per module.

For every module of torch.testing._internal's module_db in float32 and
training mode (eval mode for the modules that are random in training,
none for those random in both), up to --inputs of its module inputs run
on the CPU and on the tessera device (tests/bridge/module_db_compare.py:
outputs, input gradients and parameter gradients). A module is

- clean: every input gives the CPU's results;
- native: clean, and no aten op ran through the bridge's CPU fallback
  (torch_tessera.fallback_stats()) while its inputs ran.

Markdown on stdout: a row per module with the aten ops that fell back,
then the totals that docs/bridge.md quotes.

    .venv/bin/python tools/module_db_status.py [--device tessera:1] [--inputs 4]

It is a report, not a test: tests/bridge/test_module_db.py checks that
every module matches the CPU.
"""

import argparse
import os
import sys
import warnings

import torch
import torch_tessera

os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "bridge"))
from torch.testing._internal.common_modules import module_db  # noqa: E402

from module_db_compare import ALWAYS_RANDOM, RANDOM_WHEN_TRAINING, run_and_compare  # noqa: E402

TOLERANCE = dict(rtol=1e-4, atol=1e-5, equal_nan=True)


def compare(what, got, want):
    torch.testing.assert_close(got.detach().cpu(), want.detach(), **TOLERANCE,
                               msg=lambda m: f"{what}: {m}")


def status(module_info, device, max_inputs):
    """(clean, fallback {aten op: calls}, first error or '')."""
    cls = module_info.module_cls
    training = cls not in RANDOM_WHEN_TRAINING
    inputs = module_info.module_inputs_func(module_info, device="cpu", dtype=torch.float32,
                                            requires_grad=True, training=training)
    inputs = [mi for mi in inputs if mi.forward_input is not None][:max_inputs]
    fallback = {}
    for module_input in inputs:
        torch_tessera.reset_fallback_stats()
        try:
            run_and_compare(module_info, module_input, device, torch.float32, training, compare)
        except Exception as e:  # a report: every failure is a row, not a crash
            return False, fallback, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        finally:
            for op, calls in torch_tessera.fallback_stats().items():
                fallback[op] = fallback.get(op, 0) + calls
    return bool(inputs), fallback, "" if inputs else "no module input"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="tessera:0")
    parser.add_argument("--inputs", type=int, default=4, help="module inputs per module")
    args = parser.parse_args()
    device = torch.device(args.device)
    warnings.filterwarnings("ignore")

    rows = []
    for module_info in module_db:
        cls = module_info.module_cls
        if cls in ALWAYS_RANDOM:
            continue
        clean, fallback, error = status(module_info, device, args.inputs)
        rows.append((cls.__name__, clean, fallback, error))

    print(f"# module_db on {device} ({torch.tessera.get_device_name(device.index)}), "
          f"float32, up to {args.inputs} inputs each\n")
    print("| module | matches CPU | zero fallback | aten ops through the fallback |")
    print("|---|---|---|---|")
    for name, clean, fallback, error in rows:
        ops = ", ".join(f"{op} ({n})" for op, n in sorted(fallback.items())) or "-"
        print(f"| {name} | {'yes' if clean else 'NO: ' + error} | "
              f"{'yes' if clean and not fallback else 'no'} | {ops} |")
    clean = sum(1 for _, c, _, _ in rows if c)
    native = sum(1 for _, c, f, _ in rows if c and not f)
    print(f"\n{len(rows)} deterministic modules: {clean} match CPU, "
          f"{native} of them with zero fallback calls.")


if __name__ == "__main__":
    main()
