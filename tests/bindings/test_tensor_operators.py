"""The Python operators of tessera.Tensor against NumPy on every device:
+ - * / // % ** @ with tensors or numbers on either side, comparisons giving
bool tensors, bitwise operators, the in-place forms (returning self), the
identity hash, and PyTorch's type promotion (tessera.result_type)."""

import operator

import numpy as np
import pytest

import tessera

from elementwise_reference import check, get, put, rng, skip_unsupported


def test_operators(device):
    a = rng().uniform(-3, 3, (3, 4)).astype(np.float32)
    b = rng(1).uniform(0.5, 2, (4,)).astype(np.float32)
    x, y = put(a, device), put(b, device)
    f32 = tessera.float32
    for got, expected in ((x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
                          (x // y, np.floor_divide(a, b)), (x % y, np.remainder(a, b)),
                          (y ** x, b ** a), (x + 2, a + 2), (2 + x, 2 + a), (x - 2, a - 2),
                          (2 - x, 2 - a), (x * 3, a * 3), (3 * x, 3 * a), (x / 4, a / 4),
                          (4 / y, 4 / b), (x // 2, np.floor_divide(a, 2)),
                          (7 // y, np.floor_divide(7, b)), (x % 2, np.remainder(a, 2)),
                          (7 % y, np.remainder(7, b)), (y ** 2, b ** 2), (2 ** x, 2.0 ** a),
                          (-x, -a), (+x, a), (abs(x), np.abs(a)), (x + True, a + 1)):
        check(got, expected, f32)
    for got, expected in ((x == y, a == b), (x != y, a != b), (x < y, a < b), (x <= y, a <= b),
                          (x > y, a > b), (x >= y, a >= b), (x == 1.5, a == 1.5),
                          (x < 0, a < 0), (0 < x, 0 < a), (x >= 1, a >= 1), (1 >= x, 1 >= a),
                          (x != 0, a != 0)):
        check(got, expected, tessera.bool)
    assert (x == None) is False  # noqa: E711  (NotImplemented: identity comparison)
    assert (x != "text") is True
    m = rng(2).uniform(-1, 1, (4, 2)).astype(np.float32)
    check(x @ put(m, device), a @ m, f32, tol=(1e-5, 1e-5))
    check(y @ y, b @ b, f32)
    left = rng(3).uniform(-1, 1, (2, 3)).astype(np.float32)
    check(x.__rmatmul__(put(left, device)), left @ a, f32, tol=(1e-5, 1e-5))

    i = np.array([[12, -7, 5], [3, 0, -9]], dtype=np.int64)
    j = np.array([3, 2, 1], dtype=np.int64)
    ti, tj = put(i, device), put(j, device)
    i64 = tessera.int64
    for got, expected in ((ti & tj, i & j), (ti | tj, i | j), (ti ^ tj, i ^ j), (ti & 6, i & 6),
                          (6 & ti, 6 & i), (ti | 1, i | 1), (1 | ti, 1 | i), (ti ^ 5, i ^ 5),
                          (5 ^ ti, 5 ^ i), (ti << tj, i << j), (ti >> tj, i >> j),
                          (ti << 2, i << 2), (1 << tj, 1 << j), (ti >> 1, i >> 1),
                          (64 >> tj, 64 >> j), (~ti, ~i), (ti // tj, i // j), (ti % tj, i % j),
                          (ti ** 2, i ** 2), (2 ** tj, 2 ** j), (-ti, -i), (ti * 2, i * 2),
                          (7 - ti, 7 - i)):
        check(got, expected, i64)
    check(ti / tj, i / j, f32)
    check(ti + 2.5, i + 2.5, f32)
    check(2.5 * ti, 2.5 * i, f32)
    with pytest.raises(TypeError):
        x & y  # bitwise ops: integral and bool only
    with pytest.raises(TypeError):
        x + "text"
    with pytest.raises(TypeError):
        "text" - x


def test_in_place_operators(device):
    a = rng().uniform(0.5, 3, (3, 4)).astype(np.float32)
    b = rng(1).uniform(0.5, 2, (4,)).astype(np.float32)
    y = put(b, device)
    # operator.iadd(x, arg) is `x += arg`: what it returns is what x becomes.
    for op, arg, expected in ((operator.iadd, y, a + b), (operator.isub, y, a - b),
                              (operator.imul, y, a * b), (operator.itruediv, y, a / b),
                              (operator.ifloordiv, y, np.floor_divide(a, b)),
                              (operator.imod, y, np.remainder(a, b)), (operator.ipow, y, a ** b),
                              (operator.iadd, 2, a + 2), (operator.isub, 0.5, a - 0.5),
                              (operator.imul, 3, a * 3), (operator.itruediv, 4, a / 4),
                              (operator.ifloordiv, 2, np.floor_divide(a, 2)),
                              (operator.imod, 2, np.remainder(a, 2)), (operator.ipow, 2, a ** 2)):
        x = put(a, device)
        assert op(x, arg) is x, op.__name__  # in place: the same object
        check(x, expected, tessera.float32, what=f"{op.__name__}({arg!r})")

    i = np.array([[12, -7, 5], [3, 1, -9]], dtype=np.int32)
    j = np.array([3, 2, 1], dtype=np.int32)
    tj = put(j, device)
    for op, arg, expected in ((operator.iand, tj, i & j), (operator.ior, tj, i | j),
                              (operator.ixor, tj, i ^ j), (operator.ilshift, tj, i << j),
                              (operator.irshift, tj, i >> j), (operator.iand, 6, i & 6),
                              (operator.ior, 1, i | 1), (operator.ixor, 5, i ^ 5),
                              (operator.ilshift, 2, i << 2), (operator.irshift, 1, i >> 1),
                              (operator.iadd, 3, i + 3), (operator.imul, tj, i * j)):
        x = put(i, device)
        assert op(x, arg) is x, op.__name__
        check(x, expected, tessera.int32, what=f"{op.__name__}({arg!r})")

    x = put(i, device)
    with pytest.raises(TypeError):
        x += 2.5  # float32 result into int32
    with pytest.raises(TypeError):
        x /= 2
    x = put(a, device)
    with pytest.raises(ValueError):
        x += put(np.ones((2, 3, 4), np.float32), device)  # the result must keep self's shape


def test_float64_numbers_keep_precision(device):
    skip_unsupported(device, tessera.float64)
    a = np.array([1.0, 2.0, -3.0])
    x = put(a, device)
    for apply, expected in ((lambda t: t.add_(0.1), a + 0.1), (lambda t: t.sub_(0.1), a - 0.1),
                            (lambda t: t.mul_(0.1), a * 0.1), (lambda t: t.div_(0.1), a / 0.1),
                            (lambda t: t.__iadd__(0.1), a + 0.1),
                            (lambda t: t.__itruediv__(0.1), a / 0.1)):
        z = x.clone()
        apply(z)
        np.testing.assert_allclose(get(z), expected, rtol=1e-15)
    out = tessera.empty(3, dtype=tessera.float64, device=device)
    tessera.add(x, 0.1, out=out)
    np.testing.assert_allclose(get(out), a + 0.1, rtol=1e-15)
    np.testing.assert_allclose(get(0.1 - x), 0.1 - a, rtol=1e-15)


def test_hash_and_identity(device):
    x = tessera.ones(2, device=device)
    y = tessera.ones(2, device=device)
    table = {x: "x", y: "y"}
    assert table[x] == "x" and table[y] == "y"
    assert hash(x) == hash(x) and hash(x) != hash(y)
    assert x in {x} and y not in {x}


@pytest.mark.parametrize("tensor_dtype, other, expected", [
    (tessera.int32, 2, tessera.int32),
    (tessera.int32, 2.5, tessera.float32),
    (tessera.int64, True, tessera.int64),
    (tessera.bool, 1, tessera.int64),
    (tessera.bool, 1.0, tessera.float32),
    (tessera.bool, True, tessera.bool),
    (tessera.float16, 2.5, tessera.float16),
    (tessera.float16, 100000, tessera.float16),
    (tessera.float64, 2, tessera.float64),
    (tessera.int32, ("0-d", tessera.int64), tessera.int32),
    (tessera.int32, ("0-d", tessera.float64), tessera.float64),
    (tessera.float32, ("0-d", tessera.float64), tessera.float32),
    (tessera.float16, ("1-d", tessera.float32), tessera.float32),
    (tessera.int32, ("1-d", tessera.int64), tessera.int64),
    (tessera.bool, ("1-d", tessera.int32), tessera.int32),
], ids=str)
def test_type_promotion(device, tensor_dtype, other, expected):
    """The result dtypes of PyTorch's promotion rules (torch.result_type)."""
    skip_unsupported(device, tessera.float64)
    skip_unsupported(device, tessera.float16)
    x = tessera.ones(3, dtype=tensor_dtype, device=device)
    if isinstance(other, tuple):
        shape = () if other[0] == "0-d" else (3,)
        other = tessera.ones(*shape, dtype=other[1], device=device)
    assert tessera.result_type(x, other) == expected
    assert tessera.result_type(other, x) == expected
    assert (x + other).dtype == expected
    assert (other * x).dtype == expected
    assert tessera.maximum(x, other).dtype == expected
    assert tessera.where(tessera.ones(3, dtype=tessera.bool, device=device), x, other).dtype \
        == expected


def test_result_type_of_numbers():
    assert tessera.result_type(1, 2) == tessera.int64
    assert tessera.result_type(1, 2.0) == tessera.float32
    assert tessera.result_type(True, False) == tessera.bool
    assert tessera.result_type(tensor=True, other=3) == tessera.int64
