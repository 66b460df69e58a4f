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

import copy
import os

import pytest
import torch
import torch_tessera  # noqa: F401  (registers tessera before common_device_type is imported)

os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")

from torch.testing._internal.common_device_type import instantiate_device_type_tests  # noqa: E402
from torch.testing._internal.common_modules import module_db, modules  # noqa: E402
from torch.testing._internal.common_utils import TestCase, freeze_rng_state  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_map  # noqa: E402

MAX_INPUTS = 4
RTOL = 1e-4
ATOL = 1e-5

# Random in training mode: their outputs cannot match CPU draw for draw.
RANDOM_WHEN_TRAINING = {
    torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d,
    torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout, torch.nn.RReLU,
}
# Random in every mode.
ALWAYS_RANDOM = {torch.nn.FractionalMaxPool2d, torch.nn.FractionalMaxPool3d}

# module class name -> reason, for modules tessera does not match yet.
KNOWN_GAPS = {
    "Conv3d": "3-D convolution is not in the runtime's op set",
    "ConvTranspose3d": "3-D convolution is not in the runtime's op set",
    "LazyConv3d": "3-D convolution is not in the runtime's op set",
    "LazyConvTranspose3d": "3-D convolution is not in the runtime's op set",
}


def _to_device(value, device, moved):
    """value on device; `moved` (id -> tensor) keeps one tensor passed
    twice (KLDivLoss's input as its own target) one tensor there too."""
    if not isinstance(value, torch.Tensor):
        return value
    if id(value) not in moved:
        moved[id(value)] = value.detach().to(device).requires_grad_(value.requires_grad)
    return moved[id(value)]


def _float_tensors(tree):
    leaves, _ = tree_flatten(tree)
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.is_floating_point()]


def _weighted_sum(outputs):
    """A loss that reaches every floating output with distinct weights."""
    total = None
    for out in outputs:
        if not out.requires_grad:
            continue
        weights = torch.linspace(0.5, 1.5, out.numel(), device=out.device).view_as(out)
        term = (out * weights).sum()
        total = term if total is None else total + term
    return total


class TestTesseraModules(TestCase):
    """Each module_db module on tessera against the same module on CPU."""

    def _compare(self, what, got, want):
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=RTOL, atol=ATOL,
                                   equal_nan=True, msg=lambda m: f"{what}: {m}")

    def _run_one(self, module_info, module_input, device, dtype, training):
        cls = module_info.module_cls
        with freeze_rng_state():
            torch.manual_seed(0)
            args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
            module_cpu = cls(*args, **kwargs).to(dtype)
        module_cpu.train(training)
        fwd_args, fwd_kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
        if module_info.is_lazy:  # materialized on CPU, so both sides start from the same values
            with torch.no_grad():
                module_cpu(*copy.deepcopy(fwd_args), **copy.deepcopy(fwd_kwargs))
        module_dev = copy.deepcopy(module_cpu).to(device)
        moved = {}
        dev_args = tree_map(lambda v: _to_device(v, device, moved), fwd_args)
        dev_kwargs = tree_map(lambda v: _to_device(v, device, moved), fwd_kwargs)
        out_cpu = module_cpu(*fwd_args, **fwd_kwargs)
        out_dev = module_dev(*dev_args, **dev_kwargs)
        got, want = _float_tensors(out_dev), _float_tensors(out_cpu)
        self.assertEqual(len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            self.assertEqual(g.device, device)
            self._compare(f"output {k}", g, w)
        loss_cpu, loss_dev = _weighted_sum(want), _weighted_sum(got)
        if loss_cpu is None:
            return
        inputs_cpu = [t for t in _float_tensors((fwd_args, fwd_kwargs)) if t.requires_grad]
        inputs_dev = [moved[id(t)] for t in inputs_cpu]
        params_cpu = [p for p in module_cpu.parameters() if p.requires_grad]
        params_dev = [p for p in module_dev.parameters() if p.requires_grad]
        grads_cpu = torch.autograd.grad(loss_cpu, inputs_cpu + params_cpu, allow_unused=True)
        grads_dev = torch.autograd.grad(loss_dev, inputs_dev + params_dev, allow_unused=True)
        for k, (g, w) in enumerate(zip(grads_dev, grads_cpu)):
            what = f"grad of input {k}" if k < len(inputs_cpu) else f"grad of parameter {k - len(inputs_cpu)}"
            self.assertEqual(g is None, w is None, msg=what)
            if g is not None:
                self._compare(what, g, w)

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
                self._run_one(module_info, module_input, device, dtype, training)
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
