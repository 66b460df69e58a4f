"""The ops the bridge composes of tessera ops, against CPU on every tessera
device, with no CPU fallback: sgn, threshold, hardshrink, softshrink and
xlogy (bridge/csrc/ops/elementwise_composite.cc: functional, in-place and
out= forms, gradients, NaN, inf, +-0 and the band's edges), and glu,
prelu, the smooth L1, Huber, binary cross-entropy, multi-class and
multi-label margin losses and group norm's backward (nn_composite.cc: every reduction, the band's edges,
parameter gradients, out= forms), and reflection and replication padding
(padding_composite.cc).
"""

import copy

import pytest
import torch
import torch.nn.functional as F
import torch_tessera

from bridge_testing import assert_no_fallback, every_device


SPECIAL = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 0.5, -0.5, 0.49,
                        -0.51, 2.0, -3.0, 1e-8])


def values(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return torch.cat([SPECIAL, torch.randn(40, generator=g) * 2]).to(dtype)


def assert_same(got, want):
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-6, equal_nan=True)


FUNCTIONS = {
    "sgn": lambda x: torch.sgn(x),
    "threshold": lambda x: F.threshold(x, 0.5, -7.0),
    "hardshrink": lambda x: F.hardshrink(x, 0.5),
    "softshrink": lambda x: F.softshrink(x, 0.5),
    "xlogy": lambda x: torch.xlogy(x, x.abs() + 0.25),
    "xlogy zero x": lambda x: torch.xlogy(x * 0, x),
    "xlogy scalar y": lambda x: torch.xlogy(x, 3.0),
}


@every_device
@pytest.mark.parametrize("name", FUNCTIONS.keys())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_forward_matches_cpu(device, name, dtype):
    x = values(dtype)
    torch_tessera.reset_fallback_stats()
    got = FUNCTIONS[name](x.to(device))
    assert_no_fallback()
    assert_same(got, FUNCTIONS[name](x))


@every_device
def test_integer_inputs(device):
    x = torch.arange(-5, 6)
    for f in (torch.sgn, lambda t: F.threshold(t, 1, 9), lambda t: torch.xlogy(t, t.abs() + 1)):
        assert_same(f(x.to(device)), f(x))


@every_device
def test_in_place_and_out_forms(device):
    x = values()
    for name, in_place, out_form in [
        ("sgn_", lambda t: t.sgn_(), lambda t, o: torch.sgn(t, out=o)),
        ("threshold_", lambda t: F.threshold_(t, 0.5, -1.0),
         lambda t, o: torch.threshold(t, 0.5, -1.0, out=o)),
        ("xlogy_", lambda t: t.xlogy_(t.abs() + 1), lambda t, o: torch.xlogy(t, t.abs() + 1, out=o)),
    ]:
        want = in_place(x.clone())
        dev = x.to(device)
        result = in_place(dev)
        assert result.data_ptr() == dev.data_ptr(), name
        assert_same(dev, want)
        out = torch.empty(0, device=device)
        out_form(x.to(device), out)
        assert_same(out, want)
    for f, out_op in ((F.hardshrink, torch.ops.aten.hardshrink.out),
                      (F.softshrink, torch.ops.aten.softshrink.out)):
        out = torch.empty(3, device=device)  # resized to the input's shape
        out_op(x.to(device), 0.5, out=out)
        assert_same(out, f(x, 0.5))


@every_device
@pytest.mark.parametrize("module", [torch.nn.Hardshrink(0.5), torch.nn.Softshrink(0.5),
                                    torch.nn.Threshold(0.1, 20.0), torch.nn.Softsign(),
                                    torch.nn.L1Loss(), torch.nn.KLDivLoss(reduction="batchmean")],
                         ids=lambda m: type(m).__name__)
def test_module_gradients_match_cpu(device, module):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 5, generator=g)
    x[0, 0] = 0.5  # on the band's edge
    target = torch.rand(6, 5, generator=g)
    args_cpu = [x.clone().requires_grad_()]
    if isinstance(module, (torch.nn.L1Loss, torch.nn.KLDivLoss)):
        args_cpu.append(target)
    args_dev = [a.detach().to(device).requires_grad_(a.requires_grad) for a in args_cpu]
    torch_tessera.reset_fallback_stats()
    out_dev = module(*args_dev)
    out_dev.sum().backward()
    assert_no_fallback()
    out_cpu = module(*args_cpu)
    out_cpu.sum().backward()
    torch.testing.assert_close(out_dev.detach().cpu(), out_cpu.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(args_dev[0].grad.cpu(), args_cpu[0].grad, rtol=1e-5, atol=1e-6)


# -- glu, prelu, smooth L1 and Huber losses (bridge/csrc/ops/nn_composite.cc)

class BceOfProbabilities(torch.nn.Module):
    """BCELoss on sigmoid(x) against sigmoid(t): inputs and targets in (0, 1)."""

    def __init__(self, reduction, weighted):
        super().__init__()
        self.weight = torch.linspace(0.2, 2.0, 6) if weighted else None
        self.reduction = reduction

    def forward(self, x, t):
        weight = None if self.weight is None else self.weight.to(x.device)
        return F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight, reduction=self.reduction)


NN_CASES = {
    **{f"BCELoss {r}{' weighted' if w else ''}": (lambda r=r, w=w: BceOfProbabilities(r, w), 2)
       for r in ("mean", "sum", "none") for w in (False, True)},
    "GroupNorm 2 groups": (lambda: torch.nn.GroupNorm(2, 4), 1),
    "GroupNorm 4 groups without affine": (lambda: torch.nn.GroupNorm(4, 4, affine=False), 1),
    "GLU dim -1": (lambda: torch.nn.GLU(), 1),
    "GLU dim 1": (lambda: torch.nn.GLU(dim=1), 1),
    "PReLU one weight": (lambda: torch.nn.PReLU(), 1),
    "PReLU per channel": (lambda: torch.nn.PReLU(4, init=0.1), 1),
    **{f"SmoothL1Loss {r} beta {b}": (lambda r=r, b=b: torch.nn.SmoothL1Loss(reduction=r, beta=b), 2)
       for r in ("mean", "sum", "none") for b in (1.0, 0.5, 0.0)},
    **{f"HuberLoss {r} delta {d}": (lambda r=r, d=d: torch.nn.HuberLoss(reduction=r, delta=d), 2)
       for r in ("mean", "sum", "none") for d in (1.0, 0.3)},
}


@every_device
@pytest.mark.parametrize("name", NN_CASES.keys())
def test_nn_composites_match_cpu(device, name):
    make, arity = NN_CASES[name]
    torch.manual_seed(0)
    module_cpu = make()
    module_dev = copy.deepcopy(module_cpu).to(device)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 4, 6, generator=g) * 2
    x[0, 0, :3] = torch.tensor([1.0, 0.5, -0.3])  # on the losses' band edges (target 0 there)
    inputs_cpu = [x.requires_grad_()]
    if arity == 2:
        target = torch.randn(3, 4, 6, generator=g)
        target[0, 0, :3] = 0
        inputs_cpu.append(target)
    inputs_dev = [t.detach().to(device).requires_grad_(t.requires_grad) for t in inputs_cpu]
    torch_tessera.reset_fallback_stats()
    out_dev = module_dev(*inputs_dev)
    (out_dev * torch.linspace(0.5, 1.5, out_dev.numel(), device=device).view_as(out_dev)).sum().backward()
    assert_no_fallback()
    out_cpu = module_cpu(*inputs_cpu)
    (out_cpu * torch.linspace(0.5, 1.5, out_cpu.numel()).view_as(out_cpu)).sum().backward()
    torch.testing.assert_close(out_dev.detach().cpu(), out_cpu.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(inputs_dev[0].grad.cpu(), inputs_cpu[0].grad, rtol=1e-5, atol=1e-6)
    for p_dev, p_cpu in zip(module_dev.parameters(), module_cpu.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p_cpu.grad, rtol=1e-5, atol=1e-6)


@every_device
def test_glu_refuses_an_odd_dimension(device):
    with pytest.raises(RuntimeError, match="must be even"):
        torch.nn.functional.glu(torch.ones(3, 5, device=device))


@every_device
def test_nn_composite_out_forms(device):
    g = torch.Generator().manual_seed(3)
    x, t = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g)
    for op, args in ((torch.ops.aten.glu.out, (x, -1)),
                     (torch.ops.aten.smooth_l1_loss.out, (x, t, 0, 0.7)),
                     (torch.ops.aten.huber_loss.out, (x, t, 0, 0.7))):
        out = torch.empty(1, device=device)  # resized
        op(*[a.to(device) if isinstance(a, torch.Tensor) else a for a in args], out=out)
        want = op(*args, out=torch.empty(1))
        torch.testing.assert_close(out.cpu(), want)


# -- reflection and replication padding (bridge/csrc/ops/padding_composite.cc)

PAD_CASES = [
    (mode, dims, shape, padding)
    for mode in ("reflect", "replicate")
    for dims, shape, padding in (
        (1, (2, 3, 7), (2, 3)), (1, (3, 5), (4, 1)), (1, (2, 3, 7), (-1, 2)),
        (2, (2, 3, 5, 6), (1, 2, 3, 0)), (2, (3, 4, 4), (3, 3, 1, 1)),
        (3, (1, 2, 4, 5, 3), (1, 1, 2, 0, 1, 2)),
    )
]


@every_device
@pytest.mark.parametrize("mode,dims,shape,padding", PAD_CASES,
                         ids=[f"{m}{d}d-{list(s)}-{list(p)}" for m, d, s, p in PAD_CASES])
def test_padding_matches_cpu(device, mode, dims, shape, padding):
    g = torch.Generator().manual_seed(4)
    x_cpu = torch.randn(shape, generator=g).requires_grad_()
    x_dev = x_cpu.detach().to(device).requires_grad_()
    torch_tessera.reset_fallback_stats()
    y_dev = F.pad(x_dev, padding, mode=mode)
    weights = torch.randn(y_dev.shape, generator=g)
    (y_dev * weights.to(device)).sum().backward()
    assert_no_fallback()
    y_cpu = F.pad(x_cpu, padding, mode=mode)
    (y_cpu * weights).sum().backward()
    torch.testing.assert_close(y_dev.detach().cpu(), y_cpu.detach())
    torch.testing.assert_close(x_dev.grad.cpu(), x_cpu.grad, rtol=1e-5, atol=1e-6)


@every_device
def test_reflection_padding_as_wide_as_the_input_is_refused(device):
    with pytest.raises(RuntimeError, match="less than the corresponding input dimension"):
        F.pad(torch.ones(1, 2, 3, device=device), (3, 0), mode="reflect")


@every_device
def test_binary_cross_entropy_refuses_inputs_outside_0_1(device):
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(torch.tensor([0.5, 1.5], device=device), torch.ones(2, device=device))


MARGIN_CASES = [(p, margin, weighted, reduction, one_d)
                for p in (1, 2) for margin in (1.0, 0.3) for weighted in (False, True)
                for reduction in ("mean", "sum", "none") for one_d in (False, True)
                if not (one_d and (weighted or margin != 1.0))]


@every_device
@pytest.mark.parametrize("p,margin,weighted,reduction,one_d", MARGIN_CASES,
                         ids=[f"p{p}-m{m}-{'w' if w else 'nw'}-{r}-{'1d' if o else '2d'}"
                              for p, m, w, r, o in MARGIN_CASES])
def test_multi_margin_loss_matches_cpu(device, p, margin, weighted, reduction, one_d):
    g = torch.Generator().manual_seed(5)
    x_cpu = torch.randn((5,) if one_d else (4, 5), generator=g).requires_grad_()
    target = torch.tensor([2]) if one_d else torch.tensor([0, 4, 2, 2])
    weight = torch.linspace(0.5, 2.0, 5) if weighted else None
    loss_fn = torch.nn.MultiMarginLoss(p=p, margin=margin, weight=weight, reduction=reduction)
    x_dev = x_cpu.detach().to(device).requires_grad_()
    torch_tessera.reset_fallback_stats()
    out_dev = torch.nn.MultiMarginLoss(p=p, margin=margin, reduction=reduction,
                                       weight=None if weight is None else weight.to(device))(
        x_dev, target.to(device))
    (out_dev * torch.linspace(0.5, 1.5, out_dev.numel(), device=device).view_as(out_dev)).sum().backward()
    assert_no_fallback()
    out_cpu = loss_fn(x_cpu, target)
    (out_cpu * torch.linspace(0.5, 1.5, out_cpu.numel()).view_as(out_cpu)).sum().backward()
    assert out_dev.shape == out_cpu.shape
    torch.testing.assert_close(out_dev.detach().cpu(), out_cpu.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(x_dev.grad.cpu(), x_cpu.grad, rtol=1e-5, atol=1e-6)


@every_device
def test_multi_margin_loss_refuses_bad_targets(device):
    with pytest.raises(RuntimeError, match="out of range"):
        F.multi_margin_loss(torch.ones(2, 3, device=device), torch.tensor([0, 3], device=device))
    with pytest.raises(RuntimeError, match="p == 1 and p == 2"):  # F.multi_margin_loss checks first
        torch.ops.aten.multi_margin_loss(torch.ones(2, 3, device=device),
                                         torch.tensor([0, 1], device=device), 3)


# Targets list each sample's classes up to the first -1: a duplicate, a
# sample with every class, one with none, and entries after the -1 that
# must be ignored.
MULTILABEL_TARGETS = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [0, 1, 2, 3, 4],
                                   [-1, 2, 2, 2, 2]])


@every_device
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("one_d", [False, True], ids=["2d", "1d"])
def test_multilabel_margin_loss_matches_cpu(device, reduction, one_d):
    g = torch.Generator().manual_seed(6)
    # Values on a coarse grid make hinges of exactly 0 (the kink) likely.
    x_cpu = (torch.randint(-4, 5, (4, 5), generator=g) / 4.0).requires_grad_()
    target = MULTILABEL_TARGETS
    if one_d:
        x_cpu, target = x_cpu.detach()[0].requires_grad_(), target[0]
    x_dev = x_cpu.detach().to(device).requires_grad_()
    loss_fn = torch.nn.MultiLabelMarginLoss(reduction=reduction)
    torch_tessera.reset_fallback_stats()
    out_dev = loss_fn(x_dev, target.to(device))
    (out_dev * torch.linspace(0.5, 1.5, out_dev.numel(), device=device).view_as(out_dev)).sum().backward()
    assert_no_fallback()
    out_cpu = loss_fn(x_cpu, target)
    (out_cpu * torch.linspace(0.5, 1.5, out_cpu.numel()).view_as(out_cpu)).sum().backward()
    assert out_dev.shape == out_cpu.shape
    torch.testing.assert_close(out_dev.detach().cpu(), out_cpu.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(x_dev.grad.cpu(), x_cpu.grad, rtol=1e-5, atol=1e-6)
    out, is_target = torch.ops.aten.multilabel_margin_loss_forward(x_dev, target.to(device), 0)
    assert torch.equal(is_target.cpu(),
                       torch.ops.aten.multilabel_margin_loss_forward(x_cpu, target, 0)[1])


@every_device
def test_multilabel_margin_loss_refuses_bad_targets(device):
    x = torch.ones(2, 3, device=device)
    for bad in ([[0, 3, -1], [1, -1, 0]], [[-2, 0, 1], [1, -1, 0]]):
        with pytest.raises(RuntimeError, match="out of range"):
            torch.ops.aten.multilabel_margin_loss_forward(x, torch.tensor(bad, device=device), 1)
    with pytest.raises(RuntimeError, match=r"multilabel_margin_loss: expected input \[C\] or \[N, C\]"):
        torch.ops.aten.multilabel_margin_loss_forward(x, torch.zeros(3, dtype=torch.long, device=device), 1)


@every_device
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses_of_a_scalar_input(device, reduction):
    # A 0-d input is one sample of one class, as on the CPU.
    for loss_fn, target in ((F.multi_margin_loss, 0), (F.multilabel_margin_loss, 0),
                            (F.multilabel_margin_loss, -1)):
        x_cpu = torch.tensor(0.3, requires_grad=True)
        x_dev = x_cpu.detach().to(device).requires_grad_()
        out_cpu = loss_fn(x_cpu, torch.tensor(target), reduction=reduction)
        torch_tessera.reset_fallback_stats()
        out_dev = loss_fn(x_dev, torch.tensor(target, device=device), reduction=reduction)
        out_dev.backward()
        assert_no_fallback()
        out_cpu.backward()
        assert out_dev.shape == out_cpu.shape == ()
        torch.testing.assert_close(out_dev.detach().cpu(), out_cpu.detach())
        torch.testing.assert_close(x_dev.grad.cpu(), x_cpu.grad)


@every_device
def test_unreduced_multi_margin_loss_has_the_targets_shape(device):
    x = torch.randn(5)
    for target in (torch.tensor(2), torch.tensor([2])):
        expected = F.multi_margin_loss(x, target, reduction="none")
        actual = F.multi_margin_loss(x.to(device), target.to(device), reduction="none")
        assert actual.shape == expected.shape
        torch.testing.assert_close(actual.cpu(), expected)
