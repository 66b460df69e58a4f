"""torch.amp.GradScaler on tessera: its two ops,
_amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, run
natively on every tessera device (the runtime's amp_unscale_and_check_ and
amp_update_scale_) and give the CPU's gradients, flags and scales; float16
training of a Hugging Face model with the scaler matches the CPU's step for
step, with no CPU fallback."""

import copy
import math

import pytest
import torch
import torch_tessera

from bridge_testing import assert_no_fallback, every_device
from hf_model_zoo import build


def gradients(seed):
    """Gradients of several dtypes and shapes, one of them empty."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(5, 7, generator=g) * 1e4, torch.randn(3, generator=g, dtype=torch.float64),
            torch.randn(2, 3, 4, generator=g).to(torch.bfloat16), torch.empty(0),
            torch.randn(64, generator=g).t().contiguous()]


def unscale(grads, found, inv_scale, device):
    grads = [x.to(device) for x in grads]
    found = found.to(device)
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale.to(device))
    return [x.cpu() for x in grads], found.cpu()


@every_device
@pytest.mark.parametrize("poison", [None, math.inf, -math.inf, math.nan], ids=str)
@pytest.mark.parametrize("where", [0, 1, 2], ids=lambda w: f"in_grad{w}")
def test_unscale_and_check_as_the_cpu(device, poison, where):
    grads = gradients(seed=where)
    if poison is not None:
        grads[where].view(-1)[1] = poison
    # 1/3 is not a power of two: the products must round as the CPU's.
    inv_scale = torch.tensor(1.0 / 3.0)
    torch_tessera.reset_fallback_stats()
    got, got_found = unscale(grads, torch.zeros(1), inv_scale, device)
    assert_no_fallback()
    want, want_found = unscale(grads, torch.zeros(1), inv_scale, "cpu")
    assert got_found.item() == want_found.item() == (0.0 if poison is None else 1.0)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


@every_device
def test_found_inf_is_never_cleared(device):
    grads = gradients(seed=4)  # all finite
    _, found = unscale(grads, torch.ones(1), torch.tensor(0.5), device)
    assert found.item() == 1.0


@every_device
@pytest.mark.parametrize("growth, backoff, interval", [(2.0, 0.5, 3), (1.7, 0.3, 2), (2.0, 0.5, 1)])
def test_update_scale_follows_the_cpu(device, growth, backoff, interval):
    pattern = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0]
    states = {}
    for dev in ("cpu", device):
        scale = torch.full((), 1024.0, device=dev)
        tracker = torch.zeros(1, dtype=torch.int32, device=dev)
        torch_tessera.reset_fallback_stats()
        history = []
        for bad in pattern:
            found = torch.full((1,), float(bad), device=dev)
            out = torch._amp_update_scale_(scale, tracker, found, growth, backoff, interval)
            assert out is scale
            history.append((scale.item(), tracker.item()))
        if dev == device:
            assert_no_fallback()
        states[str(dev)] = history
    assert states[str(device)] == states["cpu"]


@every_device
def test_a_scale_that_would_overflow_stays(device):
    scale = torch.full((), 3e38, device=device)
    tracker = torch.full((1,), 1, dtype=torch.int32, device=device)
    torch._amp_update_scale_(scale, tracker, torch.zeros(1, device=device), 2.0, 0.5, 2)
    assert scale.item() == pytest.approx(3e38) and tracker.item() == 0


@every_device
def test_bad_arguments_name_the_op(device):
    scale = torch.ones((), device=device)
    found = torch.zeros(1, device=device)
    with pytest.raises(RuntimeError, match="amp_update_scale_: growth_tracker must be int32, got int64"):
        torch._amp_update_scale_(scale, torch.zeros(1, dtype=torch.int64, device=device), found,
                                 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="amp_unscale_and_check_: inv_scale must be a 1-element"):
        torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(2, device=device)], found,
                                                         torch.ones(2, device=device))
    with pytest.raises(RuntimeError, match="gradient 0 must be floating, got int64"):
        torch._amp_foreach_non_finite_check_and_unscale_(
            [torch.ones(2, dtype=torch.int64, device=device)], found, torch.ones((), device=device))


@every_device
def test_float16_training_with_the_scaler_matches_the_cpu(device):
    """GPT-2 under float16 autocast with GradScaler and AdamW, as the AMP
    recipe writes it: the same losses, skipped steps and scales as the
    CPU. An initial scale of 2^24 overflows float16 gradients at first, so
    the scaler backs off and skips steps before it trains."""
    model, batch = build("gpt2")
    runs = {}
    for dev in ("cpu", device):
        m = copy.deepcopy(model).to(dev)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler(torch.device(dev).type, init_scale=2.0 ** 24,
                                      growth_interval=2)
        inputs = {k: v.to(dev) for k, v in batch.items()}
        torch_tessera.reset_fallback_stats()
        history = []
        for _ in range(6):
            opt.zero_grad()
            with torch.autocast(torch.device(dev).type, dtype=torch.float16):
                loss = m(**inputs).loss
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            history.append((loss.item(), scaler.get_scale()))
        if dev == device:
            assert_no_fallback()
        runs[str(dev)] = history
    cpu, tessera = runs["cpu"], runs[str(device)]
    assert [s for _, s in tessera] == [s for _, s in cpu]
    assert cpu[0][1] < 2.0 ** 24, "the first steps should have overflowed"
    for (a, _), (b, _) in zip(tessera, cpu):
        assert a == pytest.approx(b, rel=2e-3)
