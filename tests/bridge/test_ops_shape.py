"""Factories, copies, views, printing and the shape/creation kernels on tessera.

Every result is compared with the same op on CPU torch. Tests of ops with a
native tessera kernel also check that nothing reached the CPU fallback;
tests that need kernels from other families (fill_ for torch.zeros, the
comparisons and reductions that printing uses) name the fallbacks they
tolerate, so that they keep checking everything else.
"""

import pytest
import torch
import torch.nn.functional as F
import torch_tessera
from torch.testing import assert_close

from bridge_testing import assert_fallback_at_most, assert_no_fallback
from bridge_testing import random_tensor as sample

ALL_DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

# fill_ / zero_ back torch.zeros, ones, full and new_zeros; they are
# pointwise kernels, not part of this family.
FILL_OPS = {"aten::fill_.Scalar", "aten::zero_"}








def same(actual, expected):
    assert actual.device.type == "tessera"
    assert_close(actual.cpu(), expected, equal_nan=True)


# -- Factories -----------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zeros_ones_full_empty(tessera, dtype):
    same(torch.zeros(2, 3, dtype=dtype, device=tessera), torch.zeros(2, 3, dtype=dtype))
    same(torch.ones(4, dtype=dtype, device=tessera), torch.ones(4, dtype=dtype))
    same(torch.full((2, 2), 1, dtype=dtype, device=tessera), torch.full((2, 2), 1, dtype=dtype))
    e = torch.empty(3, 0, 2, dtype=dtype, device=tessera)
    assert e.shape == (3, 0, 2) and e.dtype == dtype and e.device == tessera
    assert_fallback_at_most(FILL_OPS)


def test_full_infers_dtype(tessera):
    assert torch.full((2,), 1.5, device=tessera).dtype == torch.float32
    assert torch.full((2,), 3, device=tessera).dtype == torch.int64
    assert torch.full((2,), True, device=tessera).dtype == torch.bool
    assert_fallback_at_most(FILL_OPS)


def test_tensor_from_data(tessera):
    data = [[1.5, -2.0], [3.0, 4.25]]
    same(torch.tensor(data, device=tessera), torch.tensor(data))
    same(torch.as_tensor([1, 2, 3], device=tessera), torch.as_tensor([1, 2, 3]))
    same(torch.tensor(5, device=tessera), torch.tensor(5))
    same(torch.tensor([], device=tessera), torch.tensor([]))
    same(torch.tensor([True, False], device=tessera), torch.tensor([True, False]))
    like = torch.empty_like(torch.tensor(data, device=tessera, dtype=torch.float64))
    assert like.device == tessera and like.dtype == torch.float64 and like.shape == (2, 2)
    assert_no_fallback()


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 11, 3), {}),
        ((10, 0, -2), {}),
        ((0.0, 1.0, 0.1), {}),
        ((-1.5, 2.25, 0.5), {"dtype": torch.float64}),
        ((0, 10, 3), {"dtype": torch.float32}),
        ((0.5, 4, 1.5), {"dtype": torch.int64}),
        ((0, 7), {"dtype": torch.int16}),
        ((3, 3), {}),
        ((0, 8, 2), {"dtype": torch.bfloat16}),
        # Integral results: start and step are truncated; the length comes
        # from the truncated bounds for int64, from the given ones otherwise.
        ((0.5, 4, 1.5), {"dtype": torch.int32}),
        ((-2.5, 3.7, 1.1), {"dtype": torch.int16}),
        ((1, 2.5), {"dtype": torch.uint8}),
        ((0, 5, 0.5), {"dtype": torch.int32}),
        ((7.9, -3, -2.5), {"dtype": torch.int8}),
        ((-3.5, 4.9, 2.2), {"dtype": torch.int64}),
    ],
)
def test_arange(tessera, args, kwargs):
    same(torch.arange(*args, device=tessera, **kwargs), torch.arange(*args, **kwargs))
    assert_no_fallback()


def test_arange_out(tessera):
    out = torch.empty(0, dtype=torch.int32, device=tessera)
    torch.arange(1, 6, out=out)
    same(out, torch.arange(1, 6, dtype=torch.int32))
    assert_no_fallback()


def test_arange_errors(tessera):
    with pytest.raises((ValueError, RuntimeError), match="step"):
        torch.arange(0, 5, 0, device=tessera)
    with pytest.raises((ValueError, RuntimeError), match="inconsistent with step sign"):
        torch.arange(5, 0, 1, device=tessera)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32])
@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-3, 7.5, 11), (2, -2, 4), (1, 1, 1), (0, 5, 0)])
def test_linspace(tessera, dtype, start, end, steps):
    got = torch.linspace(start, end, steps, dtype=dtype, device=tessera)
    ref = torch.linspace(start, end, steps, dtype=dtype)
    # CPU torch steps in float16 arithmetic; tessera computes each point in
    # double and rounds once, which may differ by a few float16 ulps.
    tol = {"atol": 2e-3, "rtol": 2e-3} if dtype == torch.float16 else {}
    assert got.device.type == "tessera"
    assert_close(got.cpu(), ref, **tol)
    assert_no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16])
@pytest.mark.parametrize("n, m", [(3, None), (2, 5), (5, 2), (0, 3), (1, 1)])
def test_eye(tessera, dtype, n, m):
    args = (n,) if m is None else (n, m)
    same(torch.eye(*args, dtype=dtype, device=tessera), torch.eye(*args, dtype=dtype))
    assert_no_fallback()


# -- Copies --------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_copy_round_trip(tessera, dtype):
    x = sample((3, 5), dtype)
    t = x.to(tessera)
    assert t.device == tessera and t.dtype == dtype
    same(t, x)
    # Non-contiguous sources both ways.
    same(x.t().to(tessera), x.t())
    assert_close(t.t().cpu(), x.t())
    assert_close(t[:, ::2].cpu(), x[:, ::2])
    assert_no_fallback()


@pytest.mark.parametrize("src, dst", [(torch.float32, torch.float16), (torch.int64, torch.float64),
                                      (torch.float32, torch.int32), (torch.bool, torch.float32),
                                      (torch.bfloat16, torch.float32), (torch.float64, torch.uint8)])
def test_to_changes_dtype(tessera, src, dst):
    x = sample((4, 3), src).abs() if src != torch.bool else sample((4, 3), src)
    same(x.to(tessera, dtype=dst), x.to(dst))                 # host -> tessera, cast
    same(x.to(tessera).to(dst), x.to(dst))                    # tessera -> tessera, cast
    assert_close(x.to(tessera).t().to("cpu", dst), x.t().to(dst))  # tessera -> host, cast
    assert_no_fallback()


def test_copy_into_views_and_broadcast(tessera):
    base = torch.zeros(4, 6)
    t = base.to(tessera)
    src = torch.arange(6.0)
    t[1:3].copy_(src)            # broadcast from host into a view
    base[1:3].copy_(src)
    t[:, 4].copy_(t[:, 1])       # tessera -> tessera, strided
    base[:, 4].copy_(base[:, 1])
    same(t, base)
    assert_no_fallback()


# -- Views ---------------------------------------------------------------

VIEWS = {
    "view": lambda x: x.view(6, 4),
    "reshape": lambda x: x.reshape(2, 12),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "slice_step": lambda x: x[1:, ::3],
    "select": lambda x: x[2],
    "select_neg": lambda x: x.select(-1, -2),
    "narrow": lambda x: x.narrow(1, 2, 3),
    "expand": lambda x: x[:, :1].expand(4, 5),
    "squeeze": lambda x: x[:1].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "as_strided": lambda x: x.as_strided((3, 3), (5, 1), 2),
    "unfold": lambda x: x.unfold(1, 3, 2),
    "diagonal": lambda x: x.diagonal(),
    "t": lambda x: x.t(),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_share_storage(tessera, name):
    x = torch.arange(24.0).reshape(4, 6)
    t = x.to(tessera)
    v, ref = VIEWS[name](t), VIEWS[name](x)
    assert v._base is t or v._base is None and name in ("view",)
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert v.data_ptr() == t.data_ptr() + ref.storage_offset() * t.element_size()
    assert v.stride() == ref.stride() and v.shape == ref.shape
    same(v, ref)
    assert_no_fallback()


def test_write_through_views_is_visible_in_base(tessera):
    x = torch.arange(24.0).reshape(4, 6)
    t = x.to(tessera)
    for make in (lambda a: a[1:3, ::2], lambda a: a.t()[2], lambda a: a.view(24)[5:9],
                 lambda a: a.as_strided((2, 2), (6, 1), 7)):
        src = torch.full(make(x).shape, -1.0) * (torch.arange(make(x).numel()).reshape(make(x).shape) + 1)
        make(t).copy_(src)
        make(x).copy_(src)
        same(t, x)
    assert_no_fallback()


def test_split_chunk_unbind_are_views(tessera):
    x = torch.arange(30.0).reshape(5, 6)
    t = x.to(tessera)
    for got, ref in [(t.split(2), x.split(2)), (t.split([1, 5], dim=-1), x.split([1, 5], dim=-1)),
                     (t.chunk(3, 1), x.chunk(3, 1)), (t.unbind(1), x.unbind(1)),
                     (t.tensor_split(3), x.tensor_split(3))]:
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            assert g.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
            assert g.data_ptr() == t.data_ptr() + r.storage_offset() * 4
            same(g, r)
    assert_no_fallback()


# -- Printing ------------------------------------------------------------

@pytest.mark.parametrize("value", [
    torch.tensor([1.5, -2.0, 3.25]),
    torch.tensor([[1, 2], [3, 4]], dtype=torch.int32),
    torch.tensor([1e10, 1e-3]),
    torch.tensor([True, False]),
    torch.tensor([0.5, 2.0], dtype=torch.float16),
    torch.tensor([0.5, 2.0], dtype=torch.bfloat16),
    torch.tensor(3.5),
    torch.tensor(7),
    torch.empty(0, 3),
    torch.empty(0, dtype=torch.int64),
    torch.tensor([float("nan"), float("inf"), 1.0], dtype=torch.float64),
    torch.arange(2000.0),
])
def test_printing(tessera, value):
    text = repr(value.to(tessera))
    expected = repr(value)
    # The device goes before any other suffix (dtype, size).
    body, sep, rest = expected.partition(", dtype=") if ", dtype=" in expected else expected.partition(", size=")
    if sep:
        expected = f"{body}, device='tessera:0'{sep}{rest}"
    else:
        expected = expected[:-1] + ", device='tessera:0')"
    assert text == expected


# -- Generated methods ---------------------------------------------------

def test_generated_tensor_methods(tessera):
    x = torch.arange(4.0)
    assert not x.is_tessera
    t = x.tessera()
    assert t.is_tessera and t.device == tessera
    same(t, x)
    m = torch.nn.Linear(2, 2).tessera()
    assert m.weight.is_tessera
    assert_fallback_at_most(set())


# -- Kernels of this family ----------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_clone(tessera, dtype):
    x = sample((3, 4, 5), dtype)
    t = x.to(tessera)
    c = t.clone()
    assert c.data_ptr() != t.data_ptr()
    same(c, x)
    p = t.permute(2, 0, 1).clone()                 # dense: strides kept
    assert p.stride() == x.permute(2, 0, 1).clone().stride()
    s = t[:, ::2].clone()                          # not dense: contiguous
    assert s.is_contiguous()
    same(s, x[:, ::2])
    cc = t.permute(2, 0, 1).clone(memory_format=torch.contiguous_format)
    assert cc.is_contiguous()
    same(cc, x.permute(2, 0, 1))
    assert_no_fallback()


def test_clone_channels_last_and_empty(tessera):
    x = torch.randn(2, 3, 4, 5)
    c = x.to(tessera).clone(memory_format=torch.channels_last)
    assert c.stride() == x.clone(memory_format=torch.channels_last).stride()
    same(c, x)
    same(torch.empty(0, 3).to(tessera).clone(), torch.empty(0, 3))
    e = torch.arange(3.0)[:, None].expand(3, 4)                    # stride 0: not dense
    ec = torch.arange(3.0).to(tessera)[:, None].expand(3, 4).clone()
    assert ec.is_contiguous() and ec.stride() == e.clone().stride()
    same(torch.arange(3.0).to(tessera)[:, None].expand(3, 4).clone(), e)
    same(torch.tensor(2.5).to(tessera).clone(), torch.tensor(2.5))
    assert_no_fallback()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat(tessera, dtype, dim):
    a, b = sample((3, 4), dtype, 1), sample((3, 4), dtype, 2)
    c = sample((4, 3), dtype, 3).t()                # non-contiguous
    ref = torch.cat([a, b, c], dim)
    same(torch.cat([a.to(tessera), b.to(tessera), c.to(tessera)], dim), ref)
    assert_no_fallback()


def test_cat_promotes_and_skips_empty(tessera):
    a = torch.arange(6).reshape(2, 3)
    b = torch.randn(1, 3)
    same(torch.cat([a.to(tessera), b.to(tessera)]), torch.cat([a, b]))
    e = torch.empty(0)                              # legacy empty tensor
    same(torch.cat([e.to(tessera), b.to(tessera), e.to(tessera)]), torch.cat([e, b, e]))
    z = torch.empty(0, 3)
    same(torch.cat([z.to(tessera), b.to(tessera)]), torch.cat([z, b]))
    assert_no_fallback()


def test_cat_out(tessera):
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    out = torch.empty(0, device=tessera)
    torch.cat([a.to(tessera), b.to(tessera)], 1, out=out)
    same(out, torch.cat([a, b], 1))
    assert_no_fallback()


def test_cat_errors(tessera):
    with pytest.raises((ValueError, RuntimeError), match="Sizes of tensors must match"):
        torch.cat([torch.ones(2, 3).to(tessera), torch.ones(2, 2).to(tessera)], 0)
    with pytest.raises((ValueError, RuntimeError), match="zero-dimensional"):
        torch.cat([torch.tensor(1.0).to(tessera)])
    with pytest.raises(RuntimeError, match="tessera"):
        torch.cat([torch.ones(2).to(tessera), torch.ones(2)])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(tessera, dim):
    xs = [torch.randn(2, 3) for _ in range(3)]
    same(torch.stack([x.to(tessera) for x in xs], dim), torch.stack(xs, dim))
    assert_no_fallback()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_flip_roll_repeat(tessera, dtype):
    x = sample((3, 4, 2), dtype)
    t = x.to(tessera)
    for dims in [(0,), (-1,), (0, 2), (1, -1, 0)]:
        same(t.flip(dims), x.flip(dims))
    same(t.transpose(0, 2).flip(1), x.transpose(0, 2).flip(1))
    for shifts, dims in [(1, 0), (-2, -2), ((1, 5), (0, 2)), (7, None)]:
        same(t.roll(shifts, dims), x.roll(shifts, dims))
    for repeats in [(2, 1, 1), (1, 2, 3), (2, 1, 1, 2), (1, 0, 1)]:
        same(t.repeat(*repeats), x.repeat(*repeats))
    same(t[:, ::2].repeat(2, 1, 1), x[:, ::2].repeat(2, 1, 1))
    assert_no_fallback()


def test_flip_errors(tessera):
    with pytest.raises((ValueError, RuntimeError), match="appears multiple times"):
        torch.ones(2, 2).to(tessera).flip(0, 0)
    with pytest.raises((ValueError, RuntimeError), match="repeat"):
        torch.ones(2, 2).to(tessera).repeat(2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.bool])
@pytest.mark.parametrize("pad", [(1, 1), (0, 2, 1, 0), (2, 1, 0, 0, 1, 1), (-1, 1), (1, -2, -1, 0)])
def test_constant_pad(tessera, dtype, pad):
    x = sample((2, 3, 4), dtype)
    value = True if dtype == torch.bool else 3
    same(F.pad(x.to(tessera), pad, value=value), F.pad(x, pad, value=value))
    same(F.pad(x.to(tessera).transpose(1, 2), pad), F.pad(x.transpose(1, 2), pad))
    assert_no_fallback()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("diagonal", [0, 1, -1, 5, -5])
def test_tril_triu(tessera, dtype, diagonal):
    x = sample((2, 4, 5), dtype)
    t = x.to(tessera)
    same(t.tril(diagonal), x.tril(diagonal))
    same(t.triu(diagonal), x.triu(diagonal))
    same(t.transpose(1, 2).triu(diagonal), x.transpose(1, 2).triu(diagonal))
    out = torch.empty(0, dtype=dtype, device=tessera)
    torch.tril(t, diagonal, out=out)
    same(out, x.tril(diagonal))
    assert_no_fallback()


def test_tril_triu_in_place_on_views(tessera):
    x = torch.randn(4, 6)
    t = x.to(tessera)
    t[:, 1:5].tril_(1)                      # a non-contiguous view of t
    x[:, 1:5].tril_(1)
    t.t()[1:].triu_()
    x.t()[1:].triu_()
    same(t, x)
    with pytest.raises((ValueError, RuntimeError), match="at least 2 dimensions"):
        torch.ones(3).to(tessera).tril()
    assert_no_fallback()
