"""End-to-end training on tessera against the same training on CPU.

Each test builds a model on CPU, copies it (identical initial weights) to
tessera, feeds both the same batches and compares the loss curves and the
final weights with torch.testing.assert_close. Ops that have no tessera
kernel yet run through the counted CPU fallback; the tests print which.
"""

import copy
import io

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera

from bridge_testing import SmallCNN

STEPS = 10
# Float32 sums in another order drift by a few ulps a step; ten steps of
# training keep that well under 1e-4 relative.
RTOL = 1e-4
ATOL = 1e-5


def make_mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))


def mlp_batches(steps=STEPS, batch=16):
    gen = torch.Generator().manual_seed(1)
    return [(torch.randn(batch, 20, generator=gen), torch.randint(0, 5, (batch,), generator=gen))
            for _ in range(steps)]


def cnn_batches(steps=STEPS, batch=8):
    gen = torch.Generator().manual_seed(2)
    return [(torch.randn(batch, 1, 12, 12, generator=gen),
             torch.randint(0, 5, (batch,), generator=gen)) for _ in range(steps)]


def seeded(factory):
    torch.manual_seed(0)
    return factory()


def train(model, make_optimizer, batches, device, clip_norm=None):
    """Trains `model` (already on `device`) on `batches`; the loss curve on CPU."""
    optimizer = make_optimizer(model.parameters())
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        losses.append(loss.detach().to("cpu"))
    return torch.stack(losses)


def assert_same_training(model_factory, make_optimizer, batches, device, clip_norm=None):
    cpu_model = seeded(model_factory)
    tessera_model = copy.deepcopy(cpu_model).to(device)
    for p in tessera_model.parameters():
        assert p.device == device

    cpu_losses = train(cpu_model, make_optimizer, batches, "cpu", clip_norm)
    tessera_losses = train(tessera_model, make_optimizer, batches, device, clip_norm)

    # The loss must actually move, or matching curves would prove little.
    assert cpu_losses[-1] < cpu_losses[0]
    torch.testing.assert_close(tessera_losses, cpu_losses, rtol=RTOL, atol=ATOL)
    for (name, p_cpu), p_tessera in zip(cpu_model.named_parameters(), tessera_model.parameters()):
        assert p_tessera.device == device, name
        torch.testing.assert_close(p_tessera.detach().cpu(), p_cpu.detach(), rtol=RTOL, atol=ATOL,
                                   msg=lambda m, name=name: f"parameter {name}: {m}")


def require_conv_kernel():
    # convolution_overrideable has a throwing default kernel for PrivateUse1,
    # so the CPU fallback cannot serve it: a CNN needs the native kernel.
    if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::convolution_overrideable",
                                                         "PrivateUse1"):
        pytest.xfail("tessera registers no aten::convolution_overrideable kernel yet "
                     "(PyTorch's default for PrivateUse1 raises; the CPU fallback cannot serve it)")


OPTIMIZERS = {
    "sgd_momentum": lambda foreach: lambda params: torch.optim.SGD(
        params, lr=0.05, momentum=0.9, weight_decay=1e-3, foreach=foreach),
    "sgd_nesterov": lambda foreach: lambda params: torch.optim.SGD(
        params, lr=0.05, momentum=0.9, nesterov=True, foreach=foreach),
    "adam": lambda foreach: lambda params: torch.optim.Adam(
        params, lr=1e-2, weight_decay=1e-3, foreach=foreach),
    "adam_amsgrad": lambda foreach: lambda params: torch.optim.Adam(
        params, lr=1e-2, amsgrad=True, foreach=foreach),
    "adamw": lambda foreach: lambda params: torch.optim.AdamW(
        params, lr=1e-2, weight_decay=1e-2, foreach=foreach),
}
FOREACH = {"default": None, "foreach": True, "for_loop": False}


@pytest.mark.parametrize("foreach", FOREACH.keys())
@pytest.mark.parametrize("optimizer", OPTIMIZERS.keys())
def test_mlp_training_matches_cpu(tessera, optimizer, foreach):
    assert_same_training(make_mlp, OPTIMIZERS[optimizer](FOREACH[foreach]), mlp_batches(), tessera)


@pytest.mark.parametrize("foreach", FOREACH.keys())
def test_mlp_training_with_grad_clipping_matches_cpu(tessera, foreach):
    # clip_grad_norm_ takes the foreach path (_foreach_norm, _foreach_mul_)
    # on tessera; the gradient norms of this run are about 0.5, so a max
    # norm of 0.1 clips on every step.
    assert_same_training(make_mlp, OPTIMIZERS["sgd_momentum"](FOREACH[foreach]), mlp_batches(),
                         tessera, clip_norm=0.1)


@pytest.mark.parametrize("optimizer", ["sgd_momentum", "adam", "adamw"])
def test_cnn_training_matches_cpu(tessera, optimizer):
    require_conv_kernel()
    assert_same_training(SmallCNN, OPTIMIZERS[optimizer](None), cnn_batches(), tessera)


def test_default_optimizers_pick_foreach_on_tessera(tessera):
    # With foreach=None PyTorch chooses the multi-tensor path for devices in
    # _get_foreach_kernels_supported_devices; tessera must be one of them, or
    # the "default" cases above would only repeat the for-loop ones.
    from torch.optim.optimizer import _default_to_fused_or_foreach

    params = [p.to(tessera) for p in make_mlp().parameters()]
    _, use_foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
    assert use_foreach


def test_training_fallback_report(tessera, capsys):
    """One MLP Adam run with the fallback counters printed: the ops that still
    run through the CPU fallback during training."""
    torch_tessera.reset_fallback_stats()
    assert_same_training(make_mlp, OPTIMIZERS["adam"](None), mlp_batches(), tessera)
    stats = torch_tessera.fallback_stats()
    with capsys.disabled():
        total = sum(stats.values())
        print(f"\n[tessera fallback during MLP+Adam training: {total} calls, {len(stats)} ops]")
        for name, calls in sorted(stats.items(), key=lambda kv: -kv[1]):
            print(f"  {name}: {calls}")
    # Counting must work: every count is positive and names an aten op.
    assert all(calls > 0 and name.startswith("aten::") for name, calls in stats.items())


def test_state_dict_round_trip(tessera):
    cpu_model = seeded(make_mlp)
    tessera_model = copy.deepcopy(cpu_model).to(tessera)

    state = tessera_model.state_dict()
    assert set(state) == set(cpu_model.state_dict())
    for name, value in state.items():
        assert value.device == tessera, name
        torch.testing.assert_close(value.cpu(), cpu_model.state_dict()[name], rtol=0, atol=0)

    # tessera -> CPU model, through torch.save / torch.load.
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, map_location="cpu")
    restored = make_mlp()
    restored.load_state_dict(loaded)
    for name, value in restored.state_dict().items():
        torch.testing.assert_close(value, cpu_model.state_dict()[name], rtol=0, atol=0)

    # CPU state -> existing tessera model: copied into the tessera parameters in place.
    other = make_mlp().to(tessera)
    weight_before = other[0].weight
    other.load_state_dict(cpu_model.state_dict())
    assert other[0].weight is weight_before and other[0].weight.device == tessera
    for name, value in other.state_dict().items():
        torch.testing.assert_close(value.cpu(), cpu_model.state_dict()[name], rtol=0, atol=0)

    # Optimizer state (exp_avg... on tessera) survives the round trip too.
    optimizer = torch.optim.Adam(other.parameters(), lr=1e-2)
    x, y = mlp_batches(steps=1)[0]
    F.cross_entropy(other(x.to(tessera)), y.to(tessera)).backward()
    optimizer.step()
    buffer = io.BytesIO()
    torch.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    opt_state = torch.load(buffer)
    for param_id, param_state in optimizer.state_dict()["state"].items():
        for key, value in param_state.items():
            torch.testing.assert_close(opt_state["state"][param_id][key].cpu(), value.cpu(),
                                       rtol=0, atol=0)
            if key != "step":  # Adam keeps its step count on the CPU unless capturable.
                assert opt_state["state"][param_id][key].device == tessera


def test_no_grad_inference_matches_cpu(tessera):
    cpu_model = seeded(make_mlp).eval()
    tessera_model = copy.deepcopy(cpu_model).to(tessera)
    x = torch.randn(64, 20, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = cpu_model(x)
        out = tessera_model(x.to(tessera))
    assert out.device == tessera
    assert not out.requires_grad and out.grad_fn is None
    torch.testing.assert_close(out.cpu(), expected, rtol=RTOL, atol=ATOL)
    with torch.inference_mode():
        out = tessera_model(x.to(tessera))
    assert out.is_inference()
    torch.testing.assert_close(out.cpu(), expected, rtol=RTOL, atol=ATOL)


def test_no_grad_cnn_inference_matches_cpu(tessera):
    require_conv_kernel()
    cpu_model = seeded(SmallCNN).eval()
    tessera_model = copy.deepcopy(cpu_model).to(tessera)
    x = cnn_batches(steps=1)[0][0]
    with torch.no_grad():
        torch.testing.assert_close(tessera_model(x.to(tessera)).cpu(), cpu_model(x),
                                   rtol=RTOL, atol=ATOL)


# An op tessera has no kernel for (a log-space cumulative sum), so it runs
# only through the CPU fallback.
FALLBACK_ONLY_OP = "aten::_logcumsumexp"


def test_fallback_switch_turns_missing_kernel_into_not_implemented(tessera):
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(FALLBACK_ONLY_OP, "PrivateUse1"), (
        f"{FALLBACK_ONLY_OP} now has a tessera kernel: pick another op for this test")
    x = torch.linspace(-0.9, 0.9, 7).to(tessera)

    torch_tessera.reset_fallback_stats()
    assert torch_tessera.fallback_enabled()
    torch.testing.assert_close(torch.logcumsumexp(x, 0).cpu(), torch.logcumsumexp(x.cpu(), 0))
    assert torch_tessera.fallback_stats().get(FALLBACK_ONLY_OP) == 1

    torch_tessera.set_fallback_enabled(False)
    try:
        assert not torch_tessera.fallback_enabled()
        with pytest.raises(NotImplementedError, match="logcumsumexp"):
            torch.logcumsumexp(x, 0)
    finally:
        torch_tessera.set_fallback_enabled(True)
    # The refused call was not counted, and the switch turns back on.
    assert torch_tessera.fallback_stats().get(FALLBACK_ONLY_OP) == 1
    torch.testing.assert_close(torch.logcumsumexp(x, 0).cpu(), torch.logcumsumexp(x.cpu(), 0))
