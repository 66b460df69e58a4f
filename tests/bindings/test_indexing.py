"""Tensor.__getitem__ / __setitem__ against NumPy on every device: a table of
index expressions read and written, views sharing memory, advanced indexing
with PyTorch's placement of the indexed dims, dtypes, non-contiguous bases
and the errors of bad keys and values."""

import numpy as np
import pytest
import tessera

NUMPY_DTYPES = {
    tessera.float32: np.float32,
    tessera.float64: np.float64,
    tessera.float16: np.float16,
    tessera.int64: np.int64,
    tessera.int32: np.int32,
    tessera.bool: np.bool_,
}


def require(device, dtype_name):
    """Skips (not passes) a dtype the device does not support."""
    props = tessera.get_device_properties(device)
    needs = {"float64": "supports_float64", "float16": "supports_float16",
             "int64": "supports_int64"}.get(dtype_name)
    if needs and not props[needs]:
        pytest.skip(f"{device} has no {dtype_name}")


def to_device(array, device):
    array = np.asarray(array)
    return tessera.tensor(array.tolist(), dtype=getattr(tessera, str(array.dtype)), device=device)


def to_numpy(t):
    # reshape: tolist() of an empty tensor loses the dims after the empty one.
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPES[t.dtype]).reshape(tuple(t.shape))


class Idx:
    """An index array in a key: a list for NumPy, an int64 tensor for tessera."""

    def __init__(self, values):
        self.values = np.array(values, dtype=np.int64)

    def __repr__(self):
        return f"Idx({self.values.tolist()})"


class Mask:
    """A bool mask in a key: a NumPy bool array, a bool tensor for tessera."""

    def __init__(self, values):
        self.values = np.array(values, dtype=bool)

    def __repr__(self):
        return f"Mask({self.values.shape})"


def numpy_key(key):
    if isinstance(key, tuple):
        return tuple(numpy_key(k) for k in key)
    if isinstance(key, (Idx, Mask)):
        return key.values
    return key


def tessera_key(key, device):
    if isinstance(key, tuple):
        return tuple(tessera_key(k, device) for k in key)
    if isinstance(key, Idx):
        return tessera.tensor(key.values.tolist(), dtype=tessera.int64, device=device)
    if isinstance(key, Mask):
        return tessera.tensor(key.values.tolist(), dtype=tessera.bool, device=device)
    return key


BASE = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

GET_KEYS = [
    # Basic: views.
    0, -1, (1, 2), (-1, -2, 3, -5), slice(None), slice(1, None),
    (slice(None), slice(0, 3, 2)), (Ellipsis, 1), (Ellipsis, slice(1, 4, 2)), None,
    (0, None, Ellipsis, None), (slice(None), None, 1), (slice(None), slice(5, 10)),
    slice(-100, 100), (1, Ellipsis, 2), (Ellipsis,), (),
    (slice(None), slice(None), slice(None, None, 3), slice(1, None, 2)),
    True, False, np.int64(1), (0, np.int32(2)),
    # Lists: index arrays (bools: masks).
    [1, 0], [True, False], [[0, 1], [1, 1]], [],
    # Index tensors, alone, broadcast together, beside slices and ints.
    Idx([1, 0]), Idx([[0, 1], [1, 1]]), (slice(None), Idx([2, 0, 1])),
    (Idx([0, 1]), Idx([2, 0])), (slice(None), Idx([0, 2]), Idx([1, 3])),
    (Idx([0, 1]), slice(None), Idx([1, 3])), (Ellipsis, Idx([4, -1])), Idx([-1]),
    (Idx([[0], [1]]), slice(None), Idx([0, 3, 2])), (0, Idx([2, 1])), (Idx([1, 0]), 2),
    (None, Idx([1]), None, slice(0, 2)), Idx([]),
    # Masks.
    Mask(BASE[:, :, 0, 0] % 2 == 0), (slice(None), Mask([True, False, True])),
    Mask(BASE % 3 == 0), (Ellipsis, Mask([False, True, True, False, True])),
    Mask(np.zeros(2, bool)),
]


def test_getitem_table(device):
    x = to_device(BASE, device)
    for key in GET_KEYS:
        expected = BASE[numpy_key(key)]
        got = x[tessera_key(key, device)]
        assert got.device == x.device, key
        assert tuple(got.shape) == expected.shape, key
        np.testing.assert_array_equal(to_numpy(got), expected, err_msg=repr(key))


def test_int_beside_index_tensor_stays_basic(device):
    # PyTorch's rule (NumPy would put the broadcast dim first): the int
    # selects first, then the index tensor indexes dim 1 in place.
    x = to_device(BASE, device)
    got = x[:, tessera.tensor([0, 2, 1], device=device), :, 0]
    expected = BASE[:, :, :, 0][:, [0, 2, 1]]
    assert tuple(got.shape) == (2, 3, 4)
    np.testing.assert_array_equal(to_numpy(got), expected)


def test_host_index_for_device_tensor(device):
    x = to_device(BASE, device)
    got = x[tessera.tensor([1, 0]), :, tessera.tensor([3, 0])]
    np.testing.assert_array_equal(to_numpy(got), BASE[[1, 0], :, [3, 0]])


SET_CASES = [
    (0, 7),
    ((1, 2), -1.5),
    (slice(None, None, 2), [1, 2, 3, 4, 5]),
    ((Ellipsis, 1), np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)),
    (Idx([1, 0]), np.arange(60, dtype=np.float32).reshape(3, 4, 5)),
    ((slice(None), Idx([0, 2]), Idx([1, 3])), np.arange(10, dtype=np.float64).reshape(2, 5)),
    ((Idx([0, 1]), slice(None), Idx([1, 3])), np.arange(30, dtype=np.int64).reshape(2, 3, 5)),
    (Mask(BASE % 3 == 0), 0),
    ((slice(None), Mask([True, False, True])), np.full((4, 5), -2, dtype=np.float32)),
    ((1, slice(1, 3)), np.float64(2.25)),
    ((Ellipsis, Idx([4, -5])), np.array([10, 20], dtype=np.int32)),
    (Ellipsis, 3),
    ([True, False], -9),
    ((Idx([[1], [0]]), 0, Idx([2, 3])), [[[5], [6]], [[7], [8]]]),
]


def test_setitem_table(device):
    for key, value in SET_CASES:
        expected = BASE.copy()
        expected[numpy_key(key)] = value
        x = to_device(BASE, device)
        x[tessera_key(key, device)] = (to_device(value, device)
                                       if isinstance(value, np.ndarray) else value)
        np.testing.assert_array_equal(to_numpy(x), expected, err_msg=repr(key))


def test_setitem_casts_to_the_tensors_dtype(device):
    base = np.arange(12, dtype=np.int64).reshape(3, 4)
    x = to_device(base, device)
    x[0] = 2.7  # truncated, as NumPy's cast
    x[1, :2] = to_device(np.array([1.9, -1.9]), device)
    x[[2], [3]] = to_device(np.array([True]), device)
    expected = base.copy()
    expected[0] = 2.7
    expected[1, :2] = [1.9, -1.9]
    expected[[2], [3]] = True
    assert x.dtype == tessera.int64
    np.testing.assert_array_equal(to_numpy(x), expected)


def test_basic_indexing_returns_views(device):
    x = to_device(BASE, device)
    view = x[1, ::2, None, ..., 1:4:2]
    assert tuple(view.shape) == (2, 1, 4, 2)
    view[...] = -1
    expected = BASE.copy()
    expected[1, ::2, None, ..., 1:4:2] = -1
    np.testing.assert_array_equal(to_numpy(x), expected)
    # Chained: x[0][2] is a view of x, written through.
    row = x[0][2]
    row.fill_(5)
    expected[0][2] = 5
    np.testing.assert_array_equal(to_numpy(x), expected)
    # Advanced indexing into a view writes the base too.
    inner = x[1]
    inner[[0, 2], 1] = 42
    expected[1][[0, 2], 1] = 42
    np.testing.assert_array_equal(to_numpy(x), expected)


def test_advanced_indexing_returns_a_copy(device):
    x = to_device(BASE, device)
    picked = x[[1, 0]]
    picked.fill_(0)
    masked = x[tessera_key(Mask(BASE >= 0), device)]
    masked.fill_(0)
    np.testing.assert_array_equal(to_numpy(x), BASE)


def test_overlapping_assignment_reads_old_values(device):
    a = np.arange(10, dtype=np.float32)
    x = to_device(a, device)
    x[1:] = x[:-1]
    a[1:] = a[:-1].copy()
    np.testing.assert_array_equal(to_numpy(x), a)


def test_non_contiguous_bases(device):
    permuted = np.transpose(BASE, (0, 3, 2, 1))  # (2, 5, 4, 3)
    stepped = BASE[:, :, ::2]                    # (2, 3, 2, 5)
    x = to_device(BASE, device)
    cases = [
        (x.permute(0, 3, 2, 1), permuted,
         [0, (slice(None), Idx([4, 0])), (Ellipsis, slice(0, 3, 2)), Mask(permuted % 4 == 1),
          (1, Idx([3, 1]), slice(None), Idx([2, 0]))]),
        (x[:, :, ::2], stepped,
         [(1, 2), (slice(None), Idx([2, 0])), Mask(stepped[..., 0] > 40),
          (Ellipsis, Idx([[0], [4]]))]),
    ]
    for tensor, array, keys in cases:
        for key in keys:
            got = tensor[tessera_key(key, device)]
            np.testing.assert_array_equal(to_numpy(got), array[numpy_key(key)],
                                          err_msg=repr(key))
    # Writes through a permuted view reach the base.
    expected = BASE.copy()
    np.transpose(expected, (0, 3, 2, 1))[:, [4, 0], 1] = -3
    view = x.permute(0, 3, 2, 1)
    view[:, tessera.tensor([4, 0], device=device), 1] = -3
    np.testing.assert_array_equal(to_numpy(x), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_dtypes(device, dtype):
    require(device, dtype)
    base = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    x = to_device(base, device)
    for key in [(1, slice(None, None, 2)), Idx([2, 0]), (slice(None), Idx([3, -1])),
                Mask(np.arange(12).reshape(3, 4) % 2 == 1), (Ellipsis, None, 0)]:
        got = x[tessera_key(key, device)]
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(to_numpy(got), base[numpy_key(key)], err_msg=repr(key))
    expected = base.copy()
    expected[0] = 1
    expected[[1, 2], [0, 3]] = expected[0, :2]
    x[0] = 1
    x[[1, 2], [0, 3]] = x[0, :2]
    np.testing.assert_array_equal(to_numpy(x), expected)


def test_iteration_and_zero_dim(device):
    x = to_device(BASE[:, 0, 0, 0], device)  # [0, 60]
    assert [t.item() for t in x] == [0.0, 60.0]
    rows = list(to_device(BASE[0, 0, :, 0], device))
    assert len(rows) == 4
    np.testing.assert_array_equal(to_numpy(rows[3]), BASE[0, 0, 3, 0])
    scalar = x[1]
    assert scalar.shape == () and scalar.item() == 60.0
    assert scalar[()].item() == 60.0
    assert tuple(scalar[None].shape) == (1,)
    assert tuple(scalar[...].shape) == ()
    with pytest.raises(IndexError, match="too many indices"):
        scalar[0]
    scalar[()] = 7
    assert x.cpu().tolist() == [0.0, 7.0]


def test_errors(device):
    x = to_device(BASE, device)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[5]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        x[:, -4]
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 2 with size 4"):
        x[0, 0, [7]]
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 3"):
        x[:, tessera.tensor([0, -4], device=device)]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(ValueError):
        x[::0]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 4"):
        x[0, 0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[tessera.tensor([0.0], device=device)]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="shape of the mask"):
        x[tessera.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(IndexError, match="valid indices"):
        x[[slice(None)]]
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x[[0, 1]] = tessera.ones(2, 3, device=device)
    with pytest.raises(ValueError):
        x[0] = tessera.ones(4, 4, device=device)
    with pytest.raises(TypeError):
        x[0] = "a"
    with pytest.raises(IndexError):
        x[2] = 0
    # Nothing was written by the failed assignments.
    np.testing.assert_array_equal(to_numpy(x), BASE)
