"""Helpers shared by the bridge's op tests."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera


def tessera_devices():
    """Every tessera device of this process."""
    return [torch.device("tessera", i) for i in range(torch.tessera.device_count())]


# Parametrizes a test over every tessera device (shown as skipped, not
# passed, where there is none).
every_device = pytest.mark.parametrize(
    "device", tessera_devices() or [pytest.param(None, marks=pytest.mark.skip("no tessera device"))],
    ids=str)


def assert_no_fallback():
    """No aten op ran through the CPU fallback since the test began."""
    stats = torch_tessera.fallback_stats()
    assert stats == {}, f"ops ran through the CPU fallback: {stats}"


def assert_fallback_at_most(allowed):
    """Only ops in `allowed` ran through the CPU fallback."""
    extra = set(torch_tessera.fallback_stats()) - set(allowed)
    assert not extra, f"unexpected CPU fallback for {sorted(extra)}"


def assert_exact(got, want):
    """got is a tessera tensor equal to the CPU tensor want, bit for bit
    (NaN equal to NaN), with its dtype and shape."""
    assert got.device.type == "tessera"
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True)


def random_tensor(shape, dtype, seed=0):
    """Reproducible values of every dtype: normal floats spread to about
    +-10, integers in [-50, 50) ([0, 50) for uint8), bools half true."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 4).to(dtype)
    low = 0 if dtype == torch.uint8 else -50
    return torch.randint(low, 50, shape, generator=g).to(dtype)


def to_dev(x, dev):
    """x with its tensors (also inside lists and tuples) moved to dev."""
    if isinstance(x, torch.Tensor):
        return x.to(dev)
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(v, dev) for v in x)
    return x


class SmallCNN(nn.Module):
    """conv -> relu -> maxpool -> conv -> relu -> maxpool -> linear, on 1x12x12 images."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))
