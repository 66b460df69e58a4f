"""Native kernels for the ops everyday models call beyond the first op set,
on every tessera device: log10, the hyperbolic and inverse trigonometric
functions, hardswish and hardsigmoid (and their gradients), isneginf and
isposinf, fmod, logaddexp and logaddexp2; the activations leaky_relu, elu
(selu, celu), softplus, hardtanh (relu6), logsigmoid and mish (and their
gradients); binary_cross_entropy_with_logits,
adaptive_avg_pool2d, aminmax, cross and cdist; cummax and cummin, median and
kthvalue, unfold (im2col) and its fold backward, Tensor.unfold's backward,
masked_scatter, nearest and bilinear upsampling (forward and backward).

Each op runs PyTorch's own OpInfo samples (reference inputs: 0-d, empty,
broadcast, non-contiguous and extremal values) on tessera and on the CPU,
forward and, where the op is differentiable, backward through autograd;
results must be equal within assert_close's tolerances and nothing may run
through the CPU fallback. The dtype rules and call forms OpInfo leaves out
(integer and bool inputs, Scalar operands, in-place and out=, errors)
follow.
"""

import copy

import pytest
import torch
import torch_tessera

from bridge_testing import assert_no_fallback

pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

from opinfo_testing import (  # noqa: E402
    assert_same, compare_backward, compare_forward, opinfo_name)

# OpInfo calls torch.cross without dim and the deprecated upsample_* names.
pytestmark = pytest.mark.filterwarnings("ignore:.*(deprecated|dim arg):UserWarning")

DEVICES = [torch.device("tessera", i) for i in range(torch.tessera.device_count())]
every_device = pytest.mark.parametrize(
    "device", DEVICES or [pytest.param(None, marks=pytest.mark.skip("no tessera device"))], ids=str)

# Samples per op, dtype and device: OpInfo's reference inputs, in order.
MAX_SAMPLES = 12
MAX_GRAD_SAMPLES = 4

POINTWISE_OPS = [
    "log10", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "nn.functional.hardswish", "nn.functional.hardsigmoid", "isneginf", "isposinf",
    "fmod", "logaddexp", "logaddexp2",
    "nn.functional.leaky_relu", "nn.functional.elu", "nn.functional.selu", "nn.functional.celu",
    "nn.functional.softplus", "nn.functional.hardtanh", "nn.functional.relu6",
    "nn.functional.logsigmoid", "nn.functional.mish",
]
COMPOSITE_OPS = [
    "nn.functional.binary_cross_entropy_with_logits", "nn.functional.adaptive_avg_pool2d",
    "aminmax", "cross", "linalg.cross", "cdist",
    "cummax", "cummin", "median", "kthvalue", "nansum", "nanmean", "equal",
    "masked_scatter", "nn.functional.unfold", "unfold",
    "nn.functional.interpolate.nearest", "nn.functional.interpolate.bilinear",
    "nn.functional.upsample_nearest", "nn.functional.upsample_bilinear",
]
OPINFO_OPS = POINTWISE_OPS + COMPOSITE_OPS

OPS = {opinfo_name(op): op for op in op_db}
OPS = {name: OPS[name] for name in OPINFO_OPS}

# Ops whose index among equal values PyTorch leaves unspecified: their
# indices are checked by the values they pick.
TIES_UNSPECIFIED = {"median", "kthvalue"}


def assert_same_forward_backward(fn, x, device):
    """fn on a leaf x and on its copy on device: outputs, then input grads
    for one random output gradient, equal, with no CPU fallback."""
    x_dev = x.detach().to(device).requires_grad_()
    y = fn(x)
    y_dev = fn(x_dev)
    assert_same(y_dev, y, "forward")
    g = torch.randn_like(y)
    y.backward(g)
    y_dev.backward(g.to(device))
    assert_same(x_dev.grad, x.grad, "backward")
    assert_no_fallback()


def dtypes_of(op):
    """float32 always, then int64 where the op takes it, else float64."""
    supported = op.supported_dtypes("cpu")
    return [torch.float32, torch.int64 if torch.int64 in supported else torch.float64]


def opinfo_cases(names):
    return [pytest.param(n, dt, id=f"{n}-{str(dt).split('.')[-1]}")
            for n in names for dt in dtypes_of(OPS[n])]


def by_picked_values(name, sample, out):
    """(values, indices) -> (values, the input's values at indices)."""
    values, indices = out
    if name == "kthvalue":  # kthvalue(k, dim=-1, keepdim=False)
        dim = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("dim", -1)
    else:  # median(dim, keepdim=False)
        dim = sample.args[0] if sample.args else sample.kwargs["dim"]
    source = sample.input.to(values.device)
    if source.dim() == 0:
        return values, values
    keepdim = values.dim() == source.dim()
    idx = indices if keepdim else indices.unsqueeze(dim)
    picked = source.gather(dim, idx)
    return values, picked if keepdim else picked.squeeze(dim)


@every_device
@pytest.mark.parametrize("name,dtype", opinfo_cases(OPINFO_OPS))
def test_opinfo_forward_matches_cpu(device, name, dtype):
    def picked(sample, out):
        return by_picked_values(name, sample, out) if isinstance(out, tuple) else out

    comparable = picked if name in TIES_UNSPECIFIED else None
    assert compare_forward(OPS[name], device, dtype, MAX_SAMPLES, comparable=comparable) > 0


@every_device
@pytest.mark.parametrize("name", [n for n in OPINFO_OPS if OPS[n].supports_autograd])
def test_opinfo_backward_matches_cpu(device, name):
    assert compare_backward(OPS[name], device, MAX_GRAD_SAMPLES) > 0


# -- Dtype rules and call forms OpInfo does not sample.

FLOAT_UNARY = ["log10", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def values(dtype):
    """Values in each op's domain and beyond it (NaN there, as the CPU)."""
    v = torch.tensor([[-2.0, -1.0, -0.5, 0.0], [0.25, 0.5, 1.0, 3.0]])
    if dtype == torch.bool:
        return v > 0
    return (v.abs() if dtype == torch.uint8 else v).to(dtype)


@every_device
@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int32, torch.int64,
                                   torch.float16, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_unary_dtypes_promote_as_cpu(device, name, dtype):
    x = values(dtype)
    fn = getattr(torch, name)
    torch_tessera.reset_fallback_stats()
    assert_same(fn(x.to(device)), fn(x), f"{name}({dtype})")
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("name", FLOAT_UNARY + ["nn.functional.hardswish",
                                                "nn.functional.hardsigmoid"])
def test_unary_in_place_and_out(device, name):
    x = values(torch.float32)[:, 1:]  # non-contiguous
    fn = OPS[name].op
    out = torch.empty(2, 3)
    out_dev = torch.empty(2, 3, device=device)
    torch_tessera.reset_fallback_stats()
    if name.startswith("nn.functional."):
        short = name.split(".")[-1]
        y, y_dev = x.clone(), x.to(device)
        getattr(torch.nn.functional, short)(y, inplace=True)
        getattr(torch.nn.functional, short)(y_dev, inplace=True)
        assert_same(y_dev, y, name)
    else:
        y, y_dev = x.clone(), x.to(device)
        getattr(y, name + "_")()
        getattr(y_dev, name + "_")()
        assert_same(y_dev, y, name + "_")
        fn(x, out=out)
        fn(x.to(device), out=out_dev)
        assert_same(out_dev, out, name + " out=")
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("dtype", [torch.bool, torch.int16, torch.float16, torch.float32], ids=str)
def test_isneginf_isposinf(device, dtype):
    x = torch.tensor([float("-inf"), -1.0, 0.0, float("inf"), float("nan")])
    x = x.to(dtype) if dtype.is_floating_point else (x.nan_to_num(0, 0, 0)).to(dtype)
    torch_tessera.reset_fallback_stats()
    for fn in (torch.isneginf, torch.isposinf):
        assert_same(fn(x.to(device)), fn(x), str(fn))
        out = torch.empty(5, dtype=torch.bool, device=device)
        fn(x.to(device), out=out)
        assert_same(out, fn(x), f"{fn} out=")
        with pytest.raises(RuntimeError, match="non-boolean"):
            fn(x.to(device), out=torch.empty(5, device=device))
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.float16, torch.float32], ids=str)
def test_fmod_forms(device, dtype):
    a = torch.tensor([[7, -7, 5, -5], [9, 0, -9, 3]]).to(dtype)
    b = torch.tensor([3, 3, -2, -2]).to(dtype)
    a_dev, b_dev = a.to(device), b.to(device)
    torch_tessera.reset_fallback_stats()
    assert_same(torch.fmod(a_dev, b_dev), torch.fmod(a, b), "tensor")
    assert_same(torch.fmod(a_dev, 4), torch.fmod(a, 4), "int scalar")
    assert_same(torch.fmod(a_dev, 2.5), torch.fmod(a, 2.5), "float scalar")
    assert_same(a_dev % 4 - torch.fmod(a_dev, 4), a % 4 - torch.fmod(a, 4), "vs remainder")
    y, y_dev = a.clone(), a_dev.clone()
    y.fmod_(b)
    y_dev.fmod_(b_dev)
    assert_same(y_dev, y, "in place")
    out = torch.empty(2, 4, dtype=dtype, device=device)
    torch.fmod(a_dev, b_dev, out=out)
    assert_same(out, torch.fmod(a, b), "out=")
    assert_no_fallback()


@every_device
def test_integer_fmod_by_zero_raises(device):
    a = torch.tensor([5, 6]).to(device)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.fmod(a, torch.tensor([1, 0]).to(device))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.fmod(a, 0)
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("fn", [torch.logaddexp, torch.logaddexp2], ids=lambda f: f.__name__)
def test_logaddexp_extremes_and_errors(device, fn):
    inf = float("inf")
    a = torch.tensor([inf, -inf, -inf, 1e30, -1e30, 0.0, float("nan"), 88.0])
    b = torch.tensor([inf, -inf, 3.0, 1e30, 2.0, -0.0, 1.0, 88.0])
    torch_tessera.reset_fallback_stats()
    assert_same(fn(a.to(device), b.to(device)), fn(a, b), fn.__name__)
    out = torch.empty(8, device=device)
    fn(a.to(device), b.to(device), out=out)
    assert_same(out, fn(a, b), "out=")
    with pytest.raises(RuntimeError, match=fn.__name__):
        fn(torch.ones(2, dtype=torch.int64, device=device), torch.ones(2, dtype=torch.int64, device=device))
    assert_no_fallback()


# -- Activations in small blocks (the in-place modules' backward reads the
# result, not the input), out=, low-precision dtypes.

ACTIVATION_MODULES = [
    lambda: torch.nn.LeakyReLU(0.2, inplace=True), lambda: torch.nn.ELU(0.7, inplace=True),
    lambda: torch.nn.SELU(inplace=True), lambda: torch.nn.CELU(1.3, inplace=True),
    lambda: torch.nn.ReLU6(inplace=True), lambda: torch.nn.Hardtanh(-0.5, 2.0, inplace=True),
    lambda: torch.nn.Mish(inplace=True), lambda: torch.nn.Softplus(beta=2, threshold=3),
    lambda: torch.nn.LogSigmoid(), lambda: torch.nn.LeakyReLU(0.1),
    lambda: torch.nn.Hardswish(), lambda: torch.nn.Hardsigmoid(),  # MobileNetV3's blocks
]


@every_device
@pytest.mark.parametrize("make_module", ACTIVATION_MODULES,
                         ids=lambda f: repr(f()).replace(" ", ""))
def test_activation_modules_train_as_cpu(device, make_module):
    """A Linear, the activation (in place where it can be), a Linear:
    forward and backward match the CPU with no fallback."""
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(8, 16), make_module(), torch.nn.Linear(16, 4))
    x = torch.randn(6, 8) * 3
    block_dev = copy.deepcopy(block).to(device)
    torch_tessera.reset_fallback_stats()
    y, y_dev = block(x), block_dev(x.to(device))
    torch.testing.assert_close(y_dev.cpu(), y, rtol=1e-4, atol=1e-5)
    y.square().sum().backward()
    y_dev.square().sum().backward()
    assert_no_fallback()
    for (name, p), p_dev in zip(block.named_parameters(), block_dev.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p.grad, rtol=1e-4, atol=1e-5, msg=name)


ACTIVATION_CALLS = {
    "leaky_relu": lambda x, **kw: torch.ops.aten.leaky_relu(x, 0.3, **kw),
    "elu": lambda x, **kw: torch.ops.aten.elu(x, 0.5, 1.5, 2.0, **kw),
    "softplus": lambda x, **kw: torch.ops.aten.softplus(x, 0.5, 4.0, **kw),
    "hardtanh": lambda x, **kw: torch.ops.aten.hardtanh(x, -2.0, 1.5, **kw),
    "mish": lambda x, **kw: torch.ops.aten.mish(x, **kw),
}


@every_device
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("name", sorted(ACTIVATION_CALLS))
def test_activation_dtypes_and_out(device, name, dtype):
    fn = ACTIVATION_CALLS[name]
    x = (torch.linspace(-6, 6, 24) ** 3 / 20).reshape(4, 6).to(dtype)[:, 1:]  # non-contiguous
    torch_tessera.reset_fallback_stats()
    tol = dict(rtol=1e-2, atol=1e-2) if dtype != torch.float64 else {}
    torch.testing.assert_close(fn(x.to(device)).cpu(), fn(x), **tol)
    out, out_dev = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype, device=device)
    fn(x, out=out)
    fn(x.to(device), out=out_dev)
    torch.testing.assert_close(out_dev.cpu(), out, **tol)
    assert_no_fallback()


@every_device
def test_activation_errors(device):
    ints = torch.arange(4, device=device)
    with pytest.raises(RuntimeError, match="leaky_relu.*int64"):
        torch.nn.functional.leaky_relu(ints)
    x = torch.randn(3, device=device, requires_grad=True)
    y = torch.nn.functional.leaky_relu(x * 1, -0.5, inplace=True)
    with pytest.raises(RuntimeError, match="negative slope"):
        y.sum().backward()


@every_device
def test_equal_and_nansum_cases(device):
    """torch.equal's rules (sizes first, promotion, NaN unequal, one device)
    and nansum's integer and all-NaN cases, natively."""
    t = lambda *v, **kw: torch.tensor(v, device=device, **kw)  # noqa: E731
    torch_tessera.reset_fallback_stats()
    assert torch.equal(t(1, 2), t(1.0, 2.0))
    assert not torch.equal(t(1.0, 2.0), t(1.0, 2.0, 3.0))
    assert not torch.equal(t(float("nan")), t(float("nan")))
    assert torch.equal(torch.empty(0, 3, device=device), torch.empty(0, 3, device=device))
    assert not torch.equal(t(1.0, 2.0), t(1.0, 2.5))
    assert torch.nansum(t(1, 2, 3)).item() == 6
    assert torch.nansum(t(float("nan"), float("nan"))).item() == 0.0
    nan_rows = t([1.0, float("nan")], [float("nan"), float("nan")])
    torch.testing.assert_close(torch.nansum(nan_rows, dim=1, keepdim=True).cpu(),
                               torch.tensor([[1.0], [0.0]]))
    assert_no_fallback()
    with pytest.raises(RuntimeError, match="same device"):
        torch.equal(t(1.0), torch.tensor([1.0]))


# -- Composites: the cases models hit that OpInfo samples little.

@every_device
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_weights_and_extreme_logits(device, reduction):
    torch.manual_seed(0)
    logits = torch.randn(6, 5, dtype=torch.float64) * 40  # exp(40) overflows a naive form
    target = torch.rand(6, 5, dtype=torch.float64)
    weight = torch.rand(5, dtype=torch.float64)
    pos_weight = torch.rand(5, dtype=torch.float64) * 3
    assert_same_forward_backward(
        lambda x: torch.nn.functional.binary_cross_entropy_with_logits(
            x, target.to(x.device), weight=weight.to(x.device),
            pos_weight=pos_weight.to(x.device), reduction=reduction),
        logits.clone().requires_grad_(), device)


@every_device
@pytest.mark.parametrize("size", [(3, 5), (1, 1), (7, 7), (4, None)], ids=str)
def test_adaptive_avg_pool2d_output_sizes(device, size):
    x = torch.randn(2, 3, 7, 9).to(memory_format=torch.channels_last).requires_grad_()
    assert_same_forward_backward(
        lambda t: torch.nn.functional.adaptive_avg_pool2d(t, size), x, device)


@every_device
def test_cdist_p_values_and_euclidean_path(device):
    torch.manual_seed(0)
    for rows, p in [(5, 0.0), (5, 0.5), (5, 1.0), (5, 2.0), (5, 3.0), (5, float("inf")),
                    (40, 2.0)]:  # more than 25 rows: aten's matmul-based path
        a = torch.randn(2, rows, 4, requires_grad=True)
        b = torch.randn(3, 4, requires_grad=True)
        a_dev = a.detach().to(device).requires_grad_()
        b_dev = b.detach().to(device).requires_grad_()
        d, d_dev = torch.cdist(a, b, p=p), torch.cdist(a_dev, b_dev, p=p)
        assert_same(d_dev, d, f"p={p} rows={rows}")
        torch.autograd.backward(d.sum(), inputs=[a, b])
        torch.autograd.backward(d_dev.sum(), inputs=[a_dev, b_dev])
        assert_same((a_dev.grad, b_dev.grad), (a.grad, b.grad), f"grad p={p} rows={rows}")
    assert_no_fallback()


@every_device
def test_aminmax_and_cross_forms(device):
    x = torch.tensor([[3, -1, 7], [2, 2, -5]])
    torch_tessera.reset_fallback_stats()
    for kwargs in [{}, {"dim": 0}, {"dim": -1, "keepdim": True}]:
        assert_same(torch.aminmax(x.to(device), **kwargs), torch.aminmax(x, **kwargs), str(kwargs))
    lo, hi = torch.empty(0, dtype=x.dtype, device=device), torch.empty(0, dtype=x.dtype, device=device)
    torch.aminmax(x.to(device), dim=1, out=(lo, hi))
    assert_same((lo, hi), tuple(torch.aminmax(x, dim=1)), "out=")
    with pytest.raises(IndexError):
        torch.aminmax(torch.empty(2, 0, device=device), dim=1)
    a, b = torch.randn(4, 3), torch.randn(1, 3)
    assert_same(torch.cross(a.to(device), b.to(device), dim=1), torch.cross(a, b, dim=1), "cross")
    out = torch.empty(4, 3, device=device)
    torch.linalg.cross(a.to(device), b.to(device), out=out)
    assert_same(out, torch.linalg.cross(a, b), "cross out=")
    with pytest.raises(RuntimeError, match="length 3"):
        torch.linalg.cross(torch.ones(2, 2, device=device), torch.ones(2, 2, device=device))
    assert_no_fallback()


class MultiLabelNet(torch.nn.Module):
    """A small multi-label image classifier: conv, hardswish, adaptive
    pooling to 3x3 (not 1x1: that one is a mean), a linear head trained
    with BCE-with-logits and pos_weight."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(3)
        self.head = torch.nn.Linear(8 * 9, 5)

    def forward(self, x):
        return self.head(self.pool(torch.nn.functional.hardswish(self.conv(x))).flatten(1))


@every_device
def test_multilabel_classifier_trains_as_cpu(device):
    torch.manual_seed(0)
    model = MultiLabelNet()
    model_dev = copy.deepcopy(model).to(device)
    x, labels = torch.randn(4, 3, 10, 11), (torch.rand(4, 5) > 0.5).float()
    pos_weight = torch.tensor([1.0, 2.0, 0.5, 3.0, 1.0])
    torch_tessera.reset_fallback_stats()
    for m, dev in [(model, "cpu"), (model_dev, device)]:
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                m(x.to(dev)), labels.to(dev), pos_weight=pos_weight.to(dev))
            loss.backward()
            opt.step()
    assert_no_fallback()
    for (name, p), p_dev in zip(model.named_parameters(), model_dev.parameters()):
        torch.testing.assert_close(p_dev.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5, msg=name)


@every_device
def test_gpt2_training_step_runs_without_fallback(device):
    """Hugging Face GPT-2 (tiny config): attention takes SDPA's math path,
    whose _safe_softmax calls isneginf in every layer."""
    transformers = pytest.importorskip("transformers")
    # No dropout: tessera's random stream is not the CPU's.
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=64,
                                     n_positions=32, resid_pdrop=0.0, embd_pdrop=0.0,
                                     attn_pdrop=0.0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config)
    model_dev = copy.deepcopy(model).to(device)
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, :3] = 0  # left padding: masked rows in the attention
    torch_tessera.reset_fallback_stats()
    loss = model(ids, attention_mask=mask, labels=ids).loss
    loss_dev = model_dev(ids.to(device), attention_mask=mask.to(device), labels=ids.to(device)).loss
    loss.backward()
    loss_dev.backward()
    assert_no_fallback()
    torch.testing.assert_close(loss_dev.cpu(), loss, rtol=1e-4, atol=1e-5)
    for (name, p), p_dev in zip(model.named_parameters(), model_dev.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p.grad, rtol=1e-3, atol=1e-5, msg=name)


# -- Order statistics, resampling, unfold and masked_scatter.

@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_cummax_cummin_ties_and_nans(device, dtype):
    x = torch.tensor([[1.0, 3.0, float("nan"), 3.0, float("nan"), 5.0],
                      [2.0, 2.0, 1.0, 1.0, 4.0, 0.0]])
    x = x.to(dtype) if dtype.is_floating_point else x.nan_to_num(7.0).to(dtype)
    torch_tessera.reset_fallback_stats()
    for fn in (torch.cummax, torch.cummin):
        for dim in (0, 1):
            assert_same(tuple(fn(x.to(device), dim)), tuple(fn(x, dim)), f"{fn.__name__} dim {dim}")
    assert_no_fallback()


@every_device
def test_median_nan_rows_and_kthvalue(device):
    nan = float("nan")
    x = torch.tensor([[3.0, nan, 1.0, nan, 2.0], [4.0, 1.0, 7.0, 2.0, 9.0]])
    torch_tessera.reset_fallback_stats()
    # A row holding NaN gives NaN at its first NaN, as the CPU.
    assert_same(tuple(torch.median(x.to(device), dim=1)), tuple(torch.median(x, dim=1)), "median")
    assert_same(torch.median(x.to(device)), torch.median(x), "median all")
    assert_same(tuple(torch.kthvalue(x.to(device), 5, dim=1, keepdim=True)),
                tuple(torch.kthvalue(x, 5, dim=1, keepdim=True)), "kthvalue")
    with pytest.raises(IndexError, match="out of range"):
        torch.kthvalue(x.to(device), 6, dim=1)
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("kwargs", [
    dict(scale_factor=2, mode="nearest"), dict(size=(7, 5), mode="nearest"),
    dict(scale_factor=1.5, mode="bilinear"), dict(size=(9, 4), mode="bilinear", align_corners=True),
    dict(scale_factor=(0.5, 2.0), mode="bilinear", recompute_scale_factor=False),
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_interpolate_forward_backward(device, kwargs):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 5).to(memory_format=torch.channels_last).requires_grad_()
    assert_same_forward_backward(lambda t: torch.nn.functional.interpolate(t, **kwargs), x, device)


@every_device
def test_unfold_fold_round_trip_and_gradient(device):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 6, requires_grad=True)
    x_dev = x.detach().to(device).requires_grad_()
    args = dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    cols = torch.nn.functional.unfold(x, **args)
    cols_dev = torch.nn.functional.unfold(x_dev, **args)
    assert_same(cols_dev, cols, "unfold")
    back = torch.nn.functional.fold(cols, (7, 6), **args)
    back_dev = torch.nn.functional.fold(cols_dev, (7, 6), **args)
    assert_same(back_dev, back, "fold")
    back.square().sum().backward()
    back_dev.square().sum().backward()
    assert_same(x_dev.grad, x.grad, "gradient through unfold and fold")
    assert_no_fallback()


@every_device
def test_masked_scatter_forward_backward(device):
    torch.manual_seed(0)
    x = torch.randn(4, 5, requires_grad=True)
    src = torch.randn(30, requires_grad=True)
    mask = torch.rand(5) > 0.4  # broadcast over the rows
    x_dev = x.detach().to(device).requires_grad_()
    src_dev = src.detach().to(device).requires_grad_()
    y, y_dev = x.masked_scatter(mask, src), x_dev.masked_scatter(mask.to(device), src_dev)
    assert_same(y_dev, y, "forward")
    g = torch.randn(4, 5)
    torch.autograd.backward(y, g)
    torch.autograd.backward(y_dev, g.to(device))
    assert_same((x_dev.grad, src_dev.grad), (x.grad, src.grad), "backward")
    z, z_dev = x.detach().clone(), x_dev.detach().clone()
    z.masked_scatter_(mask, src.detach())
    z_dev.masked_scatter_(mask.to(device), src_dev.detach())
    assert_same(z_dev, z, "in place")
    with pytest.raises(RuntimeError, match="source"):
        x_dev.detach().masked_scatter(mask.to(device), src_dev.detach()[:3])
    assert_no_fallback()


class TinyDecoder(torch.nn.Module):
    """A segmentation-style decoder: conv, bilinear upsampling, a skip
    connection brought in by nearest upsampling, conv."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.out = torch.nn.Conv2d(9, 2, 3, padding=1)

    def forward(self, x):
        h = torch.nn.functional.interpolate(torch.relu(self.down(x)), size=x.shape[-2:],
                                            mode="bilinear", align_corners=False)
        skip = torch.nn.functional.interpolate(x[:, :, ::2, ::2], scale_factor=2, mode="nearest")
        return self.out(torch.cat([h, skip], dim=1))


@every_device
def test_decoder_with_upsampling_trains_as_cpu(device):
    torch.manual_seed(0)
    model = TinyDecoder()
    model_dev = copy.deepcopy(model).to(device)
    x, target = torch.randn(2, 3, 8, 10), torch.randn(2, 2, 8, 10)
    torch_tessera.reset_fallback_stats()
    for m, dev in [(model, "cpu"), (model_dev, device)]:
        torch.nn.functional.mse_loss(m(x.to(dev)), target.to(dev)).backward()
    assert_no_fallback()
    for (name, p), p_dev in zip(model.named_parameters(), model_dev.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p.grad, rtol=1e-4, atol=1e-5, msg=name)
