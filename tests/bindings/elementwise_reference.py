"""What the elementwise tests share (test_pointwise.py,
test_tensor_operators.py): the NumPy dtype of each tessera dtype, the
tolerances, moving arrays to a device and back, and the comparison."""

import numpy as np
import pytest

import tessera

NP_DTYPE = {
    tessera.float16: np.float16,
    tessera.float32: np.float32,
    tessera.float64: np.float64,
    tessera.int32: np.int32,
    tessera.int64: np.int64,
    tessera.bool: np.bool_,
}
FLOAT_TOL = {  # (rtol, atol)
    tessera.float16: (2e-3, 2e-3),
    tessera.float32: (1e-5, 1e-6),
    tessera.float64: (1e-6, 1e-9),
}


def skip_unsupported(device, dtype):
    props = tessera.get_device_properties(device)
    for kind, flag in ((tessera.float16, "supports_float16"),
                       (tessera.float64, "supports_float64"),
                       (tessera.int64, "supports_int64")):
        if dtype == kind and not props.get(flag, True):
            pytest.skip(f"{device} has no {kind}")


def put(array, device, dtype=None):
    """A tensor on device with array's values (and dtype unless given)."""
    array = np.asarray(array)
    if dtype is None:
        dtype = {np.dtype(v): k for k, v in NP_DTYPE.items()}[array.dtype]
    return tessera.tensor(array.tolist(), dtype=dtype, device=device)


def get(t):
    """t's values as a NumPy array of t's dtype."""
    return np.array(t.cpu().tolist(), dtype=NP_DTYPE[t.dtype])


def check(t, expected, dtype, tol=None, what=""):
    assert t.dtype == dtype, f"{what}: dtype {t.dtype}, expected {dtype}"
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape, what
    got = get(t)
    if dtype in FLOAT_TOL:
        rtol, atol = tol or FLOAT_TOL[dtype]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected.astype(NP_DTYPE[dtype]), err_msg=what)


def rng(seed=0):
    return np.random.default_rng(seed)
