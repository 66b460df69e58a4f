"""Pinned host memory: with tessera as PyTorch's current accelerator, CPU
pin_memory(), torch.empty(..., pin_memory=True) and DataLoader pinning use
tessera's pinned allocator (through its hooks), and is_pinned() asks it."""

import gc

import pytest
import torch

import torch_tessera
from bridge_testing import every_device


def test_pin_memory_copies_into_pinned_memory(tessera):
    x = torch.arange(1000.0)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned()
    assert p.device == torch.device("cpu")
    assert p.data_ptr() != x.data_ptr()
    torch.testing.assert_close(p, x, rtol=0, atol=0)
    assert not x.is_pinned()
    # Pinning a pinned tensor gives it back.
    assert p.pin_memory().data_ptr() == p.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_pin_memory_keeps_dtype_and_shape(tessera, dtype):
    x = (torch.arange(24).reshape(2, 3, 4) % 3).to(dtype)
    p = x.pin_memory()
    assert p.is_pinned() and p.dtype == dtype and p.shape == x.shape
    torch.testing.assert_close(p, x, rtol=0, atol=0)


def test_views_of_pinned_memory_are_pinned(tessera):
    p = torch.arange(100.0).pin_memory()
    assert p[10:20].is_pinned()
    assert p.view(10, 10).t().is_pinned()


def test_empty_with_pin_memory(tessera):
    p = torch.empty(64, pin_memory=True)
    assert p.is_pinned()
    z = torch.zeros(8, 8, pin_memory=True)
    assert z.is_pinned() and z.sum().item() == 0


def test_zero_size_pin(tessera):
    p = torch.empty(0).pin_memory()
    assert p.numel() == 0


def test_pinned_to_tessera_and_back(tessera):
    x = torch.randn(3, 7)
    p = x.pin_memory()
    d = p.to(tessera, non_blocking=True)
    torch.tessera.synchronize()
    assert d.device == torch.device("tessera:0")
    torch.testing.assert_close(d.cpu(), x, rtol=0, atol=0)
    back = d.to("cpu", non_blocking=True)
    torch.tessera.synchronize()
    torch.testing.assert_close(back, x, rtol=0, atol=0)


def test_copy_from_tessera_into_pinned_buffer(tessera):
    d = torch.arange(50.0, device=tessera)
    buffer = torch.empty(50, pin_memory=True)
    buffer.copy_(d, non_blocking=True)
    torch.tessera.synchronize()
    assert buffer.is_pinned()
    torch.testing.assert_close(buffer, torch.arange(50.0), rtol=0, atol=0)


def test_dataloader_pins_batches(tessera):
    data = torch.utils.data.TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    batches = list(loader)
    assert len(batches) == 2
    for features, labels in batches:
        assert features.is_pinned() and labels.is_pinned()
    torch.testing.assert_close(torch.cat([b[0] for b in batches]), data.tensors[0])


def test_freed_pinned_memory_is_no_longer_pinned(tessera):
    p = torch.empty(1 << 12).pin_memory()
    address = p.untyped_storage().data_ptr()
    assert torch_tessera._C.is_pinned_ptr(address)
    del p
    gc.collect()
    assert not torch_tessera._C.is_pinned_ptr(address)
    assert not torch_tessera._C.is_pinned_ptr(torch.empty(4).data_ptr())
    assert not torch_tessera._C.is_pinned_ptr(0)


def test_empty_host_cache_does_not_crash(tessera):
    p = torch.ones(1 << 16).pin_memory()
    del p
    torch.accelerator.empty_host_cache()
    q = torch.ones(16).pin_memory()
    assert q.is_pinned() and q.sum().item() == 16


@every_device
def test_non_blocking_round_trip_on_every_device(device):
    """Pinned sources and destinations, contiguous and strided, with the
    stream left to finish the copies: the values after synchronize() are
    exact, and a pinned source freed while its copy may be in flight is not
    handed out again before the stream passes it."""
    x = torch.randn(64, 33)
    d = x.pin_memory().to(device, non_blocking=True)  # the pinned source dies here
    reused = torch.zeros(64, 33).pin_memory()  # may not alias the freed block early
    y = d * 2
    into = torch.empty(64, 33, pin_memory=True)
    into.copy_(y, non_blocking=True)
    torch.tessera.synchronize(device)
    torch.testing.assert_close(into, x * 2, rtol=0, atol=0)
    assert reused.sum().item() == 0

    # Strided on either side: staged on the host, still exact.
    strided = torch.empty(33, 64, pin_memory=True).t()
    strided.copy_(d, non_blocking=True)
    column = torch.empty(64, pin_memory=True)
    column.copy_(d[:, 5], non_blocking=True)
    torch.tessera.synchronize(device)
    torch.testing.assert_close(strided, x, rtol=0, atol=0)
    torch.testing.assert_close(column, x[:, 5], rtol=0, atol=0)

    # to("cpu", non_blocking=True) and a dtype change on the way.
    back = d.to("cpu", torch.float64, non_blocking=True)
    torch.tessera.synchronize(device)
    torch.testing.assert_close(back, x.double(), rtol=0, atol=0)


def test_pinned_memory_is_pinned_inside_the_block(tessera):
    p = torch.arange(1000.0).pin_memory()
    assert torch_tessera._C.is_pinned_ptr(p.data_ptr() + 4 * 999)
    assert torch.accelerator.is_available()
