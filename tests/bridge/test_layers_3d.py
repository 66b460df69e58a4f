"""3-D layers and adaptive pooling on every tessera device: conv3d and
conv_transpose3d, max_pool3d and avg_pool3d, adaptive average pooling in
1-D and 3-D, adaptive max pooling in 1-D, 2-D and 3-D, and what PyTorch
composes of them (lp_pool3d, local_response_norm), forward and backward,
with no CPU fallback. The 1-D and 2-D convolutions and poolings run again
here because the 3-D work reshaped the code they share.

PyTorch's OpInfo samples (reference inputs: odd strides, groups, dilation,
padding, ceil_mode, unbatched inputs) are compared with the CPU; a small
volumetric network trains like the CPU; channels-last inputs, the indices
that max pooling returns and the errors follow.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera
from torch.utils._pytree import tree_map

from bridge_testing import assert_no_fallback, every_device, random_tensor

pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

from opinfo_testing import assert_same, compare_backward, compare_forward, opinfo_name  # noqa: E402

OPINFO_OPS = [
    "nn.functional.conv3d", "nn.functional.conv_transpose3d",
    "nn.functional.max_pool3d", "nn.functional.avg_pool3d",
    "nn.functional.adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool3d",
    "nn.functional.adaptive_max_pool1d", "nn.functional.adaptive_max_pool2d",
    "nn.functional.adaptive_max_pool3d", "nn.functional.local_response_norm",
    "nn.functional.conv1d", "nn.functional.conv2d",
    "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.max_pool1d", "nn.functional.max_pool2d",
    "nn.functional.avg_pool1d", "nn.functional.avg_pool2d",
]
OPS = {opinfo_name(op): op for op in op_db}
OPS = {name: OPS[name] for name in OPINFO_OPS}

# A convolution sums in another order than the CPU's oneDNN kernels.
CONV_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def tolerance(name, dtype):
    return CONV_TOLERANCE if "conv" in name and dtype == torch.float32 else {}


@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_forward_matches_cpu(device, name, dtype):
    assert compare_forward(OPS[name], device, dtype, limit=12, **tolerance(name, dtype)) > 0


@every_device
@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_backward_matches_cpu(device, name):
    assert compare_backward(OPS[name], device, limit=6, **tolerance(name, torch.float32)) > 0


@every_device
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_pooling_matches_cpu(device, dtype):
    x = random_tensor((2, 3, 6, 7, 5), dtype, seed=1)
    calls = [
        lambda t: F.max_pool3d(t, 3, stride=2, padding=1, ceil_mode=True),
        lambda t: F.avg_pool3d(t, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)),
        lambda t: F.adaptive_avg_pool3d(t, (4, 3, 2)),
        lambda t: F.adaptive_max_pool3d(t, (4, 3, 2), return_indices=True),
    ]
    for call in calls:
        torch_tessera.reset_fallback_stats()
        actual = call(x.to(device))
        assert_no_fallback()
        # PyTorch's CPU has no 16-bit avg_pool3d: the reference runs in
        # float32 (as tessera computes) and rounds.
        expected = tree_map(lambda t: t.to(dtype) if t.is_floating_point() else t,
                            call(x.float()))
        assert_same(actual, expected, str(dtype), rtol=1e-2, atol=1e-2)


class VolumeNet(nn.Module):
    """A small volumetric encoder-decoder: every 3-D layer once."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(2, 6, 3, padding=1)
        self.norm = nn.BatchNorm3d(6)
        self.pool = nn.MaxPool3d(2, ceil_mode=True)
        self.conv2 = nn.Conv3d(6, 8, (3, 1, 3), stride=(1, 2, 1), groups=2, dilation=(2, 1, 1))
        self.up = nn.ConvTranspose3d(8, 4, 2, stride=2, output_padding=(1, 0, 1))
        self.avg = nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False)
        self.head = nn.Linear(4 * 2 * 3 * 2, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.norm(self.conv1(x))))
        x = F.gelu(self.conv2(x))
        x = self.avg(self.up(x))
        x = F.adaptive_max_pool3d(x, (2, 3, 2)) + F.adaptive_avg_pool3d(x, (2, 3, 2))
        return self.head(x.flatten(1))


@every_device
def test_volume_network_trains_like_cpu(device):
    torch.manual_seed(0)
    cpu_model = VolumeNet()
    dev_model = VolumeNet()
    dev_model.load_state_dict(cpu_model.state_dict())
    dev_model.to(device)
    x = random_tensor((3, 2, 9, 10, 7), torch.float32, seed=2) / 4
    target = torch.tensor([0, 3, 4])
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
                  for m in (cpu_model, dev_model)]
    torch_tessera.reset_fallback_stats()
    for _ in range(3):
        for model, opt, inputs, labels in ((cpu_model, optimizers[0], x, target),
                                           (dev_model, optimizers[1], x.to(device),
                                            target.to(device))):
            opt.zero_grad()
            F.cross_entropy(model(inputs), labels).backward()
            opt.step()
    assert_no_fallback()
    for (name, p_cpu), p_dev in zip(cpu_model.named_parameters(), dev_model.parameters()):
        torch.testing.assert_close(p_dev.cpu(), p_cpu, rtol=1e-4, atol=1e-5, msg=name)


@every_device
def test_channels_last_3d_inputs(device):
    x = random_tensor((2, 4, 5, 6, 7), torch.float32, seed=3)
    w = random_tensor((6, 2, 3, 3, 2), torch.float32, seed=4)
    x_cl = x.to(memory_format=torch.channels_last_3d)
    calls = [
        lambda t, w: F.conv3d(t, w, stride=(2, 1, 1), padding=1, groups=2),
        lambda t, w: F.conv_transpose3d(t, w.reshape(4, 3, 3, 3, 2), stride=2, groups=2),
        lambda t, w: F.max_pool3d(t, 2, return_indices=True),
        lambda t, w: F.avg_pool3d(t, 3, stride=2, padding=1),
    ]
    for call in calls:
        torch_tessera.reset_fallback_stats()
        assert_same(call(x_cl.to(device), w.to(device)), call(x, w), "channels_last_3d",
                    rtol=1e-4, atol=1e-4)
        assert_no_fallback()


@every_device
def test_max_pool3d_picks_the_first_maximum_as_the_cpu(device):
    # Ties everywhere: the index must be the first maximum in (d, h, w)
    # order, in windows that overlap and are clipped by the padding.
    x = torch.tensor([[0.0, 1.0, 1.0, 0.0, 1.0]]).repeat(2, 3, 4, 5, 1).reshape(2, 3, 4, 5, 5)
    for kwargs in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1},
                   {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "dilation": (1, 1, 2)}):
        expected = F.max_pool3d(x, return_indices=True, **kwargs)
        actual = F.max_pool3d(x.to(device), return_indices=True, **kwargs)
        assert_same(actual, expected, str(kwargs))
    expected = F.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True)
    assert_same(F.adaptive_max_pool3d(x.to(device), (3, 2, 4), return_indices=True), expected,
                "adaptive")


@every_device
def test_max_pools_pick_nans_as_the_cpu(device):
    # PyTorch keeps a window's first maximum but its last NaN.
    x = torch.arange(2 * 3 * 4 * 5 * 6, dtype=torch.float32).reshape(2, 3, 4, 5, 6) % 7
    x[0, 0, 1, 2, 3] = x[0, 0, 1, 2, 5] = x[1, 2, 3, 4, 0] = float("nan")
    x[0, 1, 0, 0, 0] = float("inf")
    calls = [
        lambda t: F.adaptive_max_pool3d(t, (3, 2, 4), return_indices=True),
        lambda t: F.adaptive_max_pool2d(t[0], (3, 4), return_indices=True),
        lambda t: F.adaptive_max_pool1d(t[0, 0], 4, return_indices=True),
        lambda t: F.max_pool3d(t, 2, return_indices=True),
    ]
    for call in calls:
        assert_same(call(x.to(device)), call(x), "nan")


@every_device
def test_pooling_out_forms(device):
    x = random_tensor((2, 3, 4, 5, 6), torch.float32, seed=5)
    out, idx = torch.empty(0, device=device), torch.empty(0, dtype=torch.long, device=device)
    torch.ops.aten.adaptive_max_pool3d.out(x.to(device), [2, 2, 3], out=out, indices=idx)
    expected = torch.ops.aten.adaptive_max_pool3d(x, [2, 2, 3])
    assert_same((out, idx), expected, "adaptive_max_pool3d.out")
    out = torch.empty(0, device=device)
    torch.ops.aten.avg_pool3d.out(x.to(device), [2, 2, 2], [1, 2, 1], [1, 0, 1], out=out)
    assert_same(out, torch.ops.aten.avg_pool3d(x, [2, 2, 2], [1, 2, 1], [1, 0, 1]), "avg.out")


@every_device
def test_errors_name_the_op_and_the_shapes(device):
    x = torch.randn(1, 4, 5, 5, 5, device=device)
    # PyTorch checks a convolution's shapes before it reaches tessera.
    with pytest.raises(RuntimeError, match=r"groups=1.*\[6, 3, 3, 3, 3\].*4 channels"):
        F.conv3d(x, torch.randn(6, 3, 3, 3, 3, device=device))
    with pytest.raises(RuntimeError, match=r"Kernel size can't be greater than actual input"):
        F.conv3d(x, torch.randn(6, 4, 7, 3, 3, device=device))
    with pytest.raises(RuntimeError, match=r"max_pool3d: pad should be at most half"):
        F.max_pool3d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match=r"avg_pool3d: divisor must be not zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool3d: expected a floating input"):
        F.adaptive_max_pool3d(torch.ones(1, 2, 3, 3, 3, dtype=torch.long, device=device), 2)
    with pytest.raises(RuntimeError, match=r"max_pool3d: expected 4D or 5D input"):
        F.max_pool3d(torch.randn(3, 3, 3, device=device), 2)
