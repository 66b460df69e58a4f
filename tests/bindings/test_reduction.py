"""Reductions, scans, order statistics and softmax of the tessera module
(tessera.sum ... tessera.softmax, their Tensor methods, out= and in-place
forms, tessera.return_types), against NumPy on every device."""

import math

import numpy as np
import pytest

import tessera

NUMPY_DTYPE = {
    tessera.float16: np.float16, tessera.float32: np.float32, tessera.float64: np.float64,
    tessera.int8: np.int8, tessera.int16: np.int16, tessera.int32: np.int32,
    tessera.int64: np.int64, tessera.uint8: np.uint8, tessera.bool: np.bool_,
}
TESSERA_DTYPE = {np.dtype(v): k for k, v in NUMPY_DTYPE.items()}
FLOATS = (tessera.float16, tessera.float32, tessera.float64)
# Absolute and relative tolerance of each floating dtype against a float64
# reference computed from the same (rounded) inputs.
TOLERANCE = {tessera.float16: 1e-2, tessera.float32: 1e-5, tessera.float64: 1e-12}


def supports(device, dtype):
    props = tessera.get_device_properties(device)
    return not ((dtype == tessera.float64 and not props["supports_float64"])
                or (dtype == tessera.float16 and not props["supports_float16"])
                or (dtype == tessera.int64 and not props["supports_int64"]))


def skip_unsupported(device, *dtypes):
    for dtype in dtypes:
        if not supports(device, dtype):
            pytest.skip(f"{device} has no {dtype}")


def to_tessera(a, device):
    a = np.asarray(a)
    flat = tessera.tensor(a.ravel().tolist(), dtype=TESSERA_DTYPE[a.dtype], device=device)
    return flat.reshape(a.shape)


def to_numpy(t):
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPE[t.dtype]).reshape(t.shape)


def check(t, expected, dtype=None):
    """t has expected's values (and shape); its dtype is dtype when given."""
    expected = np.asarray(expected)
    if dtype is not None:
        assert t.dtype == dtype
    assert tuple(t.shape) == expected.shape, (t.shape, expected.shape)
    got = to_numpy(t)
    if t.dtype in FLOATS:
        tol = TOLERANCE[t.dtype]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def sample(shape, dtype, low=-5, high=6, seed=0):
    """Values of a tessera dtype, as the NumPy array of that dtype."""
    rng = np.random.default_rng(seed)
    np_dtype = NUMPY_DTYPE[dtype]
    if dtype == tessera.bool:
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        return rng.standard_normal(shape).astype(np_dtype)
    return rng.integers(low, high, shape).astype(np_dtype)


def axis_of(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def reference(a):
    """a in float64 (floating) or int64 (integers and bool), for reference sums."""
    return a.astype(np.float64 if a.dtype.kind == "f" else np.int64)


DIMS = [None, 0, -1, (0, 2), [-1, 0], (1,)]


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16,
                                   tessera.int32, tessera.int64, tessera.bool], ids=str)
def test_sum_mean_nansum_over_dims(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4, 5), dtype)
    x = to_tessera(a, device)
    sum_dtype = dtype if dtype in FLOATS else tessera.int64
    for dim in DIMS:
        for keepdim in (False, True):
            expected = reference(a).sum(axis=axis_of(dim), keepdims=keepdim)
            check(tessera.sum(x, dim, keepdim), expected, sum_dtype)
            check(x.sum(dim=dim, keepdim=keepdim), expected, sum_dtype)
            check(tessera.nansum(input=x, dim=dim, keepdim=keepdim), expected, sum_dtype)
            check(x.nansum(dim, keepdim), expected, sum_dtype)
            mean = reference(a).mean(axis=axis_of(dim), keepdims=keepdim)
            if dtype in FLOATS:
                check(tessera.mean(x, dim, keepdim), mean, dtype)
                check(x.mean(dim, keepdim=keepdim), mean, dtype)
            else:
                with pytest.raises(TypeError, match="mean"):
                    tessera.mean(x, dim, keepdim)
    if supports(device, tessera.float64):
        # dtype= computes in that dtype; it makes mean of integers possible.
        check(tessera.sum(x, dtype=tessera.float64), reference(a).sum(), tessera.float64)
        check(x.mean(0, dtype=tessera.float64), reference(a).mean(axis=0), tessera.float64)
    assert tessera.sum(x).shape == () and x.sum().ndim == 0


def test_nansum_and_mean_with_nan(device):
    a = np.array([[1.0, np.nan, 2.0], [np.inf, 3.0, np.nan]], dtype=np.float32)
    x = to_tessera(a, device)
    check(tessera.nansum(x, 1), np.nansum(a, axis=1), tessera.float32)
    check(tessera.nansum(x), np.nansum(a))
    check(tessera.sum(x, 0), a.sum(axis=0))
    check(x.mean(1), a.mean(axis=1))


def test_prod(device):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    x = to_tessera(a, device)
    check(tessera.prod(x), np.prod(a.astype(np.float64)), tessera.float32)
    check(x.prod(), np.prod(a.astype(np.float64)))
    for dim in (0, 1, -1, -2):
        for keepdim in (False, True):
            expected = np.prod(a.astype(np.float64), axis=dim, keepdims=keepdim)
            check(tessera.prod(x, dim, keepdim), expected, tessera.float32)
            check(x.prod(dim=dim, keepdim=keepdim), expected)
    ints = np.array([[1, -2, 3], [2, 2, -1]], dtype=np.int32)
    xi = to_tessera(ints, device)
    check(tessera.prod(xi), np.prod(ints.astype(np.int64)), tessera.int64)
    check(xi.prod(1), np.prod(ints.astype(np.int64), axis=1), tessera.int64)
    check(tessera.prod(xi, 0, dtype=tessera.float32), np.prod(ints, axis=0), tessera.float32)
    check(tessera.prod(to_tessera(np.array([True, False]), device)), 0, tessera.int64)
    # prod takes one dim, not a list; keepdim needs dim (PyTorch's overloads).
    with pytest.raises(TypeError):
        tessera.prod(x, (0, 1))
    with pytest.raises(TypeError):
        tessera.prod(x, keepdim=True)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16,
                                   tessera.int32, tessera.int64], ids=str)
def test_amax_amin(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4, 5), dtype)
    x = to_tessera(a, device)
    for dim in DIMS:
        for keepdim in (False, True):
            axis = axis_of(dim)
            check(tessera.amax(x, dim, keepdim), a.max(axis=axis, keepdims=keepdim), dtype)
            check(x.amax(dim, keepdim=keepdim), a.max(axis=axis, keepdims=keepdim), dtype)
            check(tessera.amin(x, dim=dim, keepdim=keepdim), a.min(axis=axis, keepdims=keepdim),
                  dtype)
            check(x.amin(dim, keepdim), a.min(axis=axis, keepdims=keepdim), dtype)
    if dtype in FLOATS:
        nan = a.copy()
        nan[1, 2, 3] = np.nan
        check(tessera.amax(to_tessera(nan, device), (1, 2)), nan.max(axis=(1, 2)))


def test_all_any(device):
    b = np.array([[True, False, True], [True, True, True]])
    f = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    u = np.array([[0, 3, 1], [2, 2, 9]], dtype=np.uint8)
    for a, result in ((b, tessera.bool), (f, tessera.bool), (u, tessera.uint8)):
        x = to_tessera(a, device)
        for dim in (None, 0, -1, (0, 1)):
            for keepdim in (False, True):
                axis = axis_of(dim)
                check(tessera.all(x, dim, keepdim), a.all(axis=axis, keepdims=keepdim), result)
                check(x.all(dim, keepdim), a.all(axis=axis, keepdims=keepdim), result)
                check(tessera.any(x, dim=dim, keepdim=keepdim), a.any(axis=axis, keepdims=keepdim),
                      result)
                check(x.any(dim=dim), a.any(axis=axis), result)


def test_max_min_whole_elementwise_and_over_a_dim(device):
    a = np.array([[3.0, 7.0, 7.0, -1.0], [2.0, -5.0, 0.5, -5.0], [9.0, 9.0, 1.0, 4.0]],
                 dtype=np.float32)
    b = np.array([1.0, 8.0, 0.0, -2.0], dtype=np.float32)
    x, y = to_tessera(a, device), to_tessera(b, device)
    check(tessera.max(x), a.max(), tessera.float32)
    check(x.min(), a.min())
    check(tessera.max(x, y), np.maximum(a, b))
    check(x.min(other=y), np.minimum(a, b))
    # A one-element integer tensor is an operand, not a dim (it has __index__).
    two = to_tessera(np.array([2], dtype=np.int64), device)
    check(tessera.max(x, two), np.maximum(a, 2), tessera.float32)
    check(x.min(two), np.minimum(a, 2), tessera.float32)
    for name, extreme, arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
        fn = getattr(tessera, name)
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                r = fn(x, dim, keepdim)
                # A tuple with named fields: unpacks, indexes and reads.
                assert isinstance(r, tuple) and type(r).__name__ == name and len(r) == 2
                assert type(r) is getattr(tessera.return_types, name)
                values, indices = r
                assert values is r[0] and indices is r.indices and r.values is values
                check(values, extreme(a, axis=dim, keepdims=keepdim), tessera.float32)
                # The first extreme on ties, as NumPy.
                check(indices, np.expand_dims(arg(a, axis=dim), dim) if keepdim
                      else arg(a, axis=dim), tessera.int64)
                method = getattr(x, name)(dim=dim, keepdim=keepdim)
                assert type(method) is type(r)
                check(method.values, extreme(a, axis=dim, keepdims=keepdim))
        assert f"{name}(values=" in repr(fn(x, 0))
    # NaN is the extreme of its line, at its first index.
    n = np.array([[1.0, np.nan, 3.0, np.nan]], dtype=np.float32)
    r = tessera.max(to_tessera(n, device), 1)
    assert math.isnan(r.values.item()) and r.indices.item() == 1
    assert math.isnan(tessera.min(to_tessera(n, device)).item())
    ints = np.array([[4, -2, 4], [0, 7, 7]], dtype=np.int32)
    ri = tessera.min(to_tessera(ints, device), dim=1)
    check(ri.values, ints.min(axis=1), tessera.int32)
    check(ri.indices, ints.argmin(axis=1), tessera.int64)


def test_aminmax(device):
    a = sample((3, 5), tessera.float32)
    x = to_tessera(a, device)
    r = tessera.aminmax(x)
    assert type(r) is tessera.return_types.aminmax and r._fields == ("min", "max")
    check(r.min, a.min())
    check(r.max, a.max())
    for dim in (0, -1):
        for keepdim in (False, True):
            lo, hi = tessera.aminmax(x, dim=dim, keepdim=keepdim)
            check(lo, a.min(axis=dim, keepdims=keepdim))
            check(hi, a.max(axis=dim, keepdims=keepdim))
            check(x.aminmax(dim=dim, keepdim=keepdim).max, a.max(axis=dim, keepdims=keepdim))
    lo, hi = tessera.aminmax(x, keepdim=True)
    assert lo.shape == (1, 1) and hi.shape == (1, 1)
    with pytest.raises(TypeError):
        tessera.aminmax(x, 0)  # dim is keyword-only, as PyTorch's


def test_argmax_argmin(device):
    a = np.array([[3, 7, 7, -1], [2, -5, 9, -5], [9, 9, 1, 4]], dtype=np.int64)
    x = to_tessera(a, device)
    for name, arg in (("argmax", np.argmax), ("argmin", np.argmin)):
        fn = getattr(tessera, name)
        check(fn(x), arg(a), tessera.int64)  # of the flattened input
        check(getattr(x, name)(), arg(a))
        for dim in (0, 1, -1, -2):
            check(fn(x, dim), arg(a, axis=dim), tessera.int64)
            check(fn(input=x, dim=dim, keepdim=True), np.expand_dims(arg(a, axis=dim), dim))
            check(getattr(x, name)(dim, True), np.expand_dims(arg(a, axis=dim), dim))
        with pytest.raises(TypeError, match=name):
            fn(to_tessera(np.array([True, False]), device))


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16], ids=str)
def test_var_std(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4, 5), dtype)
    x = to_tessera(a, device)
    ref = a.astype(np.float64)
    for name, np_fn in (("var", np.var), ("std", np.std)):
        fn = getattr(tessera, name)
        method = getattr(x, name)
        for dim in DIMS:
            axis = axis_of(dim)
            for keepdim in (False, True):
                for correction in (0, 1, 2, 0.5):
                    expected = np_fn(ref, axis=axis, ddof=correction, keepdims=keepdim)
                    check(fn(x, dim, keepdim=keepdim, correction=correction), expected, dtype)
                    check(method(dim, keepdim=keepdim, correction=correction), expected, dtype)
                # unbiased=True (the default) is correction=1, False is 0.
                check(fn(x, dim, False, keepdim), np_fn(ref, axis=axis, keepdims=keepdim), dtype)
                check(method(dim, True, keepdim),
                      np_fn(ref, axis=axis, ddof=1, keepdims=keepdim), dtype)
        check(fn(x), np_fn(ref, ddof=1))
        check(fn(x, False), np_fn(ref))  # var(input, unbiased)
        check(method(unbiased=False), np_fn(ref))
        with pytest.raises(TypeError, match="unbiased or correction"):
            fn(x, 0, True, correction=1)
        with pytest.raises(TypeError, match="floating"):
            fn(to_tessera(np.arange(4), device))
    # Fewer elements than the correction: divisor 0, as PyTorch.
    assert math.isinf(tessera.var(to_tessera(np.array([1.0, 2.0], dtype=np.float32), device),
                                  correction=2).item())


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16], ids=str)
def test_norm(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4), dtype)
    a[0, 1] = 0
    x = to_tessera(a, device)
    ref = np.abs(a.astype(np.float64))
    orders = {
        1: lambda v, axis, k: v.sum(axis=axis, keepdims=k),
        2: lambda v, axis, k: np.sqrt((v ** 2).sum(axis=axis, keepdims=k)),
        3: lambda v, axis, k: ((v ** 3).sum(axis=axis, keepdims=k)) ** (1 / 3),
        0.5: lambda v, axis, k: (np.sqrt(v).sum(axis=axis, keepdims=k)) ** 2,
        0: lambda v, axis, k: (v != 0).sum(axis=axis, keepdims=k),
        math.inf: lambda v, axis, k: v.max(axis=axis, keepdims=k),
        -math.inf: lambda v, axis, k: v.min(axis=axis, keepdims=k),
    }
    for p, expected in orders.items():
        for dim in (None, 0, -1, (0, 1)):
            for keepdim in (False, True):
                want = expected(ref, axis_of(dim), keepdim)
                check(tessera.norm(x, p, dim, keepdim), want, dtype)
                check(x.norm(p=p, dim=dim, keepdim=keepdim), want, dtype)
    check(tessera.norm(x), np.sqrt((ref ** 2).sum()))
    check(tessera.norm(x, "fro", dim=1), np.sqrt((ref ** 2).sum(axis=1)))
    check(x.norm("fro"), np.sqrt((ref ** 2).sum()))
    with pytest.raises(ValueError, match="nuc"):
        tessera.norm(x, "nuc")
    with pytest.raises(TypeError, match="floating"):
        tessera.norm(to_tessera(np.arange(3), device))


def test_logsumexp(device):
    a = sample((3, 4, 5), tessera.float32) * 30  # large enough that a plain exp overflows f32
    x = to_tessera(a, device)
    ref = a.astype(np.float64)

    def expected(axis, keepdims):
        m = ref.max(axis=axis, keepdims=True)
        r = np.log(np.exp(ref - m).sum(axis=axis, keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=axis)

    for dim in (0, -1, (0, 2), [1]):
        for keepdim in (False, True):
            check(tessera.logsumexp(x, dim, keepdim), expected(axis_of(dim), keepdim),
                  tessera.float32)
            check(x.logsumexp(dim=dim, keepdim=keepdim), expected(axis_of(dim), keepdim))
    ints = np.array([[1, 2], [3, 4]], dtype=np.int32)
    check(tessera.logsumexp(to_tessera(ints, device), 1),
          np.log(np.exp(ints.astype(np.float64)).sum(axis=1)), tessera.float32)
    with pytest.raises(TypeError):
        tessera.logsumexp(x)  # dim is required


def test_equal(device):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    x = to_tessera(a, device)
    assert tessera.equal(x, to_tessera(a.copy(), device)) is True
    assert x.equal(to_tessera(a.astype(np.int64), device)) is True  # after promotion
    assert tessera.equal(x, to_tessera(a + 1, device)) is False
    assert tessera.equal(x, to_tessera(a.ravel(), device)) is False  # other sizes
    n = to_tessera(np.array([np.nan], dtype=np.float32), device)
    assert tessera.equal(n, n) is False


def cumulative_extreme(a, axis, is_max):
    """(values, indices) of the running extreme; ties and NaN take the latest index."""
    a = np.moveaxis(a, axis, -1)
    values, indices = np.empty_like(a), np.zeros(a.shape, dtype=np.int64)
    for line in np.ndindex(a.shape[:-1]):
        best = 0
        for i in range(a.shape[-1]):
            v, b = a[line + (i,)], a[line + (best,)]
            if np.isnan(v) or (not np.isnan(b) and (v >= b if is_max else v <= b)):
                best = i
            values[line + (i,)], indices[line + (i,)] = a[line + (best,)], best
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.int32,
                                   tessera.int64, tessera.bool], ids=str)
def test_cumsum_cumprod(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4), dtype, low=-2, high=3)
    x = to_tessera(a, device)
    result = dtype if dtype in FLOATS else tessera.int64
    for dim in (0, 1, -1, -2):
        check(tessera.cumsum(x, dim), np.cumsum(reference(a), axis=dim), result)
        check(x.cumsum(dim=dim), np.cumsum(reference(a), axis=dim), result)
        check(tessera.cumprod(input=x, dim=dim), np.cumprod(reference(a), axis=dim), result)
        check(x.cumprod(dim), np.cumprod(reference(a), axis=dim), result)
    check(tessera.cumsum(x, 1, dtype=tessera.float32), np.cumsum(a.astype(np.float64), axis=1),
          tessera.float32)
    if dtype != tessera.bool:
        y = to_tessera(a, device)
        assert y.cumsum_(1) is y  # in place, in self's dtype
        check(y, np.cumsum(a, axis=1).astype(a.dtype), dtype)
        assert y.cumprod_(dim=0) is y
        check(y, np.cumprod(np.cumsum(a, axis=1).astype(a.dtype), axis=0).astype(a.dtype))
        other = tessera.float64 if dtype != tessera.float64 else tessera.float32
        with pytest.raises(TypeError, match="in-place"):
            y.cumsum_(0, dtype=other)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.int64], ids=str)
def test_cummax_cummin(device, dtype):
    a = np.array([[3, 1, 3, 5, 2], [0, 0, -1, 4, 4]], dtype=NUMPY_DTYPE[dtype])
    if dtype == tessera.float32:
        a = a.copy()
        a[0, 1] = np.nan
    x = to_tessera(a, device)
    for name, is_max in (("cummax", True), ("cummin", False)):
        for dim in (0, 1, -1):
            values, indices = cumulative_extreme(a, dim, is_max)
            r = getattr(tessera, name)(x, dim)
            assert type(r) is getattr(tessera.return_types, name)
            check(r.values, values, dtype)
            check(r.indices, indices, tessera.int64)
            v, i = getattr(x, name)(dim=dim)
            check(v, values)
            check(i, indices)


def test_kthvalue_and_median(device):
    rng = np.random.default_rng(2)
    a = rng.permutation(24).reshape(2, 3, 4).astype(np.float32)  # distinct values
    x = to_tessera(a, device)
    for dim in (0, 1, 2, -1):
        n = a.shape[dim]
        ordered = np.sort(a, axis=dim)
        for k in range(1, n + 1):
            r = tessera.kthvalue(x, k, dim)
            assert type(r) is tessera.return_types.kthvalue
            expected = np.take(ordered, k - 1, axis=dim)
            check(r.values, expected, tessera.float32)
            # Distinct values: the index is where the value sits.
            check(r.indices, np.argsort(a, axis=dim).take(k - 1, axis=dim), tessera.int64)
        values, indices = x.kthvalue(1, dim=dim, keepdim=True)
        check(values, np.expand_dims(np.take(ordered, 0, axis=dim), dim))
        median = tessera.median(x, dim)
        assert type(median) is tessera.return_types.median
        lower = np.take(ordered, (n - 1) // 2, axis=dim)  # the lower median
        check(median.values, lower)
        check(median.indices, np.argsort(a, axis=dim).take((n - 1) // 2, axis=dim))
        check(x.median(dim, keepdim=True).values, np.expand_dims(lower, dim))
    check(tessera.kthvalue(x, 2).values, np.sort(a, axis=-1)[..., 1])  # dim defaults to -1
    check(tessera.median(x), np.sort(a.ravel())[(a.size - 1) // 2], tessera.float32)
    check(x.median(), np.sort(a.ravel())[(a.size - 1) // 2])
    nan = to_tessera(np.array([[1.0, np.nan, 0.0]], dtype=np.float32), device)
    assert math.isnan(tessera.median(nan).item())
    assert tessera.median(nan, 1).indices.item() == 1  # NaN, at its first index
    with pytest.raises(IndexError, match="k"):
        tessera.kthvalue(x, 5, 2)
    ints = np.array([5, 1, 4, 2], dtype=np.int32)
    check(tessera.median(to_tessera(ints, device)), 2, tessera.int32)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16], ids=str)
def test_softmax_log_softmax(device, dtype):
    skip_unsupported(device, dtype)
    a = sample((3, 4, 5), dtype) * 4
    x = to_tessera(a, device)
    ref = a.astype(np.float64)

    def softmax(v, axis):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    for dim in (0, 1, -1):
        expected = softmax(ref, dim)
        check(tessera.softmax(x, dim), expected, dtype)
        check(x.softmax(dim), expected, dtype)
        check(tessera.log_softmax(x, dim=dim), np.log(expected), dtype)
        check(x.log_softmax(dim), np.log(expected), dtype)
    # dtype converts the input first: a float16 softmax computed in float32.
    check(tessera.softmax(x, 1, tessera.float32), softmax(ref, 1), tessera.float32)
    check(x.log_softmax(1, dtype=tessera.float32), np.log(softmax(ref, 1)), tessera.float32)
    with pytest.raises(TypeError, match="softmax"):
        tessera.softmax(to_tessera(np.arange(3), device), 0)
    check(tessera.softmax(to_tessera(np.arange(3), device), 0, dtype=tessera.float32),
          softmax(np.arange(3.0), 0))


def test_softmax_backward_data(device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 5)).astype(np.float32)
    g = rng.standard_normal((2, 5)).astype(np.float32)
    y, grad = tessera.softmax(to_tessera(a, device), 1), to_tessera(g, device)
    yn = to_numpy(y).astype(np.float64)
    backward = tessera._tessera._softmax_backward_data
    check(backward(grad, y, 1), yn * (g - (g * yn).sum(axis=1, keepdims=True)), tessera.float32)
    log_y = tessera.log_softmax(to_tessera(a, device), 1)
    check(tessera._tessera._log_softmax_backward_data(grad, log_y, -1, tessera.float32),
          g - np.exp(to_numpy(log_y).astype(np.float64)) * g.sum(axis=1, keepdims=True))


def test_out_forms_return_out(device):
    a = sample((3, 4), tessera.float32)
    x = to_tessera(a, device)
    rows = tessera.empty(3, device=device)
    cases = [
        (lambda o: tessera.sum(x, 1, out=o), a.sum(axis=1)),
        (lambda o: tessera.mean(x, -1, out=o), a.mean(axis=1)),
        (lambda o: tessera.nansum(x, 1, out=o), a.sum(axis=1)),
        (lambda o: tessera.amax(x, 1, out=o), a.max(axis=1)),
        (lambda o: tessera.amin(x, 1, out=o), a.min(axis=1)),
        (lambda o: tessera.var(x, 1, out=o), a.var(axis=1, ddof=1)),
        (lambda o: tessera.std(x, 1, correction=0, out=o), a.std(axis=1)),
        (lambda o: tessera.norm(x, 1, 1, out=o), np.abs(a).sum(axis=1)),
        (lambda o: tessera.logsumexp(x, 1, out=o), np.log(np.exp(a.astype(np.float64)).sum(1))),
        (lambda o: tessera.prod(x, 1, out=o), a.astype(np.float64).prod(axis=1)),
    ]
    for run, expected in cases:
        assert run(rows) is rows
        check(rows, expected)
    grid = tessera.empty(3, 4, device=device)
    assert tessera.cumsum(x, 0, out=grid) is grid
    check(grid, np.cumsum(a, axis=0))
    assert tessera.cumprod(x, 1, out=grid) is grid
    check(grid, np.cumprod(a.astype(np.float64), axis=1))
    assert tessera.max(x, x * 0, out=grid) is grid
    check(grid, np.maximum(a, 0))
    assert tessera.min(x, x * 0, out=grid) is grid
    check(grid, np.minimum(a, 0))
    flags = tessera.empty(4, dtype=tessera.bool, device=device)
    assert tessera.all(x, 0, out=flags) is flags and tessera.any(x, 0, out=flags) is flags
    check(flags, a.any(axis=0))
    # An empty out is resized to the result, as PyTorch's resize_output.
    fresh = tessera.empty(0, device=device)
    assert tessera.sum(x, 0, out=fresh) is fresh
    check(fresh, a.sum(axis=0))
    # (values, indices) outs: the same two objects come back, as the named tuple.
    values = tessera.empty(4, device=device)
    indices = tessera.empty(4, dtype=tessera.int64, device=device)
    for name in ("max", "min"):
        r = getattr(tessera, name)(x, 0, out=(values, indices))
        assert type(r) is getattr(tessera.return_types, name)
        assert r.values is values and r.indices is indices
        check(values, getattr(a, name)(axis=0))
        check(indices, getattr(a, "arg" + name)(axis=0))
    lo, hi = tessera.empty(3, device=device), tessera.empty(3, device=device)
    r = tessera.aminmax(x, dim=1, out=[lo, hi])
    assert r.min is lo and r.max is hi
    check(hi, a.max(axis=1))
    with pytest.raises(TypeError, match="tuple of two tensors"):
        tessera.max(x, 0, out=values)
    with pytest.raises(TypeError, match="out must be a tensor"):
        tessera.min(x, x, out=(values, indices))
    with pytest.raises(TypeError, match="tuple of two tensors"):
        tessera.max(x, 0, out=(values, "indices"))
    # out must fit: wrong sizes or a dtype the result cannot cast to.
    with pytest.raises(ValueError):
        tessera.sum(x, 1, out=tessera.empty(5, device=device))
    with pytest.raises(TypeError):
        tessera.sum(x, 1, out=tessera.empty(3, dtype=tessera.int64, device=device))


def test_non_contiguous_inputs(device):
    a = sample((4, 6), tessera.float32)
    base = to_tessera(a, device)
    transposed = base.transpose(0, 1)  # [6, 4]
    stepped = base.as_strided((4, 3), (6, 2), 1)  # a[:, 1::2]
    assert not transposed.is_contiguous() and not stepped.is_contiguous()
    for x, ref in ((transposed, a.T), (stepped, a[:, 1::2])):
        ref64 = ref.astype(np.float64)
        check(tessera.sum(x, 0), ref64.sum(axis=0))
        check(x.mean(1, keepdim=True), ref64.mean(axis=1, keepdims=True))
        check(tessera.prod(x, 1), ref64.prod(axis=1))
        check(tessera.amax(x, (0, 1)), ref.max())
        check(tessera.max(x, 1).indices, ref.argmax(axis=1))
        check(tessera.argmin(x), ref.argmin())
        check(tessera.var(x, 0), ref64.var(axis=0, ddof=1))
        check(tessera.norm(x, 2, 1), np.sqrt((ref64 ** 2).sum(axis=1)))
        check(tessera.logsumexp(x, 1), np.log(np.exp(ref64).sum(axis=1)))
        check(tessera.cumsum(x, 1), np.cumsum(ref64, axis=1))
        check(tessera.cummax(x, 0).values, np.maximum.accumulate(ref, axis=0))
        check(tessera.kthvalue(x, 2, 0).values, np.sort(ref, axis=0)[1])
        check(tessera.median(x, 1).values, np.sort(ref, axis=1)[:, (ref.shape[1] - 1) // 2])
        e = np.exp(ref64 - ref64.max(axis=1, keepdims=True))
        check(tessera.softmax(x, 1), e / e.sum(axis=1, keepdims=True))
        check(tessera.all(x, 1), (ref != 0).all(axis=1))


def test_empty_tensors(device):
    e = tessera.zeros(0, 3, device=device)
    check(tessera.sum(e, 0), np.zeros(3), tessera.float32)
    check(tessera.sum(e), 0.0)
    check(tessera.prod(e, 0), np.ones(3))
    check(tessera.all(e), True, tessera.bool)
    check(tessera.any(e, 1), np.zeros(0, dtype=bool))
    assert math.isnan(tessera.mean(e).item())
    check(tessera.mean(e, 0), np.full(3, np.nan))
    check(tessera.norm(e, 2, 0), np.zeros(3))
    check(tessera.logsumexp(e, 0), np.full(3, -np.inf))
    check(tessera.cumsum(e, 0), np.zeros((0, 3)))
    check(tessera.softmax(e, 1), np.zeros((0, 3)))
    check(tessera.amax(e, 1), np.zeros(0))  # reducing a non-empty dim
    check(tessera.cummax(e, 0).indices, np.zeros((0, 3), dtype=np.int64))
    # No identity: reducing an empty dim (or everything) is an error.
    with pytest.raises(IndexError, match="non-zero size"):
        tessera.amax(e, 0)
    with pytest.raises(IndexError, match="non-zero size"):
        tessera.max(e, 0)
    with pytest.raises(IndexError):
        tessera.argmax(e)
    with pytest.raises(ValueError):
        tessera.max(e)
    with pytest.raises(ValueError):
        tessera.aminmax(e)
    with pytest.raises(IndexError):
        tessera.norm(e, math.inf)


def test_zero_dim_inputs(device):
    s = to_tessera(np.array(2.5, dtype=np.float32), device)
    for dim in (None, 0, -1):
        check(tessera.sum(s, dim), 2.5)
        check(tessera.amax(s, dim, keepdim=True), 2.5)
    check(tessera.max(s, 0).indices, 0)
    check(tessera.cumsum(s, 0), 2.5)
    check(tessera.softmax(s, 0), 1.0)
    check(tessera.log_softmax(s, -1), 0.0)
    with pytest.raises(IndexError):
        tessera.sum(s, 1)


def test_bad_dims_and_arguments(device):
    x = to_tessera(sample((2, 3), tessera.float32), device)
    out_of_range = [
        lambda: tessera.sum(x, 2), lambda: x.sum(-3), lambda: tessera.mean(x, (0, 5)),
        lambda: tessera.nansum(x, 2), lambda: tessera.prod(x, 2), lambda: tessera.amax(x, -3),
        lambda: tessera.amin(x, 2), lambda: tessera.all(x, 2), lambda: tessera.any(x, 2),
        lambda: tessera.max(x, 2), lambda: x.min(-3), lambda: tessera.argmax(x, 2),
        lambda: tessera.argmin(x, -3), lambda: tessera.aminmax(x, dim=2),
        lambda: tessera.var(x, 2), lambda: tessera.std(x, -3), lambda: tessera.norm(x, 2, 2),
        lambda: tessera.logsumexp(x, 2), lambda: tessera.cumsum(x, 2), lambda: x.cumprod(-3),
        lambda: tessera.cummax(x, 2), lambda: tessera.cummin(x, 2),
        lambda: tessera.kthvalue(x, 1, 2), lambda: tessera.median(x, 2),
        lambda: tessera.softmax(x, 2), lambda: x.log_softmax(-3),
    ]
    for run in out_of_range:
        with pytest.raises(IndexError, match="out of range"):
            run()
    with pytest.raises(ValueError, match="multiple times"):
        tessera.sum(x, (1, -1))
    with pytest.raises(TypeError):
        tessera.sum(x, "0")
    with pytest.raises(TypeError):
        tessera.sum([1.0, 2.0])
    with pytest.raises(TypeError):
        tessera.sum(x, 0, dtype="float64")
