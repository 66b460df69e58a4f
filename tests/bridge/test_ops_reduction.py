"""Native tessera kernels for reductions and scans, compared with torch on CPU.

Each test runs an op on CPU and on tessera with the same inputs, compares
with torch.testing.assert_close, and checks that the op itself did not go
through the CPU fallback (other ops a test touches, such as the pointwise
ops of a backward formula, may still be served by it).
"""

import math

import pytest
import torch
from torch.testing import assert_close

import torch_tessera
from bridge_testing import to_dev

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64, torch.uint8, torch.int16]


def tol(dtype):
    if dtype == torch.float16:
        return dict(rtol=2e-3, atol=2e-3)
    if dtype == torch.bfloat16:
        return dict(rtol=2e-2, atol=2e-2)
    return {}


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return torch.randint(0, 5, shape, generator=g).to(dtype)




def assert_native(*ops):
    """None of `ops` (aten names without overload) went through the fallback."""
    used = torch_tessera.fallback_stats()
    hit = [k for k in used if k.split(".")[0] in {"aten::" + op for op in ops}]
    assert not hit, f"CPU fallback served {hit}"


def compare(fn, args, dev, ops, **kw):
    expected = fn(*args)
    actual = fn(*to_dev(args, dev))
    exp_list = expected if isinstance(expected, tuple) else (expected,)
    act_list = actual if isinstance(actual, tuple) else (actual,)
    for e, a in zip(exp_list, act_list):
        assert a.device.type == "tessera"
        assert a.dtype == e.dtype and a.shape == e.shape
        assert_close(a.cpu(), e, **kw)
    assert_native(*ops)
    return actual


# -- sum / mean / prod ------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_sum_all_and_dims(tessera, dtype):
    x = make((3, 4, 5), dtype)
    compare(lambda t: t.sum(), (x,), tessera, ["sum"], **tol(dtype))
    for dim in (0, -1, (0, 2), (-1, -3)):
        for keepdim in (False, True):
            compare(lambda t: t.sum(dim, keepdim=keepdim), (x,), tessera, ["sum"], **tol(dtype))


def test_sum_dtype_noncontiguous_empty_out(tessera):
    x = make((4, 6), torch.float32)
    compare(lambda t: t.t().sum(0), (x,), tessera, ["sum"])
    compare(lambda t: t[:, ::2].sum(1, keepdim=True), (x,), tessera, ["sum"])
    compare(lambda t: t.sum(1, dtype=torch.float64), (x,), tessera, ["sum"])
    compare(lambda t: make((3, 2), torch.int32).to(t.device).sum(dtype=torch.float32), (x,),
            tessera, ["sum"])
    compare(lambda t: t[:0].sum(0), (x,), tessera, ["sum"])
    compare(lambda t: t[:0].sum(), (x,), tessera, ["sum"])

    def with_out(t):
        out = torch.empty(0, device=t.device, dtype=torch.float64)
        r = torch.sum(t, 0, out=out)
        assert r is out
        return out

    compare(with_out, (x,), tessera, ["sum"])


@pytest.mark.parametrize("dtype", FLOATS)
def test_mean(tessera, dtype):
    x = make((3, 4, 5), dtype)
    compare(lambda t: t.mean(), (x,), tessera, ["mean"], **tol(dtype))
    compare(lambda t: t.mean((0, -1), keepdim=True), (x,), tessera, ["mean"], **tol(dtype))
    compare(lambda t: t.transpose(0, 2).mean(1), (x,), tessera, ["mean"], **tol(dtype))


def test_mean_errors_and_out(tessera):
    x = torch.arange(6, device=tessera).reshape(2, 3)
    # A TypeError, as the runtime classifies it (CPU torch says RuntimeError).
    with pytest.raises(RuntimeError, match="mean.*int64"):
        x.mean()
    y = make((2, 3), torch.float32)
    compare(lambda t: t.mean(dtype=torch.float64), (y,), tessera, ["mean"])
    compare(lambda t: torch.mean(t, 1, out=torch.empty(2, device=t.device)), (y,), tessera,
            ["mean"])
    # out's dtype is the compute dtype, as for aten's mean.out.
    compare(lambda t: torch.mean(t, 1, out=torch.empty(2, device=t.device, dtype=torch.float64)),
            (y,), tessera, ["mean"])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.bool])
def test_prod(tessera, dtype):
    x = make((3, 4), dtype) if not dtype.is_floating_point else make((3, 4), dtype) * 0.5 + 1
    compare(lambda t: t.prod(), (x,), tessera, ["prod"], **tol(dtype))
    compare(lambda t: t.prod(-1), (x,), tessera, ["prod"], **tol(dtype))
    compare(lambda t: t.prod(0, keepdim=True), (x,), tessera, ["prod"], **tol(dtype))
    compare(lambda t: t.t().prod(1, dtype=torch.float64), (x,), tessera, ["prod"])


# -- max / min / arg / amax ----------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_max_min(tessera, dtype):
    x = make((4, 5), dtype)
    compare(lambda t: t.max(), (x,), tessera, ["max"])
    compare(lambda t: t.min(), (x,), tessera, ["min"])
    for dim in (0, -1):
        for keepdim in (False, True):
            compare(lambda t: tuple(t.max(dim, keepdim=keepdim)), (x,), tessera, ["max"])
            compare(lambda t: tuple(t.min(dim, keepdim=keepdim)), (x,), tessera, ["min"])
    compare(lambda t: tuple(t.t().max(1)), (x,), tessera, ["max"])


def test_max_out_and_errors(tessera):
    x = make((4, 5), torch.float32)

    def with_out(t):
        v = torch.empty(0, device=t.device)
        i = torch.empty(0, device=t.device, dtype=torch.long)
        torch.max(t, 1, out=(v, i))
        return v, i

    compare(with_out, (x,), tessera, ["max"])
    # The runtime's error kinds: ValueError / TypeError where torch's CPU
    # kernels raise RuntimeError.
    with pytest.raises(RuntimeError, match="max.*numel"):
        torch.empty(0, device=tessera).max()


def test_max_nan_wins(tessera):
    x = torch.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]])
    compare(lambda t: tuple(t.max(1)), (x,), tessera, ["max"], equal_nan=True)
    compare(lambda t: t.max(), (x,), tessera, ["max"], equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_argmax_argmin(tessera, dtype):
    x = make((3, 5), dtype, seed=3)
    for fn in (torch.argmax, torch.argmin):
        compare(lambda t: fn(t), (x,), tessera, ["argmax", "argmin"])
        compare(lambda t: fn(t, keepdim=True), (x,), tessera, ["argmax", "argmin"])
        compare(lambda t: fn(t, -1), (x,), tessera, ["argmax", "argmin"])
        compare(lambda t: fn(t.t(), 0, keepdim=True), (x,), tessera, ["argmax", "argmin"])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_amax_amin(tessera, dtype):
    x = make((3, 4, 5), dtype)
    for fn in (torch.amax, torch.amin):
        compare(lambda t: fn(t), (x,), tessera, ["amax", "amin"])
        compare(lambda t: fn(t, (0, -1)), (x,), tessera, ["amax", "amin"])
        compare(lambda t: fn(t.transpose(0, 1), 1, keepdim=True), (x,), tessera, ["amax", "amin"])
        compare(lambda t: fn(t, 1, out=torch.empty(0, device=t.device, dtype=t.dtype)), (x,),
                tessera, ["amax", "amin"])


# -- var / std / norms -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std(tessera, dtype):
    x = make((4, 6), dtype)
    for fn in (torch.var, torch.std):
        compare(lambda t: fn(t), (x,), tessera, ["var", "std"], **tol(dtype))
        compare(lambda t: fn(t, 1), (x,), tessera, ["var", "std"], **tol(dtype))
        compare(lambda t: fn(t, 0, unbiased=False, keepdim=True), (x,), tessera, ["var", "std"],
                **tol(dtype))
        compare(lambda t: fn(t.t(), (0, 1), correction=0), (x,), tessera, ["var", "std"],
                **tol(dtype))
        compare(lambda t: fn(t, -1, correction=2), (x,), tessera, ["var", "std"], **tol(dtype))


def test_var_mean_std_mean(tessera):
    x = make((4, 6), torch.float32)
    compare(lambda t: torch.var_mean(t, 1), (x,), tessera, ["var_mean", "var", "mean"])
    compare(lambda t: torch.std_mean(t, (0, 1), keepdim=True, correction=0), (x,), tessera,
            ["std_mean", "std", "mean"])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", [1, 2, math.inf, -math.inf, 0, 3, 0.5])
def test_vector_norm(tessera, dtype, ord):
    x = make((4, 5), dtype)
    compare(lambda t: torch.linalg.vector_norm(t, ord), (x,), tessera, ["linalg_vector_norm"],
            **tol(dtype))
    compare(lambda t: torch.linalg.vector_norm(t.t(), ord, dim=1, keepdim=True), (x,), tessera,
            ["linalg_vector_norm"], **tol(dtype))


def test_norm_overloads(tessera):
    x = make((4, 5), torch.float32)
    compare(lambda t: t.norm(), (x,), tessera, ["norm", "linalg_vector_norm"])
    compare(lambda t: t.norm(1, dim=1), (x,), tessera, ["norm", "linalg_vector_norm"])
    compare(lambda t: torch.norm(t, 2, dim=0, keepdim=True, dtype=torch.float64), (x,), tessera,
            ["norm", "linalg_vector_norm"])
    compare(lambda t: torch.linalg.vector_norm(t, dtype=torch.float64), (x,), tessera,
            ["linalg_vector_norm"])


def test_norm_rejects_integers(tessera):
    with pytest.raises(RuntimeError, match="norm.*floating"):
        torch.linalg.vector_norm(torch.arange(4, device=tessera))
    with pytest.raises(RuntimeError, match="norm.*floating"):
        torch.linalg.vector_norm(torch.arange(4, device=tessera), dtype=torch.float32)


# -- all / any / logsumexp / scans ------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8])
def test_all_any(tessera, dtype):
    x = make((3, 4), dtype)
    for fn in (torch.all, torch.any):
        compare(lambda t: fn(t), (x,), tessera, ["all", "any"])
        compare(lambda t: fn(t, 1), (x,), tessera, ["all", "any"])
        compare(lambda t: fn(t.t(), 0, keepdim=True), (x,), tessera, ["all", "any"])
        compare(lambda t: fn(t, (0, 1)), (x,), tessera, ["all", "any"])
    compare(lambda t: torch.all(t[:0]), (x,), tessera, ["all"])
    compare(lambda t: torch.any(t[:0]), (x,), tessera, ["any"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_logsumexp(tessera, dtype):
    x = make((3, 4, 5), dtype) * 10
    compare(lambda t: torch.logsumexp(t, 1), (x,), tessera, ["logsumexp"], **tol(dtype))
    compare(lambda t: torch.logsumexp(t.transpose(0, 2), (0, -1), keepdim=True), (x,), tessera,
            ["logsumexp"], **tol(dtype))
    i = make((3, 4), torch.int64)
    compare(lambda t: torch.logsumexp(t, 0), (i,), tessera, ["logsumexp"])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.bool])
def test_cumsum_cumprod(tessera, dtype):
    x = make((3, 4), dtype)
    if dtype.is_floating_point:
        x = x * 0.3 + 1
    for fn in (torch.cumsum, torch.cumprod):
        compare(lambda t: fn(t, 1), (x,), tessera, ["cumsum", "cumprod"], **tol(dtype))
        compare(lambda t: fn(t.t(), -1), (x,), tessera, ["cumsum", "cumprod"], **tol(dtype))
        compare(lambda t: fn(t, 0, dtype=torch.float64), (x,), tessera, ["cumsum", "cumprod"])


def test_cumsum_inplace_and_out(tessera):
    x = make((3, 4), torch.float32)
    compare(lambda t: t.clone().cumsum_(0), (x,), tessera, ["cumsum"])
    compare(lambda t: torch.cumsum(t, 1, out=torch.empty(0, device=t.device)), (x,), tessera,
            ["cumsum"])


# -- autograd ----------------------------------------------------------------------------


GRAD_CASES = {
    "sum": lambda t: t.sum(1),
    "mean": lambda t: t.mean((0, 2), keepdim=True),
    "prod": lambda t: t.prod(1),
    "max_dim": lambda t: t.max(-1).values,
    "amax": lambda t: t.amax(0),
    "var": lambda t: t.var(1),
    "std": lambda t: t.std(),
    "norm2": lambda t: torch.linalg.vector_norm(t, dim=1),
    "norm1": lambda t: torch.linalg.vector_norm(t, 1),
    "logsumexp": lambda t: torch.logsumexp(t, 2),
    "cumsum": lambda t: t.cumsum(1),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_backward_matches_cpu(tessera, case):
    fn = GRAD_CASES[case]
    x = make((3, 4, 5), torch.float64, seed=7) + 0.1
    xc = x.clone().requires_grad_()
    xt = x.to(tessera).requires_grad_()
    yc, yt = fn(xc), fn(xt)
    w = make(tuple(yc.shape), torch.float64, seed=8)
    (yc * w).sum().backward()
    (yt * w.to(tessera)).sum().backward()
    assert_close(yt.detach().cpu(), yc.detach())
    assert_close(xt.grad.cpu(), xc.grad)
    assert_native("sum", "mean", "prod", "max", "amax", "var", "std", "linalg_vector_norm",
                  "logsumexp", "cumsum")


def test_out_dtype_rules_follow_aten(tessera):
    x = make((3, 4), torch.float32).to(tessera)
    f64 = torch.empty(0, device=tessera, dtype=torch.float64)
    i32 = torch.empty(0, device=tessera, dtype=torch.int32)
    # No cast for these: out must have the result's dtype.
    with pytest.raises(RuntimeError, match="dtype"):
        torch.amax(x, 0, out=f64)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.argmax(x, 0, out=i32)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.max(x, 0, out=(torch.empty(0, device=tessera), i32))
    with pytest.raises(RuntimeError, match="dtype"):
        torch.linalg.vector_norm(x, out=f64)
    with pytest.raises(RuntimeError, match="bool"):
        torch.all(x, 0, out=torch.empty(0, device=tessera))
    # These compute in (or cast to) out's dtype, as on CPU.
    for fn in (lambda t, o: torch.var(t, 0, out=o), lambda t, o: torch.logsumexp(t, 0, out=o),
               lambda t, o: torch.cumsum(t, 0, out=o), lambda t, o: torch.prod(t, 0, out=o),
               lambda t, o: torch.max(t, out=o)):
        expected = fn(x.cpu(), torch.empty(0, dtype=torch.float64))
        got = fn(x, torch.empty(0, device=tessera, dtype=torch.float64))
        assert got.dtype == torch.float64
        assert_close(got.cpu(), expected)
    u8 = torch.empty(0, device=tessera, dtype=torch.uint8)
    assert_close(torch.any(x, 1, out=u8).cpu(), torch.any(x.cpu(), 1).to(torch.uint8))
