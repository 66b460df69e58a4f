"""The shape and indexing ops (joining, splitting, rearranging, tril/triu,
gathers and scatters, masks, sorting, uniqueness) against NumPy on every
device: functions and methods, keywords, `out=` and in-place forms (the same
object back), several dtypes, non-contiguous inputs and bad arguments."""

import math

import numpy as np
import pytest
import tessera

NUMPY_DTYPES = {
    tessera.float32: np.float32, tessera.float64: np.float64, tessera.float16: np.float16,
    tessera.int64: np.int64, tessera.int32: np.int32, tessera.bool: np.bool_,
}


def require(device, dtype_name):
    props = tessera.get_device_properties(device)
    needs = {"float64": "supports_float64", "float16": "supports_float16",
             "int64": "supports_int64"}.get(dtype_name)
    if needs and not props[needs]:
        pytest.skip(f"{device} has no {dtype_name}")


def dev(array, device, dtype=None):
    array = np.asarray(array) if dtype is None else np.asarray(array, dtype=dtype)
    return tessera.tensor(array.tolist(), dtype=getattr(tessera, str(array.dtype)), device=device)


def npy(t):
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPES[t.dtype]).reshape(tuple(t.shape))


def check(got, expected, what=""):
    expected = np.asarray(expected)
    assert tuple(got.shape) == expected.shape, what
    assert NUMPY_DTYPES[got.dtype] == expected.dtype, what
    np.testing.assert_array_equal(npy(got), expected, err_msg=what)


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# -- Joining and splitting.

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16"])
def test_cat_stack(device, dtype):
    require(device, dtype)
    a, b = A.astype(dtype), (A[:, :2] * 2).astype(dtype)
    x, y = dev(a, device), dev(b, device)
    check(tessera.cat([x, y], 1), np.concatenate([a, b], 1))
    check(tessera.cat((x, y), dim=-2), np.concatenate([a, b], 1))
    check(tessera.concat([x, x]), np.concatenate([a, a]))
    check(tessera.concatenate([x, y], axis=1), np.concatenate([a, b], 1))
    check(tessera.stack([x, x], 2), np.stack([a, a], 2))
    check(tessera.stack([x.transpose(0, 2), x.transpose(0, 2)], dim=-1),
          np.stack([a.transpose(2, 1, 0)] * 2, -1))
    out = tessera.empty(0, dtype=x.dtype, device=device)
    assert tessera.cat([x, y], dim=1, out=out) is out
    check(out, np.concatenate([a, b], 1))
    out = tessera.empty(2, 2, 3, 4, dtype=x.dtype, device=device)
    assert tessera.stack([x, x], out=out) is out
    check(out, np.stack([a, a]))


def test_cat_promotes_and_errors(device):
    x = dev(A, device)
    i = dev(A.astype(np.int32), device)
    check(tessera.cat([i, x]), np.concatenate([A, A]))
    with pytest.raises(ValueError, match="Sizes of tensors must match"):
        tessera.cat([x, x[:, :2, :3]], 1)
    with pytest.raises(ValueError):
        tessera.stack([x, x[:1]])
    with pytest.raises(IndexError):
        tessera.cat([x, x], 3)
    with pytest.raises(ValueError):
        tessera.cat([])
    with pytest.raises(TypeError):
        tessera.cat(x)


def pieces(array, sizes, axis):
    bounds = np.cumsum(sizes)[:-1]
    return np.split(array, bounds, axis)


def check_parts(parts, expected_parts):
    assert isinstance(parts, tuple)
    assert len(parts) == len(expected_parts)
    for got, expected in zip(parts, expected_parts):
        check(got, expected)


def test_split_chunk_unbind(device):
    x = dev(A, device)
    check_parts(tessera.split(x, 2, 2), pieces(A, [2, 2], 2))
    check_parts(tessera.split(x, 3, dim=2), pieces(A, [3, 1], 2))
    check_parts(x.split([1, 2], 1), pieces(A, [1, 2], 1))
    check_parts(tessera.split(x, split_size_or_sections=[3, 1], dim=-1), pieces(A, [3, 1], 2))
    check_parts(x.split(split_size=1), pieces(A, [1, 1], 0))
    check_parts(tessera.chunk(x, 2, 1), pieces(A, [2, 1], 1))  # ceil(3 / 2) per chunk
    check_parts(x.chunk(4, dim=2), pieces(A, [1, 1, 1, 1], 2))
    check_parts(tessera.unbind(x, 1), [A[:, k] for k in range(3)])
    check_parts(x.unbind(), [A[0], A[1]])
    # The pieces are views: writing one writes x.
    first = tessera.split(x, 2, 2)[1]
    first.fill_(-1)
    expected = A.copy()
    expected[:, :, 2:] = -1
    check(x, expected)
    x.unbind(1)[0].fill_(7)
    expected[:, 0] = 7
    check(x, expected)
    with pytest.raises(ValueError):
        tessera.split(x, [1, 1], 1)  # sizes must sum to 3
    with pytest.raises(IndexError):
        tessera.unbind(x, 3)
    with pytest.raises(IndexError):
        tessera.unbind(tessera.tensor(1.0, device=device))


def test_tensor_split(device):
    a = np.arange(7 * 2, dtype=np.float32).reshape(7, 2)
    x = dev(a, device)
    check_parts(tessera.tensor_split(x, 3), np.array_split(a, 3))
    check_parts(x.tensor_split(2, dim=1), np.array_split(a, 2, 1))
    check_parts(tessera.tensor_split(x, [1, 5]), np.split(a, [1, 5]))
    check_parts(x.tensor_split([2, -1, 9]), np.split(a, [2, 6, 9]))
    check_parts(tessera.tensor_split(x, [4, 2]), [a[:4], a[4:2], a[2:]])
    check_parts(tessera.tensor_split(x, tessera.tensor(4)), np.array_split(a, 4))
    check_parts(tessera.tensor_split(x, tessera.tensor([3]), dim=0), np.split(a, [3]))
    with pytest.raises(ValueError, match="larger than 0"):
        tessera.tensor_split(x, 0)
    with pytest.raises(TypeError):
        tessera.tensor_split(x, tessera.tensor([1.5]))


# -- Rearranging.

def test_flip_roll_repeat_tile_pad(device):
    a = A.transpose(2, 0, 1)  # non-contiguous input
    x = dev(A, device).permute(2, 0, 1)
    check(tessera.flip(x, [0, 2]), np.flip(a, (0, 2)))
    check(tessera.flip(x, dims=-1), np.flip(a, -1))
    check(x.flip(0, 1), np.flip(a, (0, 1)))
    check(x.flip([2]), np.flip(a, 2))
    check(tessera.fliplr(x), np.fliplr(a))
    check(x.fliplr(), np.fliplr(a))
    check(tessera.flipud(x), np.flipud(a))
    check(x.flipud(), np.flipud(a))
    check(tessera.roll(x, 2, 0), np.roll(a, 2, 0))
    check(tessera.roll(x, [1, -1], [1, 2]), np.roll(a, (1, -1), (1, 2)))
    check(x.roll(5), np.roll(a, 5))
    check(x.roll(shifts=-3, dims=2), np.roll(a, -3, 2))
    check(x.repeat(2, 1, 3), np.tile(a, (2, 1, 3)))
    check(x.repeat([2, 1, 1, 2]), np.tile(a, (2, 1, 1, 2)))
    check(tessera.tile(x, [2]), np.tile(a, 2))
    check(x.tile(2, 1, 1, 1), np.tile(a, (2, 1, 1, 1)))
    check(tessera.constant_pad_nd(x, [1, 2]), np.pad(a, [(0, 0), (0, 0), (1, 2)]))
    check(tessera.constant_pad_nd(x, [0, 1, 2, 0], value=-1.5),
          np.pad(a, [(0, 0), (2, 0), (0, 1)], constant_values=-1.5))
    check(tessera.constant_pad_nd(x, pad=[-1, 0]), a[:, :, 1:])
    with pytest.raises(ValueError):
        tessera.fliplr(tessera.ones(3, device=device))
    with pytest.raises(ValueError):
        tessera.flip(x, [0, 0])
    with pytest.raises(IndexError):
        x.flip(3)
    with pytest.raises(ValueError):
        x.repeat(2, 2)  # fewer repeats than dims
    with pytest.raises(ValueError):
        tessera.roll(x, [1, 2], [0])


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float64"])
def test_tril_triu(device, dtype):
    require(device, dtype)
    a = (np.arange(2 * 3 * 5).reshape(2, 3, 5) % 7).astype(dtype)
    x = dev(a, device)
    for k in (0, 1, -1, 4, -3):
        check(tessera.tril(x, k), np.tril(a, k), f"tril {k}")
        check(x.triu(diagonal=k), np.triu(a, k), f"triu {k}")
    check(tessera.triu(x.transpose(1, 2)), np.triu(a.transpose(0, 2, 1)))
    out = tessera.empty(2, 3, 5, dtype=x.dtype, device=device)
    assert tessera.tril(x, -1, out=out) is out
    check(out, np.tril(a, -1))
    y = dev(a, device)
    assert y.triu_(1) is y
    check(y, np.triu(a, 1))
    assert y.tril_() is y
    check(y, np.tril(np.triu(a, 1)))
    with pytest.raises(ValueError):
        tessera.tril(dev(a[0, 0], device))


# -- Gathers and scatters.

def test_index_select_gather_take(device):
    a = A.transpose(1, 0, 2)  # (3, 2, 4), non-contiguous
    x = dev(A, device).transpose(0, 1)
    idx = np.array([2, 0, 2])
    check(tessera.index_select(x, 0, dev(idx, device)), a[idx])
    check(x.index_select(2, dev(np.array([3, 1], dtype=np.int32), device)), a[:, :, [3, 1]])
    out = tessera.empty(0, device=device)
    assert tessera.index_select(x, dim=1, index=dev(np.array([1]), device), out=out) is out
    check(out, a[:, [1]])
    g = np.array([[[1, 0, 1, 1]], [[0, 0, 1, 0]]])  # (2, 1, 4) into dim 1
    check(tessera.gather(x, 1, dev(g, device)), np.take_along_axis(a[:2, :, :], g, 1))
    check(x.gather(2, dev(np.array([[[3], [0]]] * 3), device)),
          np.take_along_axis(a, np.array([[[3], [0]]] * 3), 2))
    out = tessera.empty(2, 1, 4, device=device)
    assert tessera.gather(x, 1, dev(g, device), out=out) is out
    check(out, np.take_along_axis(a[:2], g, 1))
    t = np.array([[0, -1], [23, 5]])
    check(tessera.take(x, dev(t, device)), np.take(a, t))
    check(x.take(dev(np.array(7), device)), np.take(a, 7))
    check(x.take(dev(np.zeros(0, np.int64), device)), np.zeros(0, np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        tessera.index_select(x, 0, dev(np.array([3]), device))
    with pytest.raises(TypeError):
        tessera.index_select(x, 0, dev(np.array([0.0]), device))
    with pytest.raises(IndexError):
        tessera.gather(x, 1, dev(np.array([[[2]]]), device))
    with pytest.raises(IndexError):
        tessera.take(x, dev(np.array([24]), device))
    with pytest.raises(IndexError):
        x.index_select(3, dev(np.array([0]), device))


def test_put(device):
    # put writes the row-major flattening, also of a transposed tensor;
    # duplicates accumulate in order, or the last write wins.
    a = A.transpose(1, 0, 2)  # (3, 2, 4)
    x = dev(A, device).transpose(0, 1)
    index = np.array([[0, -1], [5, 5]])
    source = np.array([[10.0, 20.0], [1.5, 2.5]], dtype=np.float32)
    expected = a.copy()
    np.put(expected, index, source)  # NumPy: the last of the repeats wins too
    check(tessera.put(x, dev(index, device), dev(source, device)), expected)
    expected = a.copy().reshape(-1)
    np.add.at(expected, index.reshape(-1) % expected.size, source.reshape(-1))
    check(x.put(dev(index, device), dev(source, device), accumulate=True), expected.reshape(a.shape))
    check(x, a)  # the functional forms leave x alone
    assert x.put_(dev(index, device), dev(source, device), accumulate=True) is x
    check(x, expected.reshape(a.shape))
    out = tessera.empty(0, device=device)
    assert tessera.take(x, dev(index, device), out=out) is out
    check(out, np.take(expected, index))
    with pytest.raises(IndexError):
        x.put_(dev(np.array([24]), device), dev(source[0, :1], device))
    with pytest.raises(ValueError, match="same number of elements"):
        x.put_(dev(np.array([1, 2]), device), dev(source[0, :1], device))
    with pytest.raises(TypeError):
        x.put_(dev(np.array([1]), device), dev(np.array([1], np.int32), device))
    with pytest.raises(TypeError):
        x.put_(dev(np.array([1], np.int32), device), dev(source[0, :1], device))


def scatter_reference(base, dim, index, src, add):
    out = base.copy()
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        value = src[pos] if isinstance(src, np.ndarray) else src
        if add:
            out[tuple(target)] += value
        else:
            out[tuple(target)] = value
    return out


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_scatter(device, dtype):
    require(device, dtype)
    base = np.zeros((3, 5), dtype=dtype)
    src = (np.arange(10).reshape(2, 5) + 1).astype(dtype)
    index = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
    x, s, i = dev(base, device), dev(src, device), dev(index, device)
    check(tessera.scatter(x, 0, i, s), scatter_reference(base, 0, index, src, False))
    check(x.scatter(0, i, value=4), scatter_reference(base, 0, index, 4, False))
    check(tessera.scatter(x, 0, i, 2.0 if dtype != "int64" else 2),
          scatter_reference(base, 0, index, 2, False))
    check(tessera.scatter_add(x, 0, i, s), scatter_reference(base, 0, index, src, True))
    check(x.scatter_add(1, dev(index[:, :2], device), s),
          scatter_reference(base, 1, index[:, :2], src, True))
    out = tessera.empty(3, 5, dtype=x.dtype, device=device)
    assert tessera.scatter(x, 0, i, s, out=out) is out
    check(out, scatter_reference(base, 0, index, src, False))
    assert tessera.scatter(x, 0, i, 3, out=out) is out
    check(out, scatter_reference(base, 0, index, 3, False))
    assert tessera.scatter_add(x, 0, i, s, out=out) is out
    check(out, scatter_reference(base, 0, index, src, True))
    y = dev(base, device)
    assert y.scatter_(0, i, s) is y
    check(y, scatter_reference(base, 0, index, src, False))
    assert y.scatter_(1, i, value=9) is y
    assert y.scatter_add_(0, i, s) is y
    expected = scatter_reference(scatter_reference(base, 0, index, src, False), 1, index, 9, False)
    check(y, scatter_reference(expected, 0, index, src, True))
    with pytest.raises(TypeError):
        tessera.scatter(x, 0, i, dev(src.astype(np.int32), device))
    with pytest.raises(IndexError):
        tessera.scatter(x, 0, dev(index + 2, device), s)


NUMPY_FOLDS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum,
               "mean": np.add}


def scatter_reduce_reference(base, index, src, reduce, include_self):
    """Along dim 0 with NumPy's ufunc.at (folds in index order, as tessera)."""
    out = base.copy()
    cols = np.broadcast_to(np.arange(index.shape[1]), index.shape)
    if not include_self:
        if np.issubdtype(base.dtype, np.integer):
            low, high = np.iinfo(base.dtype).min, np.iinfo(base.dtype).max
        else:
            low, high = -np.inf, np.inf
        identity = {"sum": 0, "mean": 0, "prod": 1, "amax": low, "amin": high}[reduce]
        out[index, cols] = identity
    NUMPY_FOLDS[reduce].at(out, (index, cols), src[:index.shape[0], :index.shape[1]])
    if reduce == "mean":
        count = np.full(base.shape, 1.0 if include_self else 0.0)
        np.add.at(count, (index, cols), 1.0)
        out = (out / np.maximum(count, 1)).astype(base.dtype)
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce(device, reduce):
    base = np.arange(-6, 9, dtype=np.float32).reshape(3, 5) / 4
    src = np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5)
    src[1, 2] = np.nan
    index = np.array([[0, 1, 2, 0, 0], [2, 2, 0, 1, 2], [1, 1, 1, 1, 1]])
    x, i, s = dev(base, device), dev(index, device), dev(src, device)
    for include_self in (True, False):
        expected = scatter_reduce_reference(base, index, src, reduce, include_self)
        got = tessera.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)
        np.testing.assert_allclose(npy(got), expected, rtol=1e-6, equal_nan=True)
        y = dev(base, device)
        assert y.scatter_reduce_(0, i, s, reduce, include_self=include_self) is y
        np.testing.assert_allclose(npy(y), expected, rtol=1e-6, equal_nan=True)
        out = tessera.empty(3, 5, device=device)
        assert tessera.scatter_reduce(x, 0, i, s, reduce, include_self=include_self,
                                      out=out) is out
        np.testing.assert_allclose(npy(out), expected, rtol=1e-6, equal_nan=True)
    if reduce in ("sum", "prod"):
        legacy = {"sum": "add", "prod": "multiply"}[reduce]
        expected = scatter_reduce_reference(base, index, src, reduce, True)
        np.testing.assert_allclose(npy(x.scatter(0, i, s, reduce=legacy)), expected, rtol=1e-6,
                                   equal_nan=True)
        twos = np.full(src.shape, 2, dtype=np.float32)
        np.testing.assert_allclose(npy(tessera.scatter(x, 0, i, 2.0, reduce=legacy)),
                                   scatter_reduce_reference(base, index, twos, reduce, True),
                                   rtol=1e-6)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(device, reduce):
    require(device, "int64")
    base = np.arange(12, dtype=np.int64).reshape(3, 4) - 5
    source = (np.arange(15, dtype=np.int64).reshape(3, 5) % 7) - 3
    index = np.array([3, 0, 3, 3, 1])
    x, i, s = dev(base, device), dev(index, device), dev(source, device)
    for include_self in (True, False):
        # along dim 1 = scatter_reduce along dim 0 of the transposes
        expected = scatter_reduce_reference(base.T, np.broadcast_to(index[:, None], (5, 3)),
                                            source.T, reduce, include_self).T
        if reduce == "mean":  # integers: floor division, as PyTorch
            total = scatter_reduce_reference(base.T, np.broadcast_to(index[:, None], (5, 3)),
                                             source.T, "sum", include_self).T
            count = np.full(base.shape, 1 if include_self else 0)
            np.add.at(count.T, index, 1)
            expected = total // np.maximum(count, 1)
        check(tessera.index_reduce(x, 1, i, s, reduce, include_self=include_self),
              expected.astype(np.int64))
        y = dev(base, device)
        assert y.index_reduce_(1, i, s, reduce, include_self=include_self) is y
        check(y, expected.astype(np.int64))
    with pytest.raises(ValueError, match="prod, mean, amax or amin"):
        tessera.index_reduce(x, 1, i, s, "sum")
    with pytest.raises(IndexError):
        tessera.index_reduce(x, 1, dev(index + 1, device), s, reduce)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_index_add_copy_fill(device, dtype):
    require(device, dtype)
    base = np.arange(12).reshape(3, 4).astype(dtype)
    x = dev(base, device)
    idx = np.array([3, 0, 3])
    src = (np.arange(9).reshape(3, 3) * 2).astype(dtype)  # one column per index, along dim 1
    expected = base.copy()
    np.add.at(expected.T, idx, src.T)
    check(tessera.index_add(x, 1, dev(idx, device), dev(src, device)), expected)
    expected = base.copy()
    np.add.at(expected.T, idx, (src * 2).T)
    check(x.index_add(1, dev(idx, device), dev(src, device), alpha=2), expected)
    rows = np.array([2, 0])
    rsrc = (-np.arange(8).reshape(2, 4)).astype(dtype)
    expected = base.copy()
    expected[rows] = rsrc
    check(tessera.index_copy(x, 0, dev(rows, device), dev(rsrc, device)), expected)
    check(x.index_copy(0, dev(rows, device), dev(rsrc, device)), expected)
    expected = base.copy()
    expected[:, [1, 2]] = 5
    check(tessera.index_fill(x, -1, dev(np.array([1, 2]), device), 5), expected)
    check(x.index_fill(1, dev(np.array([2, 1]), device), dev(np.array(5, dtype=dtype), device)),
          expected)
    check(tessera.index_fill(x, 1, dev(np.array([2, 1]), device),
                             dev(np.array(5, dtype=dtype), device)), expected)
    check(x.index_fill(dim=1, index=dev(np.array([1, 2]), device), value=5), expected)
    check(x, base)  # the functional forms leave x alone
    y = dev(base, device)
    assert y.index_add_(0, dev(rows, device), dev(rsrc, device)) is y
    assert y.index_copy_(1, dev(np.array([0]), device), dev(base[:, :1], device)) is y
    assert y.index_fill_(0, dev(np.array([1]), device), 0) is y
    expected = base.copy()
    expected[rows] += rsrc
    expected[:, 0] = base[:, 0]
    expected[1] = 0
    check(y, expected)
    # out= writes the functional result; index_fill counts negative indices
    # from the end, as PyTorch's does (index_add and index_copy refuse them).
    out = dev(np.zeros((3, 4), dtype=dtype), device)
    assert tessera.index_copy(x, 0, dev(rows, device), dev(rsrc, device), out=out) is out
    expected = base.copy()
    expected[rows] = rsrc
    check(out, expected)
    assert tessera.index_add(x, 0, dev(rows, device), dev(rsrc, device), alpha=3, out=out) is out
    expected = base.copy()
    expected[rows] += 3 * rsrc
    check(out, expected)
    expected = base.copy()
    expected[-1] = 7
    check(tessera.index_fill(x, 0, dev(np.array([-1]), device), 7), expected)
    with pytest.raises(ValueError, match="Number of indices"):
        tessera.index_add(x, 1, dev(idx[:2], device), dev(src, device))
    with pytest.raises(ValueError, match="except along dim"):
        tessera.index_copy(x, 0, dev(rows, device), dev(rsrc[:, :3], device))
    with pytest.raises(TypeError):
        tessera.index_copy(x, 0, dev(rows, device), dev(rsrc.astype(np.float64), device))
    with pytest.raises(IndexError):
        tessera.index_add(x, 0, dev(np.array([-1]), device), dev(rsrc[:1], device))
    with pytest.raises(IndexError):
        tessera.index_fill(x, 0, dev(np.array([-4]), device), 1)
    with pytest.raises(IndexError):
        tessera.index_fill(x, 2, dev(np.array([0]), device), 1)


def test_index_put(device):
    base = A.copy()
    x = dev(base, device)
    i0, i2 = np.array([1, 0, 1]), np.array([3, 3, 0])
    values = np.array([10.0, 20.0, 30.0], dtype=np.float32)
    expected = base.copy()
    expected[i0, :, i2] = values[:, None]
    check(tessera.index_put(x, (dev(i0, device), None, dev(i2, device)),
                            dev(values[:, None], device)), expected)
    expected = base.copy()
    np.add.at(expected, (i0, slice(None), i2), values[:, None])
    check(x.index_put([dev(i0, device), None, dev(i2, device)], dev(values[:, None], device),
                      accumulate=True), expected)
    mask = A[:, :, 0] > 6
    expected = base.copy()
    expected[mask] = -1
    y = dev(base, device)
    assert y.index_put_((dev(mask, device),), tessera.full([4], -1.0, device=device)) is y
    check(y, expected)
    with pytest.raises(TypeError, match="dtypes match"):
        x.index_put_((dev(i0, device),), tessera.ones(3, 4, dtype=tessera.int64, device=device))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_masked_ops(device, dtype):
    require(device, dtype)
    base = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    mask = np.array([True, False, True, True])  # broadcast over rows
    full_mask = np.broadcast_to(mask, (3, 4))
    x, m = dev(base, device), dev(mask, device)
    fill = True if dtype == "bool" else 7
    expected = base.copy()
    expected[full_mask] = fill
    check(tessera.masked_fill(x, m, fill), expected)
    check(x.masked_fill(m, dev(np.array(fill, dtype=dtype), device)), expected)
    check(tessera.masked_fill(x, m, dev(np.array(fill, dtype=dtype), device)), expected)
    check(x.masked_fill(mask=m, value=fill), expected)
    check(tessera.masked_select(x, m), base[full_mask])
    check(x.t().masked_select(dev(full_mask.T, device)), base.T[full_mask.T])
    out = tessera.empty(0, dtype=x.dtype, device=device)
    assert tessera.masked_select(x, mask=m, out=out) is out
    check(out, base[full_mask])
    source = (np.arange(12) + 5).astype(dtype)
    expected = base.copy()
    expected[full_mask] = source[:full_mask.sum()]
    check(tessera.masked_scatter(x, m, dev(source, device)), expected)
    check(x.masked_scatter(m, dev(source, device)), expected)
    y = dev(base, device)
    assert y.masked_scatter_(m, dev(source, device)) is y
    check(y, expected)
    assert y.masked_fill_(m, fill) is y
    expected[full_mask] = fill
    check(y, expected)
    with pytest.raises(TypeError):
        tessera.masked_fill(x, dev(mask.astype(np.int64), device), fill)
    with pytest.raises(ValueError):
        tessera.masked_scatter(x, m, dev(source[:3], device))


def test_nonzero_where_argwhere(device):
    a = np.array([[0, 1.5, 0], [2, 0, -1]], dtype=np.float32)
    x = dev(a, device)
    check(tessera.nonzero(x), np.argwhere(a))
    check(x.nonzero(), np.argwhere(a))
    check(tessera.argwhere(x.t()), np.argwhere(a.T))
    check(x.argwhere(), np.argwhere(a))
    for parts in (tessera.nonzero(x, as_tuple=True), x.nonzero(as_tuple=True),
                  tessera.where(dev(a != 0, device))):
        assert isinstance(parts, tuple) and len(parts) == 2
        for got, expected in zip(parts, np.nonzero(a)):
            check(got, expected)
    out = tessera.empty(0, dtype=tessera.int64, device=device)
    assert tessera.nonzero(x, out=out) is out
    check(out, np.argwhere(a))
    check(tessera.nonzero(tessera.zeros(2, 3, device=device)), np.zeros((0, 2), np.int64))
    (only,) = tessera.where(dev(np.array(True), device))
    check(only, np.array([0]))


# -- Sorting and uniqueness.

@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "float64"])
def test_sort_argsort_topk(device, dtype):
    require(device, dtype)
    rng = np.random.default_rng(0)
    a = rng.permutation(40).reshape(5, 8).astype(dtype)  # distinct values
    x = dev(a, device)
    r = tessera.sort(x)
    values, indices = r  # unpacks as a tuple
    check(values, np.sort(a, -1))
    check(r.indices, np.argsort(a, -1))
    check(x.sort(0, descending=True).values, -np.sort(-a, 0))
    check(x.t().sort(dim=1).indices, np.argsort(a.T, 1))
    check(tessera.argsort(x, 0), np.argsort(a, 0))
    check(x.argsort(descending=True), np.argsort(-a, -1))
    check(tessera.msort(x), np.sort(a, 0))
    check(x.msort(), np.sort(a, 0))
    top = tessera.topk(x, 3)
    check(top.values, -np.sort(-a, -1)[:, :3])
    check(top.indices, np.argsort(-a, -1)[:, :3])
    check(x.topk(2, dim=0, largest=False).values, np.sort(a, 0)[:2])
    check(x.topk(k=1, largest=False, sorted=True).indices, np.argsort(a, -1)[:, :1])
    out = (tessera.empty(0, dtype=x.dtype, device=device),
           tessera.empty(0, dtype=tessera.int64, device=device))
    r = tessera.sort(x, 0, out=out)
    assert r.values is out[0] and r.indices is out[1]
    check(out[0], np.sort(a, 0))
    out = (tessera.empty(0, dtype=x.dtype, device=device),
           tessera.empty(0, dtype=tessera.int64, device=device))
    r = tessera.topk(x, 4, out=out)
    assert r[0] is out[0] and r[1] is out[1]
    check(out[1], np.argsort(-a, -1)[:, :4])
    with pytest.raises(IndexError):
        tessera.topk(x, 9)
    with pytest.raises(IndexError):
        x.sort(2)
    with pytest.raises(TypeError):
        tessera.sort(x, out=out[0])


def test_stable_sort(device):
    a = np.array([3, 1, 3, 1, 2, 3, 1], dtype=np.float32)
    x = dev(a, device)
    check(tessera.sort(x, stable=True).indices, np.argsort(a, kind="stable"))
    check(tessera.argsort(x, descending=True, stable=True), np.argsort(-a, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_unique(device, dtype):
    require(device, dtype)
    a = (np.array([[3, 1, 3], [0, 1, 5]]) % (2 if dtype == "bool" else 7)).astype(dtype)
    x = dev(a, device)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    check(tessera.unique(x), values)
    got = tessera.unique(x, return_inverse=True, return_counts=True)
    assert isinstance(got, tuple) and len(got) == 3
    check(got[0], values)
    check(got[1], inverse.reshape(a.shape))
    check(got[2], counts)
    got = x.unique(sorted=True, return_counts=True)
    check(got[1], counts)
    flat = a.reshape(-1)
    starts = np.concatenate([[True], flat[1:] != flat[:-1]])
    runs = np.cumsum(starts) - 1
    check(tessera.unique_consecutive(x), flat[starts])
    runs_values, inv, cnt = x.unique_consecutive(return_inverse=True, return_counts=True)
    check(runs_values, flat[starts])
    check(inv, runs.reshape(a.shape))
    check(cnt, np.bincount(runs))
    empty = tessera.unique(tessera.empty(0, device=device), return_inverse=True)
    assert tuple(empty[0].shape) == (0,) and tuple(empty[1].shape) == (0,)
    assert math.isclose(float(tessera.unique(dev(np.ones(4, np.float32), device)).item()), 1.0)


def test_keyword_names(device):
    x = dev(A, device)
    index = dev(np.array([1, 0]), device)
    check(tessera.index_select(input=x, dim=2, index=index), A[:, :, [1, 0]])
    check(tessera.gather(input=x, dim=0, index=dev(np.zeros((1, 3, 4), np.int64), device)),
          A[:1])
    check(tessera.scatter(input=x, dim=0, index=dev(np.zeros((1, 3, 4), np.int64), device),
                          value=-1.0), np.concatenate([np.full((1, 3, 4), -1, np.float32), A[1:]]))
    check(tessera.masked_select(input=x, mask=dev(A > 20, device)), A[A > 20])
    check(tessera.take(input=x, index=index), np.take(A, [1, 0]))
    check(tessera.roll(input=x, shifts=1, dims=0), np.roll(A, 1, 0))
    check(tessera.tril(input=x, diagonal=1), np.tril(A, 1))
    check(tessera.topk(input=x, k=1, dim=1, largest=False, sorted=True).values, A[:, :1])
    check(tessera.argsort(input=x, dim=0, descending=True, stable=True), np.argsort(-A, 0))
    check(tessera.stack(tensors=[x, x], dim=1), np.stack([A, A], 1))
    parts = tessera.chunk(input=x, chunks=2, dim=2)
    check(parts[1], A[:, :, 2:])
