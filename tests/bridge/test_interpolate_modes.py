"""Every mode of F.interpolate native on every tessera device: nearest and
nearest-exact in 1-3 D, linear, bilinear, bicubic and trilinear, forward
and backward, over the runtime's upsample composite, with no CPU fallback.

PyTorch's OpInfo samples (nn.functional.interpolate in every mode,
upsample_nearest, upsample_bilinear: sizes up and down, uneven shapes,
scale factors with recompute_scale_factor both ways, align_corners both
ways, channels-last) are compared with the CPU in float32 and float64,
forward and input gradients, and forward in float16 and bfloat16 within a
few units in the last place (tessera computes in float32 and rounds once,
the CPU kernels round their weights to 16 bits first). Every F.interpolate
call form then runs with no CPU fallback, the out= and grad_input= forms
of the aten ops match the CPU, a small 3-D convolutional network with
trilinear upsampling trains like the CPU, and wrong calls raise clear
errors. Antialiasing (antialias=True) runs through the CPU fallback.
"""

import itertools

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera

from bridge_testing import assert_no_fallback, every_device, random_tensor

pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

from opinfo_testing import assert_same, compare_backward, compare_forward, opinfo_name  # noqa: E402

# OpInfo calls the deprecated upsample_* functions.
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated:UserWarning")

MODES = ["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear"]
OPINFO_OPS = [f"nn.functional.interpolate.{mode}" for mode in MODES] + [
    "nn.functional.upsample_nearest", "nn.functional.upsample_bilinear"]
OPS = {opinfo_name(op): op for op in op_db}
OPS = {name: OPS[name] for name in OPINFO_OPS}
# Enough for every sample OpInfo generates for these ops (at most 24).
ALL_SAMPLES = 100

# Gradients sum many weighted terms (a bicubic input pixel gets up to 16
# per output it touches); tessera sums them one dim at a time, the CPU one
# product at a time.
GRADIENT_TOLERANCE = dict(rtol=1e-4, atol=1e-4)
# 16-bit results: a few units in the last place apart (see above).
HALF_TOLERANCE = {torch.float16: dict(rtol=5e-3, atol=5e-3),
                  torch.bfloat16: dict(rtol=4e-2, atol=4e-2)}


def opinfo_samples(name, dtype):
    """OpInfo's sample inputs (its reference inputs add 345x456 images, with
    antialias too, which the CPU fallback serves)."""
    return OPS[name].sample_inputs("cpu", dtype)


@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_forward_matches_cpu(device, name, dtype):
    samples = opinfo_samples(name, dtype)
    assert compare_forward(OPS[name], device, dtype, ALL_SAMPLES, samples=samples) > 0


@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_backward_matches_cpu(device, name, dtype):
    assert compare_backward(OPS[name], device, ALL_SAMPLES, dtype=dtype) > 0


@every_device
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_half_precision_forward_matches_cpu(device, name, dtype):
    samples = opinfo_samples(name, dtype)
    assert compare_forward(OPS[name], device, dtype, ALL_SAMPLES, samples=samples,
                           **HALF_TOLERANCE[dtype]) > 0


# (mode, input shape): one per mode and rank; the 4-D and 5-D inputs are
# channels-last, as images and volumes often are.
CALL_INPUTS = [
    ("nearest", (2, 3, 5)), ("nearest", (2, 3, 4, 5)), ("nearest", (1, 2, 3, 4, 5)),
    ("nearest-exact", (2, 3, 5)), ("nearest-exact", (2, 3, 4, 5)),
    ("nearest-exact", (1, 2, 3, 4, 5)),
    ("linear", (2, 3, 5)), ("bilinear", (2, 3, 4, 5)), ("bicubic", (2, 3, 4, 5)),
    ("trilinear", (1, 2, 3, 4, 5)),
]


def call_forms(mode, rank):
    """Every way F.interpolate is called: a size, or a scale factor (one for
    all dims or one per dim, up and down) with recompute_scale_factor
    both ways; align_corners both ways for the interpolating modes."""
    sizes = [dict(size=tuple(range(3, 3 + rank))), dict(size=7)]
    scales = [2.0, 0.6, tuple(1.5 + 0.25 * d for d in range(rank))]
    forms = sizes + [dict(scale_factor=s, recompute_scale_factor=r)
                     for s, r in itertools.product(scales, [False, True])]
    if "nearest" in mode:
        return forms
    return [dict(f, align_corners=a) for f in forms for a in (False, True)]


def channels_last(x):
    if x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    if x.dim() == 5:
        return x.contiguous(memory_format=torch.channels_last_3d)
    return x


@every_device
@pytest.mark.parametrize("mode,shape", CALL_INPUTS, ids=lambda v: str(v).replace(" ", ""))
def test_every_call_form_matches_cpu_without_fallback(device, mode, shape):
    x = channels_last(random_tensor(shape, torch.float32, seed=len(shape)))
    for kwargs in call_forms(mode, len(shape) - 2):
        what = f"{mode} {list(shape)} {kwargs}"
        cpu = x.clone().requires_grad_()
        dev = x.to(device).requires_grad_()
        y = F.interpolate(cpu, mode=mode, **kwargs)
        torch_tessera.reset_fallback_stats()
        y_dev = F.interpolate(dev, mode=mode, **kwargs)
        grad = random_tensor(y.shape, torch.float32, seed=1)
        y.backward(grad)
        y_dev.backward(grad.to(device))
        assert_no_fallback()
        assert_same(y_dev, y.detach(), what)
        assert_same(dev.grad, cpu.grad, f"gradient of {what}", **GRADIENT_TOLERANCE)


# (aten op, input shape, output size, align_corners (None: the op has no
# such argument), scales)
ATEN_OPS = [
    ("upsample_nearest1d", (2, 3, 5), [8], None, [None]),
    ("upsample_nearest3d", (1, 2, 3, 4, 2), [5, 3, 4], None, [None, 0.7, 2.0]),
    ("_upsample_nearest_exact1d", (2, 3, 5), [3], None, [1.5]),
    ("_upsample_nearest_exact2d", (2, 3, 4, 5), [7, 9], None, [None, None]),
    ("_upsample_nearest_exact3d", (1, 2, 3, 4, 2), [2, 6, 5], None, [None, None, None]),
    ("upsample_linear1d", (2, 3, 5), [8], True, [None]),
    ("upsample_bilinear2d", (2, 3, 4, 5), [7, 3], False, [1.8, 0.6]),
    ("upsample_trilinear3d", (1, 2, 3, 4, 2), [5, 3, 4], True, [None, None, None]),
    ("upsample_bicubic2d", (2, 3, 4, 5), [6, 8], False, [None, None]),
]


@every_device
@pytest.mark.parametrize("name,shape,size,align,scales", ATEN_OPS, ids=[c[0] for c in ATEN_OPS])
def test_out_forms_match_cpu(device, name, shape, size, align, scales):
    x = random_tensor(shape, torch.float32, seed=2)
    flags = [] if align is None else [align]
    forward = getattr(torch.ops.aten, name)
    backward = getattr(torch.ops.aten, name + "_backward")
    expected = forward(x, size, *flags, *scales)
    grad = random_tensor(expected.shape, torch.float32, seed=3)
    expected_grad = backward(grad, size, list(shape), *flags, *scales)

    torch_tessera.reset_fallback_stats()
    out = torch.empty(0, device=device)
    forward.out(x.to(device), size, *flags, *scales, out=out)
    grad_input = torch.empty(shape, device=device)
    backward.grad_input(grad.to(device), size, list(shape), *flags, *scales,
                        grad_input=grad_input)
    assert_no_fallback()
    assert_same(out, expected, f"{name}.out")
    assert_same(grad_input, expected_grad, f"{name}_backward.grad_input")


class TrilinearDecoder(nn.Module):
    """A 3-D encoder-decoder step: a strided convolution, trilinear
    upsampling back to the input's size, and a convolution over both."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv3d(2, 4, 3, stride=2, padding=1)
        self.out = nn.Conv3d(6, 2, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.down(x))
        h = F.interpolate(h, size=x.shape[-3:], mode="trilinear", align_corners=False)
        return self.out(torch.cat([h, x], dim=1))


@every_device
def test_conv_net_with_trilinear_upsampling_trains_as_cpu(device):
    torch.manual_seed(0)
    model = TrilinearDecoder()
    model_dev = TrilinearDecoder().to(device)
    model_dev.load_state_dict(model.state_dict())
    x, target = random_tensor((2, 2, 4, 6, 6), torch.float32, 4), random_tensor(
        (2, 2, 4, 6, 6), torch.float32, 5)
    torch_tessera.reset_fallback_stats()
    for m, dev in [(model, "cpu"), (model_dev, device)]:
        optimizer = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
        for _ in range(3):
            optimizer.zero_grad()
            F.mse_loss(m(x.to(dev)), target.to(dev)).backward()
            optimizer.step()
    assert_no_fallback()
    for (name, p), p_dev in zip(model.named_parameters(), model_dev.parameters()):
        torch.testing.assert_close(p_dev.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"{name}: {m}")


@every_device
def test_antialias_runs_through_the_cpu_fallback(device):
    x = random_tensor((1, 2, 9, 8), torch.float32, seed=6)
    for mode in ("bilinear", "bicubic"):
        expected = F.interpolate(x, size=(4, 5), mode=mode, antialias=True)
        torch_tessera.reset_fallback_stats()
        actual = F.interpolate(x.to(device), size=(4, 5), mode=mode, antialias=True)
        assert set(torch_tessera.fallback_stats()) <= {
            f"aten::_upsample_{mode}2d_aa", f"aten::_upsample_{mode}2d_aa.out"}
        assert_same(actual, expected, f"{mode} with antialias")


def floats(device, *shape):
    return torch.ones(shape, device=device)


@every_device
@pytest.mark.parametrize("call,parts", [
    (lambda d: torch.ops.aten.upsample_trilinear3d(floats(d, 1, 1, 2, 2), [2, 2, 2], False),
     ["upsample_trilinear3d", "5-D input (N, C, D, H, W)", "[1, 1, 2, 2]"]),
    (lambda d: torch.ops.aten.upsample_bicubic2d(
        torch.ones(1, 1, 2, 2, dtype=torch.int32, device=d), [4, 4], False),
     ["upsample_bicubic2d", "floating", "int32"]),
    (lambda d: torch.ops.aten.upsample_linear1d(floats(d, 1, 1, 2), [0], False),
     ["upsample_linear1d", "greater than 0", "output (W: 0)"]),
    (lambda d: torch.ops.aten._upsample_nearest_exact3d(floats(d, 1, 1, 2, 2, 2), [2, 2], None,
                                                        None, None),
     ["_upsample_nearest_exact3d", "output_size of 3 elements", "[2, 2]"]),
    (lambda d: torch.ops.aten.upsample_nearest3d_backward(floats(d, 1, 1, 2, 2, 2), [4, 4, 4],
                                                          [1, 1, 2, 2, 2]),
     ["upsample_nearest3d_backward", "grad_output of shape [1, 1, 4, 4, 4]", "[1, 1, 2, 2, 2]"]),
    (lambda d: torch.ops.aten.upsample_bicubic2d_backward(floats(d, 1, 1, 4, 4), [4, 4],
                                                          [1, 4, 4], False),
     ["upsample_bicubic2d_backward", "4-D input"]),
], ids=["trilinear of 4-D", "bicubic of int32", "empty output", "3-D output size of 2",
        "grad of another shape", "input_size of the wrong rank"])
def test_wrong_calls_raise_clear_errors(device, call, parts):
    with pytest.raises(RuntimeError) as info:
        call(device)
    for part in parts:
        assert part in str(info.value)
