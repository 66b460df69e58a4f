"""Every path by which torch.nn creates or replaces a module's parameters
works on tessera as on CPU: lazy modules moved to the device before their
first forward, parametrizations (a user's own, weight norm, spectral norm),
``load_state_dict(assign=True)`` into a module built on the meta device,
``to_empty``, and ``.to()`` with PyTorch's swap-on-conversion switch.

Each test builds the module on CPU and on a tessera device the way user
code does, gives both the same values, and compares forwards, gradients and
one optimizer step with the CPU.
"""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

import torch_tessera

from bridge_testing import assert_no_fallback, every_device

RTOL = 1e-4
ATOL = 1e-5


def assert_close(got, want):
    torch.testing.assert_close(got.detach().cpu(), want.detach().cpu(), rtol=RTOL, atol=ATOL)


def assert_trains_alike(model_dev, model_cpu, inputs_cpu, device, steps=2):
    """Forward, backward and SGD steps give the same losses, gradients and
    parameters on the device as on CPU."""
    opt_dev = torch.optim.SGD(model_dev.parameters(), lr=0.1, momentum=0.9)
    opt_cpu = torch.optim.SGD(model_cpu.parameters(), lr=0.1, momentum=0.9)
    inputs_dev = [x.to(device) for x in inputs_cpu]
    for _ in range(steps):
        losses = []
        for model, opt, inputs in ((model_dev, opt_dev, inputs_dev), (model_cpu, opt_cpu, inputs_cpu)):
            opt.zero_grad()
            loss = model(*inputs).square().mean()
            loss.backward()
            losses.append(loss)
        assert_close(losses[0], losses[1])
        for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
            assert p_dev.device == device, name
            assert p_dev.grad is not None, name
            assert_close(p_dev.grad, p_cpu.grad)
        opt_dev.step()
        opt_cpu.step()
    for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
        assert_close(p_dev, p_cpu)


LAZY_CASES = [
    ("LazyLinear", lambda: nn.LazyLinear(6), (4, 5)),
    ("LazyConv1d", lambda: nn.LazyConv1d(4, 3), (2, 3, 9)),
    ("LazyConv2d", lambda: nn.LazyConv2d(4, 3, padding=1), (2, 3, 6, 6)),
    ("LazyConvTranspose2d", lambda: nn.LazyConvTranspose2d(4, 3), (2, 3, 5, 5)),
    ("LazyBatchNorm2d", lambda: nn.LazyBatchNorm2d(), (4, 3, 5, 5)),
    ("two LazyLinear in a Sequential",
     lambda: nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(3)), (4, 5)),
]


@every_device
@pytest.mark.parametrize("name,make,shape", LAZY_CASES, ids=[c[0] for c in LAZY_CASES])
def test_lazy_module_moved_before_its_first_forward(device, name, make, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    model_cpu = make()
    model_dev = make().to(device)  # as users write it: moved while uninitialized
    model_cpu(x)
    model_dev(x.to(device))  # materializes on the device
    for p in model_dev.parameters():
        assert not isinstance(p, nn.parameter.UninitializedParameter)
        assert isinstance(p, nn.Parameter) and p.device == device
    for b in model_dev.buffers():
        assert b.device == device
    assert [n for n, _ in model_dev.named_parameters()] == [n for n, _ in model_cpu.named_parameters()]
    # Same values on both sides, then the device must train as the CPU does.
    model_dev.load_state_dict(model_cpu.state_dict())
    assert_trains_alike(model_dev, model_cpu, [x], device)


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(0, 1)


@every_device
def test_user_parametrization(device):
    torch.manual_seed(0)
    model_cpu = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 2))
    model_dev = copy.deepcopy(model_cpu).to(device)
    for model in (model_cpu, model_dev):
        parametrize.register_parametrization(model[0], "weight", Symmetric())
    w = model_dev[0].weight
    assert w.device == device
    assert_close(w, w.transpose(0, 1))
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)
    # Removing it leaves a plain parameter with the current value, on the device.
    parametrize.remove_parametrizations(model_dev[0], "weight")
    parametrize.remove_parametrizations(model_cpu[0], "weight")
    assert isinstance(model_dev[0].weight, nn.Parameter) and model_dev[0].weight.device == device
    assert_close(model_dev[0].weight, model_cpu[0].weight)


@every_device
def test_weight_norm(device):
    torch.manual_seed(0)
    model_cpu = nn.Sequential(weight_norm(nn.Linear(6, 4)), nn.ReLU(), nn.Linear(4, 2))
    model_dev = copy.deepcopy(model_cpu).to(device)
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)


@every_device
def test_weight_norm_registered_on_the_device(device):
    torch.manual_seed(0)
    linear = nn.Linear(6, 4)
    model_cpu = weight_norm(copy.deepcopy(linear))
    model_dev = weight_norm(copy.deepcopy(linear).to(device))  # g and v computed on the device
    original = model_dev.parametrizations.weight
    assert original.original0.device == device and original.original1.device == device
    assert_close(original.original0, model_cpu.parametrizations.weight.original0)
    assert_close(original.original1, model_cpu.parametrizations.weight.original1)
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)


@every_device
@pytest.mark.parametrize("dim", [0, 2], ids=["first dim", "last dim"])
def test_weight_norm_fused_interface_runs_natively(device, dim):
    """torch.nn.utils.weight_norm over the first or the last dim goes
    through aten's fused _weight_norm_interface and its backward, which
    run on the device (wav2vec2's positional convolution takes dim 2)."""
    torch.manual_seed(0)
    conv = nn.Conv1d(8, 8, 5, padding=2, groups=2)
    # The hook-based weight_norm cannot be deep-copied: each side wraps its own.
    model_dev = nn.Sequential(nn.utils.weight_norm(copy.deepcopy(conv).to(device), dim=dim),
                              nn.GELU())
    model_cpu = nn.Sequential(nn.utils.weight_norm(conv, dim=dim), nn.GELU())
    x = torch.randn(3, 8, 11, generator=torch.Generator().manual_seed(1))
    torch_tessera.reset_fallback_stats()
    assert_trains_alike(model_dev, model_cpu, [x], device)
    assert_no_fallback()


@every_device
def test_weight_norm_fused_interface_refuses_a_middle_dim(device):
    v = torch.randn(4, 3, 5, device=device)
    g = torch.ones(1, 3, 1, device=device)
    with pytest.raises(RuntimeError, match="first or the last dim, got dim 1"):
        torch._weight_norm_interface(v, g, 1)


@every_device
def test_spectral_norm_power_iteration(device):
    # Registered on CPU (u and v start from CPU random draws), then moved:
    # the power iteration in training mode must update u and v alike.
    torch.manual_seed(0)
    model_cpu = nn.Sequential(spectral_norm(nn.Linear(6, 5)), nn.Tanh(), nn.Linear(5, 2))
    model_dev = copy.deepcopy(model_cpu).to(device)
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device, steps=3)
    sn_dev, sn_cpu = model_dev[0].parametrizations.weight[0], model_cpu[0].parametrizations.weight[0]
    assert sn_dev._u.device == device
    assert_close(sn_dev._u, sn_cpu._u)
    assert_close(sn_dev._v, sn_cpu._v)
    model_dev.eval()
    model_cpu.eval()
    assert_close(model_dev(x.to(device)), model_cpu(x))


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 7)
        self.norm = nn.BatchNorm1d(7)
        self.fc2 = nn.Linear(7, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


@every_device
def test_load_state_dict_assign_into_a_meta_module(device):
    torch.manual_seed(0)
    model_cpu = TwoLayer()
    state_dev = {k: v.to(device) for k, v in model_cpu.state_dict().items()}
    with torch.device("meta"):
        model_dev = TwoLayer()
    model_dev.load_state_dict(state_dev, assign=True)
    for name, p in model_dev.named_parameters():
        assert isinstance(p, nn.Parameter) and p.device == device, name
    for name, b in model_dev.named_buffers():
        assert b.device == device, name
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)


@every_device
def test_to_empty_from_meta_then_load(device):
    torch.manual_seed(0)
    model_cpu = TwoLayer()
    with torch.device("meta"):
        model_dev = TwoLayer()
    model_dev = model_dev.to_empty(device=device)
    assert all(p.device == device for p in model_dev.parameters())
    model_dev.load_state_dict(model_cpu.state_dict())
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)


@every_device
def test_to_with_swap_module_params_on_conversion(device):
    # PyTorch's newer conversion path: Module._apply swaps each parameter's
    # contents in place (torch.utils.swap_tensors), so references held
    # elsewhere (an optimizer's param groups) see the device tensors.
    torch.manual_seed(0)
    model_cpu = TwoLayer()
    model_dev = copy.deepcopy(model_cpu)
    params_before = list(model_dev.parameters())
    previous = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        model_dev.to(device)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(previous)
    params_after = list(model_dev.parameters())
    assert all(a is b for a, b in zip(params_before, params_after))
    assert all(p.device == device for p in params_after)
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    assert_trains_alike(model_dev, model_cpu, [x], device)
