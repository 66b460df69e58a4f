"""PyTorch's own OptimizerInfo database (optim_db), run on tessera and
compared with CPU.

For every optimizer of optim_db, each of its optimizer inputs (with the
capturable ones the db keeps for CUDA-like devices, since torch.optim runs
capturable on PrivateUse1 too) in each implementation it supports
(for-loop, foreach, fused, differentiable) takes 5 steps on tessera and on
the CPU from the same parameters with the same gradients (LBFGS: 2 steps of
up to 20 iterations on a loss, held to a float64 CPU run); parameters and
state_dict entries must match, and a state_dict saved and loaded on tessera
must go on training like the CPU's. A second test runs each optimizer's LR
scheduler sets from the db. optim_db_parity.py holds the comparison;
tools/optim_db_status.py prints the same cases as a table with the aten
ops that ran through the CPU fallback.

The test classes come from PyTorch's instantiate_device_type_tests for
PrivateUse1, so they run on the current tessera device; ./dev test runs this
file again with TESSERA_VISIBLE_DEVICES=vulkan. Fallback calls do not fail
a test: each test records them as junit properties (cpu_fallback_calls,
cpu_fallback_ops). Known gaps are strict expected failures that name their
reason.
"""

import os

import pytest
import torch
import torch_tessera  # noqa: F401  (registers tessera before common_device_type is imported)

os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")

from optim_db_parity import SPARSE_REASON, run_optimizer, run_schedulers  # noqa: E402
from torch.testing._internal.common_device_type import instantiate_device_type_tests  # noqa: E402
from torch.testing._internal.common_optimizers import optim_db, optims  # noqa: E402
from torch.testing._internal.common_utils import TestCase  # noqa: E402

# optimizer name -> reason, for optimizers tessera does not match yet.
KNOWN_GAPS = {}


@pytest.fixture(autouse=True)
def _junit_properties(request):
    """Lets a test method add junit properties (request.node.user_properties)."""
    if request.instance is not None:
        request.instance.junit_properties = request.node.user_properties
    yield


class TestTesseraOptimizers(TestCase):
    """Each optim_db optimizer on tessera against the same one on the CPU."""

    junit_properties = None

    def _judge(self, optim_info, results):
        calls = {}
        for result in results:
            for op, count in result.fallback_calls.items():
                calls[op] = calls.get(op, 0) + count
        if self.junit_properties is not None:
            self.junit_properties.append(("cpu_fallback_calls", sum(calls.values())))
            self.junit_properties.append(
                ("cpu_fallback_ops", ",".join(f"{op}={n}" for op, n in sorted(calls.items()))))
        failures = [f"{r.implementation}, {r.desc}: {r.detail}" for r in results if not r.ok]
        gap = KNOWN_GAPS.get(optim_info.name)
        if gap is not None:
            if failures:
                pytest.xfail(f"known gap: {gap}")
            raise AssertionError(f"{optim_info.name} now matches CPU: remove it from KNOWN_GAPS")
        if failures:
            raise AssertionError(f"{len(failures)} of {len(results)} cases differ from the CPU:\n"
                                 + "\n".join(failures))

    @optims(optim_db, dtypes=[torch.float32])
    def test_matches_cpu(self, device, dtype, optim_info):
        if optim_info.only_supports_sparse_grads:
            self.skipTest(f"{optim_info.name} takes sparse gradients only: {SPARSE_REASON}")
        self._judge(optim_info, run_optimizer(optim_info, torch.device(device)))

    @optims(optim_db, dtypes=[torch.float32])
    def test_lr_schedulers_match_cpu(self, device, dtype, optim_info):
        if optim_info.only_supports_sparse_grads:
            self.skipTest(f"{optim_info.name} takes sparse gradients only: {SPARSE_REASON}")
        self._judge(optim_info, run_schedulers(optim_info, torch.device(device)))

    @optims([o for o in optim_db if o.supports_sparse or o.only_supports_sparse_grads],
            dtypes=[torch.float32])
    def test_sparse_gradients(self, device, dtype, optim_info):
        """Skipped while a sparse gradient cannot reach tessera; fails, asking
        for the comparison, once it can."""
        grad = torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.tensor([1.0, 2.0]), (4,))
        try:
            grad.to(device)
        except (NotImplementedError, RuntimeError) as e:
            self.skipTest(f"{SPARSE_REASON} ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
        raise AssertionError(f"sparse tensors now move to {device}: compare {optim_info.name} "
                             "with sparse gradients against the CPU here")


instantiate_device_type_tests(TestTesseraOptimizers, globals(), only_for=("privateuse1",))
