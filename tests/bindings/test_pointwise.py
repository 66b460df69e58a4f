"""Elementwise ops of the tessera module against NumPy on every device:
unary math (function, method, in-place, out=), clamp, the binary ops with
numbers on either side, add/sub/mul/div with alpha and rounding_mode,
where/lerp/addcmul/addcdiv, the activation gradients, non-contiguous inputs
and the errors users get. The Python operators and type promotion are in
test_tensor_operators.py."""

import math

import numpy as np
import pytest

import tessera

from elementwise_reference import FLOAT_TOL, NP_DTYPE, check, get, put, rng, skip_unsupported


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


erf = np.vectorize(math.erf, otypes=[np.float64])

# name: (reference, low, high, has Tensor methods). Inputs are uniform in
# [low, high] (away from the ends of each op's domain).
UNARY_FLOAT = {
    "neg": (np.negative, -3, 3, True),
    "abs": (np.abs, -3, 3, True),
    "sign": (np.sign, -3, 3, True),
    "exp": (np.exp, -3, 3, True),
    "expm1": (np.expm1, -3, 3, True),
    "log": (np.log, 0.1, 5, True),
    "log1p": (np.log1p, -0.5, 5, True),
    "log2": (np.log2, 0.1, 5, True),
    "log10": (np.log10, 0.1, 5, True),
    "sqrt": (np.sqrt, 0.1, 5, True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 0.1, 5, True),
    "reciprocal": (np.reciprocal, 0.5, 3, True),
    "sin": (np.sin, -3, 3, True),
    "cos": (np.cos, -3, 3, True),
    "tan": (np.tan, -1.2, 1.2, True),
    "asin": (np.arcsin, -0.9, 0.9, True),
    "acos": (np.arccos, -0.9, 0.9, True),
    "atan": (np.arctan, -3, 3, True),
    "sinh": (np.sinh, -3, 3, True),
    "cosh": (np.cosh, -3, 3, True),
    "tanh": (np.tanh, -3, 3, True),
    "asinh": (np.arcsinh, -3, 3, True),
    "acosh": (np.arccosh, 1.1, 5, True),
    "atanh": (np.arctanh, -0.9, 0.9, True),
    "erf": (erf, -3, 3, True),
    "sigmoid": (sigmoid, -5, 5, True),
    "relu": (lambda x: np.maximum(x, 0), -3, 3, True),
    "floor": (np.floor, -3, 3, True),
    "ceil": (np.ceil, -3, 3, True),
    "round": (np.round, -3, 3, True),  # half to even, as PyTorch
    "trunc": (np.trunc, -3, 3, True),
    "silu": (lambda x: x * sigmoid(x), -5, 5, False),
    "hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, -5, 5, False),
    "hardsigmoid": (lambda x: np.clip(x + 3, 0, 6) / 6, -5, 5, False),
}


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.float16],
                         ids=["float32", "float64", "float16"])
def test_unary_float_ops(device, dtype):
    skip_unsupported(device, dtype)
    for i, (name, (ref, low, high, methods)) in enumerate(UNARY_FLOAT.items()):
        a = rng(i).uniform(low, high, (2, 5)).astype(NP_DTYPE[dtype])
        expected = ref(a.astype(np.float64))
        x = put(a, device)
        check(getattr(tessera, name)(x), expected, dtype, what=name)
        check(getattr(tessera, name)(input=x), expected, dtype, what=name)
        out = tessera.empty(2, 5, dtype=dtype, device=device)
        assert getattr(tessera, name)(x, out=out) is out
        check(out, expected, dtype, what=f"{name}(out=)")
        if methods:
            check(getattr(x, name)(), expected, dtype, what=f"Tensor.{name}")
            y = x.clone()
            assert getattr(y, name + "_")() is y
            check(y, expected, dtype, what=f"Tensor.{name}_")
        else:
            assert not hasattr(x, name + "_")
        check(x, a, dtype, what=f"{name} left its input alone")


def test_unary_integer_and_bool(device):
    a = np.array([[-3, -1, 0], [2, 5, 7]], dtype=np.int32)
    x = put(a, device)
    # Integer in, integer out.
    for name, ref in (("neg", np.negative), ("abs", np.abs), ("sign", np.sign),
                      ("bitwise_not", np.invert), ("relu", lambda v: np.maximum(v, 0)),
                      ("floor", lambda v: v), ("ceil", lambda v: v), ("round", lambda v: v),
                      ("trunc", lambda v: v)):
        check(getattr(tessera, name)(x), ref(a), tessera.int32, what=name)
        y = x.clone()
        assert getattr(y, name + "_")() is y
        check(y, ref(a), tessera.int32, what=name + "_")
    # Floating ops on integers give float32; in place they cannot be cast back.
    for name in ("exp", "sqrt", "sin", "sigmoid", "reciprocal", "erf"):
        ref = UNARY_FLOAT[name][0]
        with np.errstate(all="ignore"):
            expected = ref(a.astype(np.float64))
        check(getattr(tessera, name)(x), expected, tessera.float32, what=name)
        with pytest.raises(TypeError):
            getattr(x.clone(), name + "_")()
    # Integers into a float out= cast.
    out = tessera.empty(2, 3, dtype=tessera.float64, device=device)
    assert tessera.neg(x, out=out) is out
    check(out, -a, tessera.float64)

    b = np.array([True, False, True])
    tb = put(b, device)
    check(tessera.logical_not(tb), ~b, tessera.bool)
    check(tb.bitwise_not(), ~b, tessera.bool)
    check(tessera.logical_not(x), a == 0, tessera.bool)
    check(tessera.exp(tb), np.exp(b.astype(np.float64)), tessera.float32)
    y = tb.clone()
    assert y.logical_not_() is y
    check(y, ~b, tessera.bool)
    with pytest.raises(TypeError):
        tessera.neg(tb)
    with pytest.raises(TypeError):
        tessera.hardswish(x)  # floating only, as PyTorch's


def test_gelu(device):
    a = rng().uniform(-4, 4, (3, 4))
    x = put(a.astype(np.float32), device)
    exact = a * 0.5 * (1 + erf(a / math.sqrt(2)))
    tanh = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    check(tessera.gelu(x), exact, tessera.float32)
    check(tessera.gelu(x, approximate="none"), exact, tessera.float32)
    check(tessera.gelu(x, approximate="tanh"), tanh, tessera.float32)
    out = tessera.empty(3, 4, device=device)
    assert tessera.gelu(x, approximate="tanh", out=out) is out
    check(out, tanh, tessera.float32)
    with pytest.raises(ValueError):
        tessera.gelu(x, approximate="sigmoid")
    with pytest.raises(TypeError):
        tessera.gelu(x, "tanh")  # keyword-only, as PyTorch's


def test_isnan_family(device):
    a = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3.5], dtype=np.float32)
    x = put(a, device)
    refs = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
            "isneginf": np.isneginf, "isposinf": np.isposinf}
    for name, ref in refs.items():
        check(getattr(tessera, name)(x), ref(a), tessera.bool, what=name)
        check(getattr(x, name)(), ref(a), tessera.bool, what=name)
    ints = put(np.array([1, -2], dtype=np.int64), device)
    check(tessera.isnan(ints), [False, False], tessera.bool)
    check(ints.isfinite(), [True, True], tessera.bool)
    out = tessera.empty(6, dtype=tessera.bool, device=device)
    assert tessera.isposinf(x, out=out) is out
    check(out, np.isposinf(a), tessera.bool)
    assert tessera.isneginf(x, out=out) is out
    check(out, np.isneginf(a), tessera.bool)
    with pytest.raises(TypeError):
        tessera.isneginf(x, out=tessera.empty(6, device=device))  # out must be bool


def test_clamp(device):
    a = rng().uniform(-3, 3, (3, 4)).astype(np.float32)
    x = put(a, device)
    f32 = tessera.float32
    check(tessera.clamp(x, -1, 1), np.clip(a, -1, 1), f32)
    check(tessera.clamp(x, min=-0.5), np.maximum(a, -0.5), f32)
    check(tessera.clamp(x, max=0.5), np.minimum(a, 0.5), f32)
    check(x.clamp(min=-1, max=2), np.clip(a, -1, 2), f32)
    check(tessera.clamp(x, 2, 1), np.full_like(a, 1), f32)  # min > max gives max
    lo = rng(1).uniform(-2, 0, (4,)).astype(np.float32)
    hi = rng(2).uniform(0, 2, (3, 1)).astype(np.float32)
    tlo, thi = put(lo, device), put(hi, device)
    check(tessera.clamp(x, tlo, thi), np.minimum(np.maximum(a, lo), hi), f32)
    check(tessera.clamp(x, max=thi), np.minimum(a, hi), f32)
    check(x.clamp(min=tlo), np.maximum(a, lo), f32)
    out = tessera.empty(3, 4, device=device)
    assert tessera.clamp(x, -1, 1, out=out) is out
    check(out, np.clip(a, -1, 1), f32)
    assert tessera.clamp(x, tlo, None, out=out) is out
    check(out, np.maximum(a, lo), f32)
    y = x.clone()
    assert y.clamp_(-1, 1) is y
    check(y, np.clip(a, -1, 1), f32)
    y = x.clone()
    assert y.clamp_(max=thi) is y
    check(y, np.minimum(a, hi), f32)

    for name, ref, bound in (("clamp_min", np.maximum, "min"), ("clamp_max", np.minimum, "max")):
        fn = getattr(tessera, name)
        check(fn(x, 0.5), ref(a, 0.5), f32, what=name)
        check(fn(x, **{bound: tlo}), ref(a, lo), f32, what=name)
        check(getattr(x, name)(0.5), ref(a, 0.5), f32, what=name)
        check(getattr(x, name)(tlo), ref(a, lo), f32, what=name)
        assert fn(x, tlo, out=out) is out
        check(out, ref(a, lo), f32, what=name)
        y = x.clone()
        assert getattr(y, name + "_")(**{bound: 0.5}) is y
        check(y, ref(a, 0.5), f32, what=name + "_")
        y = x.clone()
        assert getattr(y, name + "_")(tlo) is y
        check(y, ref(a, lo), f32, what=name + "_")

    ints = put(np.array([-5, 0, 5], dtype=np.int32), device)
    check(tessera.clamp(ints, -2, 2), [-2, 0, 2], tessera.int32)
    check(tessera.clamp(ints, -2.5, 2.5), [-2.5, 0, 2.5], f32)  # result_type(x, min, max)
    with pytest.raises(ValueError):
        tessera.clamp(x)
    bools = put(np.array([True, False]), device)
    check(tessera.clamp(bools, 0, 1), [1, 0], tessera.int64)  # promoted by the bounds
    with pytest.raises(TypeError):
        tessera.clamp(bools, False, True)  # no bool clamp, as PyTorch


# name: (reference, has in-place method, takes a number first, dtype kinds)
# kinds: "f" floating, "i" integral. Comparisons and logical ops give bool.
BINARY = {
    "floor_divide": (np.floor_divide, True, True, "fi"),
    "remainder": (np.remainder, True, True, "fi"),
    "fmod": (np.fmod, True, False, "fi"),
    "pow": (np.power, True, True, "fi"),
    "maximum": (np.maximum, False, False, "fi"),
    "minimum": (np.minimum, False, False, "fi"),
    "atan2": (np.arctan2, True, False, "fi"),  # integers give float32
    "logaddexp": (np.logaddexp, False, False, "f"),
    "logaddexp2": (np.logaddexp2, False, False, "f"),
    "eq": (np.equal, True, False, "fi"),
    "ne": (np.not_equal, True, False, "fi"),
    "lt": (np.less, True, False, "fi"),
    "le": (np.less_equal, True, False, "fi"),
    "gt": (np.greater, True, False, "fi"),
    "ge": (np.greater_equal, True, False, "fi"),
    "logical_and": (np.logical_and, True, False, "fi"),
    "logical_or": (np.logical_or, True, False, "fi"),
    "logical_xor": (np.logical_xor, True, False, "fi"),
    "bitwise_and": (np.bitwise_and, True, True, "i"),
    "bitwise_or": (np.bitwise_or, True, True, "i"),
    "bitwise_xor": (np.bitwise_xor, True, True, "i"),
    "bitwise_left_shift": (np.left_shift, True, True, "i"),
    "bitwise_right_shift": (np.right_shift, True, True, "i"),
}
BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}


def binary_result(name, dtype):
    if name in BOOL_RESULT:
        return tessera.bool
    if name == "atan2" and dtype not in FLOAT_TOL:
        return tessera.float32
    return dtype


def binary_inputs(name, np_dtype):
    """a [3, 4], b [4] (broadcast) and a number, inside name's domain."""
    g = rng(len(name))
    if np.issubdtype(np_dtype, np.floating):
        low, high = (0.5, 2.0) if name == "pow" else (-3.0, 3.0)
        a = g.uniform(low, high, (3, 4))
        b = g.uniform(0.5, 2.0, (4,)) * g.choice([-1, 1], 4) if name != "pow" \
            else g.uniform(-2, 2, (4,))
        if name != "pow":
            a[0, :2] = b[:2]  # some equal pairs for the comparisons
        number = 1.5
    else:
        if name.startswith("bitwise_") and name.endswith("shift"):
            a, b, number = g.integers(-50, 50, (3, 4)), g.integers(0, 5, (4,)), 2
        elif name == "pow":
            a, b, number = g.integers(-4, 5, (3, 4)), g.integers(0, 4, (4,)), 3
        else:
            a = g.integers(-20, 20, (3, 4))
            b = g.integers(1, 6, (4,)) * g.choice([-1, 1], 4)
            a[0, :2] = b[:2]
            number = 3
    return a.astype(np_dtype), b.astype(np_dtype), number


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64, tessera.int32, tessera.int64],
                         ids=["float32", "float64", "int32", "int64"])
def test_binary_ops(device, dtype):
    skip_unsupported(device, dtype)
    kind = "f" if dtype in FLOAT_TOL else "i"
    for name, (ref, in_place, number_first, kinds) in BINARY.items():
        fn = getattr(tessera, name)
        a, b, number = binary_inputs(name, NP_DTYPE[dtype])
        x, y = put(a, device), put(b, device)
        if kind not in kinds:
            with pytest.raises(TypeError):
                fn(x, y)
            continue
        result = binary_result(name, dtype)
        expected = ref(a, b)
        check(fn(x, y), expected, result, what=name)
        keyword = "exponent" if name == "pow" else "other"  # PyTorch's names
        check(fn(input=x, **{keyword: y}), expected, result, what=name)
        check(getattr(x, name)(y), expected, result, what=f"Tensor.{name}")
        expected_number = ref(a, np.array(number, dtype=NP_DTYPE[dtype]))
        check(fn(x, number), expected_number, result, what=f"{name}(x, {number})")
        check(getattr(x, name)(number), expected_number, result, what=f"Tensor.{name}(number)")
        out = tessera.empty(3, 4, dtype=result, device=device)
        assert fn(x, y, out=out) is out
        check(out, expected, result, what=f"{name}(out=)")
        assert fn(x, number, out=out) is out
        check(out, expected_number, result, what=f"{name}(x, number, out=)")
        if in_place and result == dtype:
            z = x.clone()
            assert getattr(z, name + "_")(y) is z
            check(z, expected, dtype, what=f"{name}_")
            z = x.clone()
            assert getattr(z, name + "_")(number) is z
            check(z, expected_number, dtype, what=f"{name}_(number)")
        elif in_place and result == tessera.bool:
            z = x.clone()  # a bool result cast back into x's dtype
            assert getattr(z, name + "_")(y) is z
            check(z, expected, dtype, what=f"{name}_")
        elif in_place:
            with pytest.raises(TypeError):  # a float result into an integer self
                getattr(x.clone(), name + "_")(y)
        else:
            assert not hasattr(x, name + "_")
        if number_first:
            # PyTorch's Scalar_Tensor forms: number op tensor.
            base = np.array(number, dtype=NP_DTYPE[dtype])
            if name == "pow":
                base = np.array(2, dtype=NP_DTYPE[dtype])
                other = np.abs(b) if kind == "i" else b
            else:
                other = b
            expected_first = ref(base, other)
            t_other = put(other, device)
            check(fn(base.item(), t_other), expected_first, result, what=f"{name}(number, y)")
            out = tessera.empty(4, dtype=result, device=device)
            assert fn(base.item(), t_other, out=out) is out
            check(out, expected_first, result, what=f"{name}(number, y, out=)")


def test_bool_binary_ops(device):
    a = np.array([[True, False, True, False]])
    b = np.array([[True], [False]])
    x, y = put(a, device), put(b, device)
    for name in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "eq", "ne", "maximum", "minimum"):
        check(getattr(tessera, name)(x, y), BINARY[name][0](a, b), tessera.bool, what=name)
    check(x & True, a & True, tessera.bool)
    check(False | x, a | False, tessera.bool)
    check(x ^ y, a ^ b, tessera.bool)
    check(~x, ~a, tessera.bool)
    check(x + y, a | b, tessera.bool)  # bool + bool stays bool
    check(x + 1, a.astype(np.int64) + 1, tessera.int64)
    check(x * 2.5, a * 2.5, tessera.float32)
    with pytest.raises(TypeError):
        tessera.bitwise_left_shift(x, y)  # shifts: integral only
    with pytest.raises(TypeError):
        x - y  # PyTorch rejects subtracting bools
    with pytest.raises(TypeError):
        +x  # nor is unary + defined for bool


def test_add_sub_mul_div(device):
    a = rng().uniform(-3, 3, (3, 4)).astype(np.float32)
    b = rng(1).uniform(0.5, 2, (4,)).astype(np.float32) * np.array([1, -1, 1, -1], np.float32)
    x, y = put(a, device), put(b, device)
    f32 = tessera.float32
    check(tessera.add(x, y), a + b, f32)
    check(tessera.add(x, y, alpha=2), a + 2 * b, f32)
    check(tessera.sub(input=x, other=y, alpha=0.5), a - 0.5 * b, f32)
    check(tessera.add(x, 2.5, alpha=2), a + 5, f32)
    check(tessera.sub(x, 1), a - 1, f32)
    check(tessera.add(2, y, alpha=3), 2 + 3 * b, f32)
    check(tessera.sub(2, y), 2 - b, f32)
    check(tessera.mul(x, y), a * b, f32)
    check(tessera.mul(x, 3), a * 3, f32)
    check(tessera.mul(3, y), 3 * b, f32)
    check(tessera.div(x, y), a / b, f32)
    check(tessera.div(x, 4), a / 4, f32)
    check(tessera.div(2, y), 2 / b, f32)
    check(x.add(y, alpha=-1), a - b, f32)
    check(x.add(1.5, alpha=2), a + 3, f32)
    check(x.sub(y, alpha=2), a - 2 * b, f32)
    check(x.sub(1), a - 1, f32)
    check(x.mul(y), a * b, f32)
    check(x.mul(2), a * 2, f32)
    check(x.div(y), a / b, f32)
    check(x.div(2), a / 2, f32)
    for mode, ref in (("trunc", lambda p, q: np.trunc(p / q)), ("floor", np.floor_divide)):
        check(tessera.div(x, y, rounding_mode=mode), ref(a, b), f32, what=mode)
        check(tessera.div(x, 0.7, rounding_mode=mode), ref(a, np.float32(0.7)), f32, what=mode)
        check(tessera.div(5, y, rounding_mode=mode), ref(np.float32(5), b), f32, what=mode)
        check(x.div(y, rounding_mode=mode), ref(a, b), f32, what=mode)
        z = x.clone()
        assert z.div_(y, rounding_mode=mode) is z
        check(z, ref(a, b), f32, what=mode)
        z = x.clone()
        assert z.div_(0.7, rounding_mode=mode) is z
        check(z, ref(a, np.float32(0.7)), f32, what=mode)
    with pytest.raises(ValueError):
        tessera.div(x, y, rounding_mode="ceil")

    # In place, with tensors and numbers; the result is self.
    for name, arg, expected in (("add_", y, a + b), ("add_", 2, a + 2), ("sub_", y, a - b),
                                ("sub_", 0.5, a - 0.5), ("mul_", y, a * b), ("mul_", -2, a * -2),
                                ("div_", y, a / b), ("div_", 4, a / 4)):
        z = x.clone()
        assert getattr(z, name)(arg) is z
        check(z, expected, f32, what=f"{name}({arg!r})")
    z = x.clone()
    assert z.add_(y, alpha=3) is z and z.sub_(1, alpha=2) is z
    check(z, a + 3 * b - 2, f32)

    # out=, including a number operand and an empty out that is resized.
    for fn, args, expected in ((tessera.add, (x, y), a + b), (tessera.add, (x, 2), a + 2),
                               (tessera.sub, (x, 2), a - 2), (tessera.sub, (2, x), 2 - a),
                               (tessera.mul, (x, 2), a * 2), (tessera.mul, (2, x), 2 * a),
                               (tessera.div, (x, 2), a / 2), (tessera.div, (2, y), 2 / b)):
        out = tessera.empty(0, device=device)
        assert fn(*args, out=out) is out
        check(out, expected, f32, what=f"{fn.__name__}(out=)")
    out = tessera.empty(3, 4, device=device)
    assert tessera.div(x, 2, rounding_mode="floor", out=out) is out
    check(out, np.floor(a / 2), f32)

    # Integers: true division gives float32; trunc/floor keep the dtype.
    i = np.array([[-7, -6, 7], [9, 1, 0]], dtype=np.int64)
    j = np.array([2, -4, 3], dtype=np.int64)
    ti, tj = put(i, device), put(j, device)
    check(tessera.div(ti, tj), i / j, f32)
    check(ti / 2, i / 2, f32)
    check(tessera.div(ti, tj, rounding_mode="trunc"), np.trunc(i / j), tessera.int64)
    check(tessera.div(ti, tj, rounding_mode="floor"), np.floor_divide(i, j), tessera.int64)
    check(tessera.add(ti, tj, alpha=2), i + 2 * j, tessera.int64)
    with pytest.raises(TypeError):
        ti.div_(tj)  # float32 result into int64
    with pytest.raises(ValueError):
        tessera.div(ti, put(np.zeros(3, np.int64), device), rounding_mode="floor")


def test_where(device):
    c = np.array([[True, False, True], [False, False, True]])
    a = rng().uniform(-1, 1, (2, 3)).astype(np.float32)
    b = rng(1).uniform(-1, 1, (3,)).astype(np.float32)
    tc, x, y = put(c, device), put(a, device), put(b, device)
    f32 = tessera.float32
    check(tessera.where(tc, x, y), np.where(c, a, b), f32)
    check(tessera.where(condition=tc, input=x, other=y), np.where(c, a, b), f32)
    check(tessera.where(tc, x, 2.0), np.where(c, a, 2.0), f32)
    check(tessera.where(tc, -1, y), np.where(c, -1, b), f32)
    check(tessera.where(tc, 1, 0), np.where(c, 1, 0), tessera.int64)
    check(tessera.where(tc, 1.5, 0), np.where(c, 1.5, 0), f32)
    check(tessera.where(tc, True, False), c, tessera.bool)
    check(x.where(tc, y), np.where(c, a, b), f32)
    check(x.where(tc, 0), np.where(c, a, 0), f32)
    i = put(np.array([1, 2, 3], np.int32), device)
    check(tessera.where(tc, i, 2.5), np.where(c, [1, 2, 3], 2.5), f32)  # int32 and 2.5: float32
    check(tessera.where(tc, i, 7), np.where(c, [1, 2, 3], 7), tessera.int32)
    out = tessera.empty(2, 3, device=device)
    for args, expected in (((tc, x, y), np.where(c, a, b)), ((tc, x, 3), np.where(c, a, 3)),
                           ((tc, 3, y), np.where(c, 3, b)), ((tc, 1.0, 0.0), c.astype(float))):
        assert tessera.where(*args, out=out) is out
        check(out, expected, f32)
    with pytest.raises(TypeError):
        tessera.where(put(c.astype(np.int64), device), x, y)  # the condition must be bool


def test_lerp_addcmul_addcdiv(device):
    g = rng()
    s, e, w = (g.uniform(-2, 2, (2, 3)).astype(np.float32) for _ in range(3))
    t1 = g.uniform(-2, 2, (3,)).astype(np.float32)
    t2 = g.uniform(0.5, 2, (2, 1)).astype(np.float32)
    ts, te, tw, tt1, tt2 = (put(v, device) for v in (s, e, w, t1, t2))
    f32 = tessera.float32
    cases = (
        ("lerp", (te, 0.3), {}, s + 0.3 * (e - s)),
        ("lerp", (te, tw), {}, s + w * (e - s)),
        ("addcmul", (tt1, tt2), {}, s + t1 * t2),
        ("addcmul", (tt1, tt2), {"value": -0.5}, s - 0.5 * t1 * t2),
        ("addcdiv", (tt1, tt2), {}, s + t1 / t2),
        ("addcdiv", (tt1, tt2), {"value": 2}, s + 2 * t1 / t2),
    )
    for name, args, kwargs, expected in cases:
        check(getattr(tessera, name)(ts, *args, **kwargs), expected, f32, what=name)
        check(getattr(ts, name)(*args, **kwargs), expected, f32, what=f"Tensor.{name}")
        out = tessera.empty(2, 3, device=device)
        assert getattr(tessera, name)(ts, *args, out=out, **kwargs) is out
        check(out, expected, f32, what=f"{name}(out=)")
        z = ts.clone()
        assert getattr(z, name + "_")(*args, **kwargs) is z
        check(z, expected, f32, what=f"{name}_")
    check(tessera.lerp(input=ts, end=te, weight=0.5), (s + e) / 2, f32)
    check(tessera.addcmul(ts, tensor1=tt1, tensor2=tt2, value=2), s + 2 * t1 * t2, f32)
    ints = put(np.array([1, 2], np.int64), device)
    with pytest.raises(TypeError):
        tessera.lerp(ints, ints, 0.5)  # floating only
    with pytest.raises(TypeError):
        tessera.addcdiv(ints, ints, ints)  # not integers


def test_non_contiguous_inputs(device):
    base = rng().uniform(0.5, 3, (4, 6)).astype(np.float32)
    x = put(base, device)
    xt = x.t()  # transposed [6, 4]
    stepped = x.as_strided((4, 3), (6, 2))  # every second column
    assert not xt.is_contiguous() and not stepped.is_contiguous()
    at, astep = base.T, base[:, ::2]
    f32 = tessera.float32
    check(tessera.exp(xt), np.exp(at), f32)
    check(stepped.sqrt(), np.sqrt(astep), f32)
    check(xt + xt, at + at, f32)
    check(tessera.maximum(stepped, stepped * 0.5),
          np.maximum(astep, astep * 0.5), f32)
    check(tessera.pow(stepped, 2), astep ** 2, f32)
    check(tessera.where(stepped > 1.5, stepped, 0.0), np.where(astep > 1.5, astep, 0), f32)
    check(tessera.lerp(xt, xt * 2, 0.25), at + 0.25 * at, f32)
    check(stepped.clamp(1, 2), np.clip(astep, 1, 2), f32)
    # In place on a view writes through to the base tensor, leaving the rest.
    assert stepped.mul_(10) is stepped
    expected = base.copy()
    expected[:, ::2] *= 10
    check(x, expected, f32)
    xt.add_(1)
    expected += 1
    check(x, expected, f32)
    # out= may be a non-contiguous view.
    out_base = tessera.zeros(4, 6, device=device)
    out = out_base.as_strided((4, 3), (6, 2), 1)  # odd columns
    assert tessera.neg(stepped, out=out) is out
    want = np.zeros((4, 6), np.float32)
    want[:, 1::2] = -expected[:, ::2]
    check(out_base, want, f32)


def test_errors(device):
    x = tessera.ones(2, 3, device=device)
    ints = tessera.ones(3, dtype=tessera.int64, device=device)
    with pytest.raises(ValueError):
        x + tessera.ones(4, device=device)  # shapes do not broadcast
    with pytest.raises(ValueError):
        tessera.atan2(x, tessera.ones(2, 2, device=device))
    with pytest.raises(TypeError):
        tessera.bitwise_and(x, x)  # float
    with pytest.raises(TypeError):
        tessera.logaddexp(ints, ints)  # floating only
    with pytest.raises(ValueError):
        tessera.floor_divide(ints, 0)  # integer division by zero
    with pytest.raises(ValueError):
        ints % tessera.zeros(3, dtype=tessera.int64, device=device)
    with pytest.raises(ValueError):
        tessera.pow(ints, -1)  # a negative integer power of integers
    with pytest.raises(TypeError):
        tessera.add(x, x, out=tessera.empty(2, 3, dtype=tessera.int64, device=device))
    with pytest.raises(ValueError):
        tessera.add(x, x, out=tessera.empty(3, 2, device=device))  # out of another shape
    with pytest.raises(TypeError):
        tessera.exp(x, x)  # out is keyword-only
    with pytest.raises(TypeError):
        tessera.add(x, "1")
    with pytest.raises(TypeError):
        tessera.add(x, [1, 2, 3])
    with pytest.raises(TypeError):
        tessera.fmod(2, x)  # no number-first form, as PyTorch
    with pytest.raises(TypeError):
        tessera.add(ints, ints, alpha=1.5)  # a float alpha for integers
    host = tessera.ones(2, 3)
    if host.device != x.device:
        with pytest.raises((ValueError, RuntimeError)):
            host + x  # tensors on two devices


def test_activation_gradients(device):
    torch = pytest.importorskip("torch")
    aten = torch.ops.aten
    g = rng()
    s = g.uniform(-4, 4, (3, 5)).astype(np.float32)
    s[0, 0], s[0, 1] = 3.0, -3.0  # hardswish/hardsigmoid edges
    grad = g.uniform(-1, 1, (3, 5)).astype(np.float32)
    out_sig = (1 / (1 + np.exp(-s))).astype(np.float32)
    out_tanh = np.tanh(s).astype(np.float32)
    ts, tg, tsig, ttanh = (put(v, device) for v in (s, grad, out_sig, out_tanh))
    T = torch.from_numpy
    cases = [
        (tessera.threshold_backward(tg, ts, 0.5), aten.threshold_backward(T(grad), T(s), 0.5)),
        (tessera.relu_backward(tg, tessera.relu(ts)),
         aten.threshold_backward(T(grad), torch.relu(T(s)), 0)),
        (tessera.gelu_backward(tg, ts), aten.gelu_backward(T(grad), T(s))),
        (tessera.gelu_backward(grad_output=tg, self=ts, approximate="tanh"),
         aten.gelu_backward(T(grad), T(s), approximate="tanh")),
        (tessera.silu_backward(tg, ts), aten.silu_backward(T(grad), T(s))),
        (tessera.sigmoid_backward(tg, tsig), aten.sigmoid_backward(T(grad), T(out_sig))),
        (tessera.tanh_backward(tg, ttanh), aten.tanh_backward(T(grad), T(out_tanh))),
        (tessera.hardswish_backward(tg, ts), aten.hardswish_backward(T(grad), T(s))),
        (tessera.hardsigmoid_backward(tg, ts), aten.hardsigmoid_backward(T(grad), T(s))),
        (tessera.leaky_relu_backward(tg, ts, 0.1),
         aten.leaky_relu_backward(T(grad), T(s), 0.1, False)),
        (tessera.elu_backward(tg, 1.5, 1.0, 1.0, False, ts),
         aten.elu_backward(T(grad), 1.5, 1.0, 1.0, False, T(s))),
        (tessera.softplus_backward(tg, ts, 2.0, 3.0),
         aten.softplus_backward(T(grad), T(s), 2.0, 3.0)),
        (tessera.hardtanh_backward(tg, ts, -1.0, 2.0),
         aten.hardtanh_backward(T(grad), T(s), -1.0, 2.0)),
        (tessera.log_sigmoid_backward(tg, ts),
         aten.log_sigmoid_backward(T(grad), T(s), aten.log_sigmoid_forward(T(s))[1])),
        (tessera.mish_backward(tg, ts), aten.mish_backward(T(grad), T(s))),
    ]
    for i, (got, expected) in enumerate(cases):
        check(got, expected.numpy(), tessera.float32, tol=(1e-4, 1e-5), what=f"case {i}")
