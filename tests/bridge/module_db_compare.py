"""One module_db module input run on CPU and on a tessera device: outputs,
input gradients and parameter gradients handed to a compare function.
Shared by tests/bridge/test_module_db.py and tools/module_db_status.py."""

import copy

import torch
from torch.testing._internal.common_utils import freeze_rng_state
from torch.utils._pytree import tree_flatten, tree_map

# Random in training mode: their outputs cannot match CPU draw for draw.
RANDOM_WHEN_TRAINING = {
    torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d,
    torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout, torch.nn.RReLU,
}
# Random in every mode.
ALWAYS_RANDOM = {torch.nn.FractionalMaxPool2d, torch.nn.FractionalMaxPool3d}


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


def run_and_compare(module_info, module_input, device, dtype, training, compare):
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
    assert len(got) == len(want), f"{len(got)} outputs, CPU gives {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.device == device, f"output {k} on {g.device}"
        compare(f"output {k}", g, w)
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
        assert (g is None) == (w is None), what
        if g is not None:
            compare(what, g, w)
