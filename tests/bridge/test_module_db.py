"""PyTorch's own ModuleInfo database (module_db), run on tessera and
compared with CPU.

For every module of module_db in float32, in training mode (and in eval
mode where the two differ), each of its first MAX_INPUTS module inputs
builds the module on CPU, copies it to tessera, runs the same forward on
both, backpropagates the same weighted sum of the outputs, and compares the
outputs, the input gradients and the parameter gradients. The test classes
come from PyTorch's instantiate_device_type_tests for PrivateUse1, so pytest
counts one case per module and mode.

Modules whose output is random in training mode (dropout and friends) are
compared in eval mode only. Known gaps are expected failures that name
their reason; each turns into a plain failure (strict xfail) as soon as it
passes.
"""

import os

import pytest
import torch
import torch_tessera  # noqa: F401  (registers tessera before common_device_type is imported)

os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")

from torch.testing._internal.common_device_type import instantiate_device_type_tests  # noqa: E402
from torch.testing._internal.common_modules import module_db, modules  # noqa: E402
from torch.testing._internal.common_utils import TestCase  # noqa: E402

from module_db_compare import ALWAYS_RANDOM, RANDOM_WHEN_TRAINING, run_and_compare  # noqa: E402

MAX_INPUTS = 4
RTOL = 1e-4
ATOL = 1e-5

# module class name -> reason, for modules tessera does not match yet.
KNOWN_GAPS = {}


class TestTesseraModules(TestCase):
    """Each module_db module on tessera against the same module on CPU."""

    def _compare(self, what, got, want):
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=RTOL, atol=ATOL,
                                   equal_nan=True, msg=lambda m: f"{what}: {m}")

    @modules(module_db, allowed_dtypes=(torch.float32,))
    def test_matches_cpu(self, device, dtype, module_info, training):
        cls = module_info.module_cls
        if cls in ALWAYS_RANDOM or (training and cls in RANDOM_WHEN_TRAINING):
            self.skipTest(f"{cls.__name__} draws random numbers in this mode")
        gap = KNOWN_GAPS.get(cls.__name__)
        device = torch.device(device)
        inputs = module_info.module_inputs_func(module_info, device="cpu", dtype=dtype,
                                                requires_grad=True, training=training)
        inputs = [mi for mi in inputs if mi.forward_input is not None][:MAX_INPUTS]
        if not inputs:
            self.skipTest("module_db gives no forward input")
        failures = []
        for index, module_input in enumerate(inputs):
            try:
                run_and_compare(module_info, module_input, device, dtype, training, self._compare)
            except Exception as e:
                failures.append(f"input {index} ({module_input.desc or 'default'}): "
                                f"{type(e).__name__}: {str(e)[:400]}")
        if gap is not None:
            if failures:
                pytest.xfail(f"known gap: {gap}")
            raise AssertionError(f"{cls.__name__} now matches CPU: remove it from KNOWN_GAPS")
        if failures:
            raise AssertionError("\n".join(failures))


instantiate_device_type_tests(TestTesseraModules, globals(), only_for=("privateuse1",))
