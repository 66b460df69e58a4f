"""scatter_reduce, scatter(..., reduce=) and index_reduce on every tessera
device against torch's CPU: every reduction with and without self, every
dtype, duplicate destinations (the fold's order matters), NaN in amax and
amin, non-contiguous operands, out= and in-place forms, gradients, errors,
and no CPU fallback (they are the runtime's scatter reductions)."""

import math

import pytest
import torch
import torch_tessera

from bridge_testing import assert_exact as exact
from bridge_testing import assert_no_fallback, every_device
from bridge_testing import random_tensor as sample

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def supported(reduce, dtype):
    return not (reduce == "mean" and dtype == torch.bool)


def small_values(shape, dtype, seed):
    """Values in [-3, 3] (products of a few stay in range), bools half true."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    low = 0 if dtype == torch.uint8 else -3
    values = torch.randint(low, 4, shape, generator=g)
    if dtype.is_floating_point:
        values = values + torch.rand(shape, generator=g).round(decimals=2)
    return values.to(dtype)


@every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False], ids=["with_self", "without_self"])
def test_scatter_reduce_matches_cpu(device, dtype, reduce, include_self):
    if not supported(reduce, dtype):
        pytest.skip("torch has no mean of bool")
    self = small_values((4, 6), dtype, 1)
    index = torch.randint(0, 4, (5, 6), generator=torch.Generator().manual_seed(2))
    src = small_values((5, 7), dtype, 3)
    want = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
    torch_tessera.reset_fallback_stats()
    got = self.to(device).scatter_reduce(0, index.to(device), src.to(device), reduce,
                                         include_self=include_self)
    assert_no_fallback()
    exact(got, want)


@every_device
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_layouts_and_forms(device, reduce):
    """Transposed self, transposed index, expanded src, dim -1; in-place and
    out= forms; a 0-d self."""
    g = torch.Generator().manual_seed(4)
    self = torch.randn(7, 5, generator=g).t()          # [5, 7], transposed
    index = torch.randint(0, 7, (6, 4), generator=g).t()  # [4, 6], transposed
    src = torch.randn(4, 1, generator=g).expand(4, 9)
    for include_self in (True, False):
        want = self.scatter_reduce(-1, index, src, reduce, include_self=include_self)
        t_self, t_index, t_src = self.to(device), index.to(device), src.to(device)
        exact(t_self.scatter_reduce(-1, t_index, t_src, reduce, include_self=include_self), want)
        inplace = t_self.clone()
        inplace.scatter_reduce_(-1, t_index, t_src, reduce, include_self=include_self)
        exact(inplace, want)
        out = torch.empty(0, device=device)
        torch.scatter_reduce(t_self, -1, t_index, t_src, reduce, include_self=include_self,
                             out=out)
        exact(out, want)
    scalar = torch.tensor(2.5)
    want = scalar.scatter_reduce(0, torch.tensor(0), torch.tensor(-1.5), reduce)
    exact(scalar.to(device).scatter_reduce(0, torch.tensor(0, device=device),
                                           torch.tensor(-1.5, device=device), reduce), want)
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64],
                         ids=str)
def test_nan_and_infinities_win_as_on_cpu(device, reduce, dtype):
    self = torch.tensor([1.0, math.nan, 3.0, -0.0, 5.0, 0.0]).to(dtype)
    src = torch.tensor([math.nan, 2.0, -math.inf, 0.0, math.inf, math.nan, 7.0, -0.0]).to(dtype)
    index = torch.tensor([0, 1, 2, 3, 4, 4, 5, 5])
    for include_self in (True, False):
        want = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
        got = self.to(device).scatter_reduce(0, index.to(device), src.to(device), reduce,
                                             include_self=include_self)
        exact(got, want)
        assert torch.equal(got.cpu().signbit(), want.signbit())


@every_device
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_uint8_compares_unsigned(device, reduce):
    """Bytes above 127: uint8 compares as unsigned, int8 as signed."""
    for dtype in (torch.uint8, torch.int8):
        values = torch.tensor([0, 1, 127, 128, 200, 255, 3, 254], dtype=torch.uint8).view(dtype)
        self = values[:4].clone()
        index = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
        for include_self in (True, False):
            want = self.scatter_reduce(0, index, values, reduce, include_self=include_self)
            exact(self.to(device).scatter_reduce(0, index.to(device), values.to(device), reduce,
                                                 include_self=include_self), want)


@every_device
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8,
                                   torch.bool], ids=str)
def test_scatter_with_reduce_keyword(device, dtype):
    self = small_values((3, 5), dtype, 5)
    index = torch.tensor([[0, 1, 2, 0, 0], [2, 2, 1, 0, 1]])
    src = small_values((2, 5), dtype, 6)
    torch_tessera.reset_fallback_stats()
    for reduce in ("add", "multiply"):
        want = self.scatter(0, index, src, reduce=reduce)
        got = self.to(device).scatter(0, index.to(device), src.to(device), reduce=reduce)
        exact(got, want)
        value = True if dtype == torch.bool else 2
        exact(self.to(device).scatter(0, index.to(device), value, reduce=reduce),
              self.scatter(0, index, value, reduce=reduce))
        inplace = self.to(device)
        inplace.scatter_(0, index.to(device), src.to(device), reduce=reduce)
        exact(inplace, want)
        out = torch.empty(0, dtype=dtype, device=device)
        torch.scatter(self.to(device), 0, index.to(device), src.to(device), reduce=reduce, out=out)
        exact(out, want)
    assert_no_fallback()


@every_device
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False], ids=["with_self", "without_self"])
def test_index_reduce_matches_cpu(device, dtype, reduce, include_self):
    if not supported(reduce, dtype):
        pytest.skip("torch has no mean of bool")
    self = small_values((5, 3, 4), dtype, 7)
    source = small_values((5, 6, 4), dtype, 8)
    for index in (torch.tensor([2, 0, 2, 1, 2, 0]), torch.tensor([1, 1, 0, 2, 0, 1], dtype=torch.int32)):
        try:
            want = self.index_reduce(1, index, source, reduce, include_self=include_self)
        except NotImplementedError as e:  # bool without self: no CPU kernel to compare with
            pytest.skip(f"the CPU refuses: {e}")
        torch_tessera.reset_fallback_stats()
        got = self.to(device).index_reduce(1, index.to(device), source.to(device), reduce,
                                           include_self=include_self)
        assert_no_fallback()
        exact(got, want)


@every_device
def test_index_reduce_forms(device):
    self = torch.randn(6, 3).t()  # [3, 6], transposed
    source = torch.randn(3, 4)
    index = torch.tensor([5, 0, 5, 2])
    want = self.index_reduce(1, index, source, "amax", include_self=False)
    t_self, t_index, t_source = self.to(device), index.to(device), source.to(device)
    inplace = t_self.clone()
    inplace.index_reduce_(1, t_index, t_source, "amax", include_self=False)
    exact(inplace, want)
    out = torch.empty(0, device=device)
    torch.index_reduce(t_self, 1, t_index, t_source, "amax", include_self=False, out=out)
    exact(out, want)
    assert_no_fallback()


@every_device
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False], ids=["with_self", "without_self"])
def test_scatter_reduce_gradients_match_cpu(device, reduce, include_self):
    """Autograd's scatter_reduce backward (torch's formulas, which call the
    reductions again and gather) runs on tessera as on the CPU."""
    if reduce == "prod" and not include_self:
        pytest.skip("torch's CPU backward raises for prod without self")
    g = torch.Generator().manual_seed(9)
    self = torch.randn(4, 5, generator=g)
    src = torch.randn(6, 5, generator=g)
    src[2, 1] = 0.0  # prod's backward handles zeros apart
    index = torch.randint(0, 4, (6, 5), generator=g)
    grad = torch.randn(4, 5, generator=g)

    def grads(dev):
        a = self.to(dev, copy=True).requires_grad_()
        b = src.to(dev, copy=True).requires_grad_()
        a.scatter_reduce(0, index.to(dev), b, reduce, include_self=include_self).backward(
            grad.to(dev))
        return a.grad.cpu(), b.grad.cpu()

    want = grads("cpu")
    torch_tessera.reset_fallback_stats()
    got = grads(device)
    assert_no_fallback()
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y)


@every_device
def test_errors_name_the_op(device):
    t = torch.ones(3, 4, device=device)
    index = torch.zeros(1, 4, dtype=torch.int64, device=device)
    with pytest.raises(RuntimeError, match="sum, prod, mean, amax or amin"):
        t.scatter_reduce(0, index, t[:1], "max")
    with pytest.raises(IndexError, match="scatter_reduce: index 3 is out of bounds for dimension 0"):
        t.scatter_reduce(0, index + 3, t[:1], "amax")
    with pytest.raises(RuntimeError, match="mean.*bool"):
        torch.ones(3, dtype=torch.bool, device=device).scatter_reduce(
            0, index[0, :1], torch.ones(1, dtype=torch.bool, device=device), "mean")
    with pytest.raises(RuntimeError, match="add or multiply"):
        t.scatter(0, index, t[:1], reduce="sum")
    with pytest.raises(RuntimeError, match="prod, mean, amax or amin"):
        t.index_reduce(0, index[0, :1], t[:1], "sum")
    with pytest.raises(IndexError, match="index_reduce: index 5 is out of bounds"):
        t.index_reduce(0, index[0, :1] + 5, t[:1], "prod")


@every_device
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_sums_round_as_the_cpu(device, dtype):
    """Many values into few positions, where the rounding shows: PyTorch's
    CPU scatter_add, scatter_reduce and index_add (alpha 1, more than one
    dim) sum float16/bfloat16 in float and round once; index_reduce, and
    index_add with another alpha or a 1-D self, round every step."""
    g = torch.Generator().manual_seed(11)
    self = (torch.randn(4, 6, generator=g) * 3).to(dtype)
    src = (torch.randn(50, 6, generator=g) * 3).to(dtype)
    index = torch.randint(0, 4, (50, 6), generator=g)
    rows = torch.randint(0, 4, (50,), generator=g)
    cases = {
        "scatter_add": lambda x, i, r, s: x.scatter_add(0, i, s),
        "scatter_reduce sum": lambda x, i, r, s: x.scatter_reduce(0, i, s, "sum"),
        "scatter_reduce prod": lambda x, i, r, s: x.scatter_reduce(0, i, s / 2, "prod"),
        "scatter_reduce mean": lambda x, i, r, s: x.scatter_reduce(0, i, s, "mean",
                                                                 include_self=False),
        "index_add": lambda x, i, r, s: x.index_add(0, r, s),
        "index_add alpha 3": lambda x, i, r, s: x.index_add(0, r, s, alpha=3),
        "index_add 1-D": lambda x, i, r, s: x[:, 0].index_add(0, r, s[:, 0]),
        "index_reduce prod": lambda x, i, r, s: x.index_reduce(0, r, s / 2, "prod"),
        "index_reduce mean": lambda x, i, r, s: x.index_reduce(0, r, s, "mean"),
    }
    for name, op in cases.items():
        want = op(self, index, rows, src)
        got = op(self.to(device), index.to(device), rows.to(device), src.to(device))
        assert got.dtype == want.dtype, name
        assert torch.equal(got.cpu(), want), name
