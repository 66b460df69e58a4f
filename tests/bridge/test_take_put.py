"""torch.take and Tensor.put_ on every tessera device against torch's CPU:
every dtype, negative and repeated indices (accumulated in order, or the
last write winning), non-contiguous self, index and source of any shape,
take's gradient (a put_ with accumulate), errors, and no CPU fallback (the
runtime's take and put_)."""

import pytest
import torch
import torch_tessera

from bridge_testing import assert_exact as exact
from bridge_testing import assert_no_fallback, every_device
from bridge_testing import random_tensor as sample

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


@every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("accumulate", [False, True], ids=["set", "accumulate"])
def test_put_matches_cpu(device, dtype, accumulate):
    self = sample((4, 5), dtype, 1).t()  # non-contiguous: put_ addresses the row-major order
    index = torch.tensor([[3, -1, 3], [0, 19, 3]])
    source = sample((3, 2), dtype, 2)
    want = self.clone().put_(index, source, accumulate=accumulate)
    torch_tessera.reset_fallback_stats()
    got = self.to(device)
    assert got.put_(index.to(device), source.to(device), accumulate=accumulate) is not None
    functional = torch.put(self.to(device), index.to(device), source.to(device), accumulate)
    assert_no_fallback()
    exact(got, want)
    exact(functional, want)


@every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take_matches_cpu(device, dtype):
    self = sample((3, 4, 2), dtype, 3).permute(2, 0, 1)
    index = torch.tensor([[0, -24, 23], [7, 7, 5]])
    torch_tessera.reset_fallback_stats()
    exact(torch.take(self.to(device), index.to(device)), torch.take(self, index))
    out = torch.empty(0, dtype=dtype, device=device)
    torch.take(self.to(device), index.to(device), out=out)
    assert_no_fallback()
    exact(out, torch.take(self, index))
    exact(torch.take(self.to(device), torch.tensor([], dtype=torch.int64, device=device)),
          torch.take(self, torch.tensor([], dtype=torch.int64)))


@every_device
def test_half_accumulation_rounds_every_step_as_cpu(device):
    # 100 additions of 0.1 into one float16 element: the CPU rounds after
    # each (10.08, not 10.0).
    source = torch.full((100,), 0.1, dtype=torch.float16)
    index = torch.zeros(100, dtype=torch.int64)
    want = torch.zeros(1, dtype=torch.float16).put_(index, source, accumulate=True)
    got = torch.zeros(1, dtype=torch.float16, device=device).put_(index.to(device),
                                                                  source.to(device), True)
    exact(got, want)


@every_device
def test_take_gradient(device):
    weight = sample((3, 4), torch.float32, 4)
    index = torch.tensor([[1, -1], [1, 5]])
    w = weight.clone().requires_grad_()
    torch.take(w, index).pow(2).sum().backward()
    wt = weight.to(device).requires_grad_()
    torch_tessera.reset_fallback_stats()
    torch.take(wt, index.to(device)).pow(2).sum().backward()
    assert_no_fallback()
    torch.testing.assert_close(wt.grad.cpu(), w.grad)


@every_device
def test_errors(device):
    x = torch.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="put_: index 6 is out of bounds"):
        x.put_(torch.tensor([6], device=device), torch.ones(1, device=device))
    with pytest.raises(IndexError, match="take: index -7 is out of bounds"):
        torch.take(x, torch.tensor([-7], device=device))
    with pytest.raises((ValueError, RuntimeError), match="same number of elements"):
        x.put_(torch.tensor([1, 2], device=device), torch.ones(1, device=device))
    with pytest.raises((TypeError, RuntimeError), match="same dtype"):
        x.put_(torch.tensor([1], device=device), torch.ones(1, dtype=torch.int32, device=device))
    with pytest.raises((TypeError, RuntimeError), match="int64 index"):
        x.put_(torch.tensor([1], dtype=torch.int32, device=device), torch.ones(1, device=device))
    with pytest.raises(IndexError, match="empty tensor"):
        torch.zeros(0, device=device).put_(torch.tensor([0], device=device),
                                           torch.ones(1, device=device))
    with pytest.raises((ValueError, RuntimeError), match="more than one element"):
        torch.zeros(3, device=device).expand(2, 3).put_(torch.tensor([1], device=device),
                                                        torch.ones(1, device=device))
