"""Property tests of the tessera module against NumPy, with inputs that
Hypothesis draws: pointwise ops (unary, and binary with broadcasting) over
shapes of up to 4 dims, reductions over random dims with and without
keepdim, and chains of views (permute, transpose, reshape, slicing), on
every device, in the dtypes the device supports among float32, float64,
int32, int64 and bool.

Runs are derandomized (the same examples each time) and keep no example
database, so CI sees the same cases every run. Each test body is a
function that Hypothesis drives inside the test, so that the `device`
fixture is set up once per test rather than per example.
"""

import math

import numpy as np
import pytest

import tessera

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

NUMPY_DTYPE = {
    tessera.float32: np.float32, tessera.float64: np.float64,
    tessera.int32: np.int32, tessera.int64: np.int64, tessera.bool: np.bool_,
}
TESSERA_DTYPE = {np.dtype(v): k for k, v in NUMPY_DTYPE.items()}
FLOATS = (tessera.float32, tessera.float64)
INTS = (tessera.int32, tessera.int64)
# Relative tolerance of each float dtype against a float64 reference.
RTOL = {tessera.float32: 1e-5, tessera.float64: 1e-12}

# Examples per op and device type: lavapipe runs Vulkan on the CPU, and a
# first use of each kernel compiles its pipeline. The view chains, one test
# for all view ops, get VIEW_EXAMPLES_FACTOR times as many.
EXAMPLES = {"cpu": 50, "vulkan": 20, "cuda": 50}
VIEW_EXAMPLES_FACTOR = 5


def device_settings(device, factor=1):
    return settings(max_examples=EXAMPLES[device.type] * factor, deadline=None,
                    derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def dtypes_for(device, accepted):
    """The dtypes among accepted that device supports; skips if none."""
    props = tessera.get_device_properties(device)
    flag = {tessera.float64: "supports_float64", tessera.int64: "supports_int64"}
    dtypes = [d for d in accepted if props.get(flag.get(d, ""), True)]
    if not dtypes:
        pytest.skip(f"{device} supports none of {accepted}")
    return dtypes


def elements(dtype, low, high, int_range):
    if dtype in FLOATS:
        return st.floats(low, high, width=32 if dtype == tessera.float32 else 64,
                         allow_subnormal=False)
    if dtype in INTS:
        return st.integers(*int_range)
    return st.booleans()


def to_tessera(array, device, layout):
    """A tensor on device with array's values; for layout, a permutation of
    its dims, the tensor is that permutation of a contiguous one (strided)."""
    stored = np.transpose(array, np.argsort(layout).astype(int)).copy(order="C")
    flat = tessera.tensor(stored.ravel().tolist(), dtype=TESSERA_DTYPE[array.dtype],
                          device=device)
    t = flat.reshape(stored.shape)
    if list(layout) != sorted(layout):
        t = t.permute(*layout)
    assert tuple(t.shape) == array.shape
    return t


def to_numpy(t):
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPE[t.dtype]).reshape(t.shape)


def check(what, t, expected, dtype, atol=0.0, rtol=None):
    """t equals expected (a NumPy array, computed in float64 for floats) in
    shape, dtype and values, to the dtype's tolerance."""
    expected = np.asarray(expected)
    assert t.dtype == dtype, f"{what}: dtype {t.dtype}, expected {dtype}"
    assert tuple(t.shape) == expected.shape, f"{what}: shape {tuple(t.shape)} vs {expected.shape}"
    got = to_numpy(t)
    if dtype in FLOATS:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol or RTOL[dtype], atol=atol + 1e-6, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected.astype(NUMPY_DTYPE[dtype]), err_msg=what)


@st.composite
def tensors(draw, device, dtype, shape, low=-4, high=4, int_range=(-40, 40)):
    """(NumPy array, the same values as a tensor on device, possibly strided):
    floats in [low, high], integers in int_range."""
    array = draw(hnp.arrays(NUMPY_DTYPE[dtype], shape,
                            elements=elements(dtype, low, high, int_range)))
    layout = draw(st.permutations(range(len(shape))))
    return array, to_tessera(array, device, layout)


# -- pointwise ----------------------------------------------------------------

ALL = tuple(NUMPY_DTYPE)
NUMBERS = FLOATS + INTS
SAME = "same"  # the result dtype is the input's

# name: (NumPy reference, input dtypes, result dtype, input domain (low, high))
UNARY = {
    "neg": (np.negative, NUMBERS, SAME, (-4, 4)),
    "abs": (np.abs, NUMBERS, SAME, (-4, 4)),
    "sign": (np.sign, NUMBERS, SAME, (-4, 4)),
    "exp": (np.exp, FLOATS, SAME, (-4, 4)),
    "sin": (np.sin, FLOATS, SAME, (-4, 4)),
    "tanh": (np.tanh, FLOATS, SAME, (-4, 4)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), FLOATS, SAME, (-4, 4)),
    "sqrt": (np.sqrt, FLOATS, SAME, (0, 4)),
    "log1p": (np.log1p, FLOATS, SAME, (0, 4)),
    "floor": (np.floor, FLOATS, SAME, (-4, 4)),
    "ceil": (np.ceil, FLOATS, SAME, (-4, 4)),
    "trunc": (np.trunc, FLOATS, SAME, (-4, 4)),
    "logical_not": (np.logical_not, ALL, tessera.bool, (-4, 4)),
    "bitwise_not": (np.invert, INTS + (tessera.bool,), SAME, (-4, 4)),
}

BINARY = {
    "add": (np.add, ALL, SAME),
    "sub": (np.subtract, NUMBERS, SAME),
    "mul": (np.multiply, ALL, SAME),
    "div": (np.divide, FLOATS, SAME),
    "maximum": (np.maximum, NUMBERS, SAME),
    "minimum": (np.minimum, NUMBERS, SAME),
    "atan2": (np.arctan2, FLOATS, SAME),
    "eq": (np.equal, ALL, tessera.bool),
    "ne": (np.not_equal, ALL, tessera.bool),
    "lt": (np.less, ALL, tessera.bool),
    "ge": (np.greater_equal, ALL, tessera.bool),
    "logical_and": (np.logical_and, ALL, tessera.bool),
    "logical_xor": (np.logical_xor, ALL, tessera.bool),
    "bitwise_and": (np.bitwise_and, INTS + (tessera.bool,), SAME),
    "bitwise_or": (np.bitwise_or, INTS + (tessera.bool,), SAME),
}


def call(data, name, *args, **kwargs):
    """tessera.name(*args, **kwargs) or, drawn at random, the method
    args[0].name(*args[1:], **kwargs)."""
    if data.draw(st.booleans(), label="method form"):
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(tessera, name)(*args, **kwargs)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_pointwise(device, name):
    reference, accepted, result, (low, high) = UNARY[name]
    dtypes = dtypes_for(device, accepted)

    @device_settings(device)
    @given(data=st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
        array, x = data.draw(tensors(device, dtype, shape, low, high))
        expected = reference(array.astype(np.float64) if dtype in FLOATS else array)
        check(f"{name}({dtype}, {shape})", call(data, name, x), expected,
              dtype if result is SAME else result)

    run()


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_pointwise_broadcasts(device, name):
    reference, accepted, result = BINARY[name]
    dtypes = dtypes_for(device, accepted)

    @device_settings(device)
    @given(data=st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shapes = data.draw(hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=4))
        a, x = data.draw(tensors(device, dtype, shapes.input_shapes[0]))
        b, y = data.draw(tensors(device, dtype, shapes.input_shapes[1]))
        if name == "div":
            # Divisors away from 0: x / 1e-30 overflows float32 but not the
            # float64 reference.
            b = np.where(np.abs(b) < 0.25, np.float64(1), b).astype(b.dtype)
            y = to_tessera(b, device, tuple(range(b.ndim)))
        if dtype in FLOATS:
            a, b = a.astype(np.float64), b.astype(np.float64)
        expected = reference(a, b)
        assert expected.shape == shapes.result_shape
        check(f"{name}({dtype}, {shapes.input_shapes})", call(data, name, x, y), expected,
              dtype if result is SAME else result)

    run()


# -- reductions ---------------------------------------------------------------

def reduced_dtype(name, dtype):
    """PyTorch's result dtype: sum and prod of integers and bools are int64."""
    if name in ("sum", "prod") and dtype not in FLOATS:
        return tessera.int64
    return dtype


# name: (NumPy reference, input dtypes, whether it takes several dims)
REDUCTIONS = {
    "sum": (np.sum, ALL, True),
    "mean": (np.mean, FLOATS, True),
    "amax": (np.amax, NUMBERS, True),
    "prod": (np.prod, ALL, False),
}


@st.composite
def reduction_dims(draw, ndim, several):
    """None (every dim), one dim, or (when several) a tuple of distinct
    dims, each given as d or d - ndim at random."""
    if ndim == 0 or draw(st.integers(0, 3)) == 0:
        return None
    count = draw(st.integers(1, ndim)) if several else 1
    dims = draw(st.lists(st.integers(0, ndim - 1), min_size=count, max_size=count, unique=True))
    dims = [d - ndim if draw(st.booleans()) else d for d in dims]
    if len(dims) == 1 and (not several or draw(st.booleans())):
        return dims[0]
    return tuple(dims)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_over_random_dims(device, name):
    reference, accepted, several = REDUCTIONS[name]
    dtypes = dtypes_for(device, accepted)

    @device_settings(device)
    @given(data=st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        # prod: at most 16 factors of magnitude at most 2, exact in int64 and
        # far from float32's limits.
        max_side = 2 if name == "prod" else 4
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=max_side))
        if name == "prod":
            array, x = data.draw(tensors(device, dtype, shape, -2, 2, int_range=(-2, 2)))
        else:
            array, x = data.draw(tensors(device, dtype, shape))
        dim = data.draw(reduction_dims(len(shape), several), label="dim")
        # prod takes no keepdim without a dim (as in PyTorch).
        keepdim = data.draw(st.booleans(), label="keepdim") and (several or dim is not None)
        source = array.astype(np.float64) if dtype in FLOATS else array
        expected = reference(source, axis=dim, keepdims=keepdim)
        if dim is None and not keepdim:
            got = call(data, name, x)
        else:
            got = call(data, name, x, dim=dim, keepdim=keepdim)
        # Floats: a sum's rounding error grows with the magnitudes summed.
        atol = 0.0
        if dtype in FLOATS and name in ("sum", "mean"):
            scale = np.sum(np.abs(source), axis=dim, keepdims=keepdim)
            count = source.size / max(np.asarray(expected).size, 1) if name == "mean" else 1
            atol = float(np.max(scale / count)) * RTOL[dtype] * 4
        rtol = RTOL[dtype] * 10 if name == "prod" and dtype in FLOATS else None
        check(f"{name}({dtype}, {shape}, dim={dim}, keepdim={keepdim})", got, expected,
              reduced_dtype(name, dtype), atol=atol, rtol=rtol)

    run()


# -- views --------------------------------------------------------------------

@st.composite
def view_steps(draw, shape):
    """A chain of 1 to 3 views of an array of shape: (description, apply to
    a NumPy array, apply to a tensor) each."""
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        ndim = len(shape)
        kinds = ["reshape", "slice"] + (["permute", "transpose"] if ndim >= 1 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "permute":
            perm = draw(st.permutations(range(ndim)))
            step = (f"permute{tuple(perm)}", lambda a, p=perm: np.transpose(a, p),
                    lambda t, p=perm: t.permute(*p))
            shape = tuple(shape[p] for p in perm)
        elif kind == "transpose":
            d0 = draw(st.integers(-ndim, ndim - 1))
            d1 = draw(st.integers(-ndim, ndim - 1))
            step = (f"transpose({d0}, {d1})", lambda a, i=d0, j=d1: np.swapaxes(a, i, j),
                    lambda t, i=d0, j=d1: t.transpose(i, j))
            shape = np.swapaxes(np.empty(shape), d0, d1).shape
        elif kind == "reshape":
            numel = math.prod(shape)
            new = []
            left = numel
            for _ in range(draw(st.integers(0, 3))):
                divisors = [d for d in range(1, left + 1) if left % d == 0] or [1]
                side = draw(st.sampled_from(divisors))
                new.append(side)
                left //= side
            new.append(left)
            if numel > 0 and draw(st.booleans()):
                new[draw(st.integers(0, len(new) - 1))] = -1  # inferred
            target = tuple(new)
            step = (f"reshape{target}", lambda a, s=target: a.reshape(s),
                    lambda t, s=target: t.reshape(s))
            shape = np.empty(shape).reshape(target).shape
        else:
            index = []
            for size in shape:
                if size > 0 and draw(st.integers(0, 4)) == 0:
                    index.append(draw(st.integers(-size, size - 1)))  # drops the dim
                else:
                    start = draw(st.none() | st.integers(-size - 1, size + 1))
                    stop = draw(st.none() | st.integers(-size - 1, size + 1))
                    index.append(slice(start, stop, draw(st.integers(1, 3))))
            index = tuple(index)
            step = (f"[{index}]", lambda a, i=index: a[i], lambda t, i=index: t[i])
            shape = np.empty(shape)[index].shape
        steps.append(step)
    return steps


def test_view_chains_match_numpy(device):
    dtypes = dtypes_for(device, ALL)

    @device_settings(device, VIEW_EXAMPLES_FACTOR)
    @given(data=st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
        array, x = data.draw(tensors(device, dtype, shape))
        steps = data.draw(view_steps(shape), label="views")
        what = f"{dtype} {shape}: " + ".".join(description for description, _, _ in steps)
        for _, on_array, on_tensor in steps:
            array, x = on_array(array), on_tensor(x)
        check(what, x, array, dtype)
        # A kernel reads the (often strided) view through its strides.
        if dtype == tessera.bool:
            check(what + " -> logical_not", tessera.logical_not(x), np.logical_not(array), dtype)
        else:
            check(what + " -> x + x", x + x, array + array, dtype)
        check(what + " -> contiguous", x.contiguous(), array, dtype)

    run()
