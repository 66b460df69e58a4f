"""Linear algebra of the tessera module (ops_linalg.cc) against NumPy: the
products as functions, Tensor methods, in-place and out= forms, cross,
cdist and tessera.linalg, on every device."""

import math

import numpy as np
import pytest

import tessera

# (tessera dtype, NumPy dtype, tolerance, device property it needs)
FLOAT_DTYPES = [
    pytest.param(tessera.float32, np.float32, 1e-5, None, id="float32"),
    pytest.param(tessera.float64, np.float64, 1e-12, "supports_float64", id="float64"),
    pytest.param(tessera.float16, np.float16, 2e-2, "supports_float16", id="float16"),
]
ALL_DTYPES = FLOAT_DTYPES + [
    pytest.param(tessera.int64, np.int64, 0, "supports_int64", id="int64"),
    pytest.param(tessera.int32, np.int32, 0, None, id="int32"),
]


def skip_unsupported(device, needs):
    if needs and not tessera.get_device_properties(device)[needs]:
        pytest.skip(f"{device} lacks {needs}")


def values(shape, np_dtype, seed):
    """Small values, exact in every dtype: integers in [-3, 3], or quarters
    in [-2, 2] (sums of their products stay exact in float16 too)."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np_dtype, np.integer):
        return rng.integers(-3, 4, size=shape).astype(np_dtype)
    return (rng.integers(-8, 9, size=shape) / 4).astype(np_dtype)


def put(a, device, dtype):
    return tessera.tensor(np.asarray(a).tolist(), dtype=dtype, device=device)


def back(t):
    return np.array(t.cpu().tolist(), dtype=np.float64)


def check(t, expected, tol, shape=None):
    got = back(t)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == (expected.shape if shape is None else shape)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * 4)


def stepped(a, device, dtype):
    """A non-contiguous tensor holding a: a[..., ::2] of a twice wider one."""
    t = put(np.repeat(a, 2, axis=-1), device, dtype)
    strides = list(t.stride())
    strides[-1] *= 2
    return t.as_strided(a.shape, strides)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", ALL_DTYPES)
def test_products_match_numpy(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    a, b = values((3, 4), np_dtype, 1), values((4, 5), np_dtype, 2)
    ta, tb = put(a, device, dtype), put(b, device, dtype)
    assert tessera.mm(ta, tb).dtype is dtype
    check(tessera.mm(ta, tb), a @ b, tol)
    check(ta.mm(tb), a @ b, tol)
    check(tessera.mm(input=ta, mat2=tb), a @ b, tol)

    x, y = values((2, 3, 4), np_dtype, 3), values((2, 4, 2), np_dtype, 4)
    check(tessera.bmm(put(x, device, dtype), put(y, device, dtype)), x @ y, tol)
    check(put(x, device, dtype).bmm(mat2=put(y, device, dtype)), x @ y, tol)

    # matmul: 1-D operands and broadcast batch dims.
    v, w = values((4,), np_dtype, 5), values((3,), np_dtype, 6)
    tv, tw = put(v, device, dtype), put(w, device, dtype)
    batch, rhs = values((2, 1, 3, 4), np_dtype, 7), values((3, 4, 2), np_dtype, 8)
    check(tessera.matmul(ta, tv), a @ v, tol)
    check(tessera.matmul(tw, ta), w @ a, tol)
    check(tessera.matmul(tv, tv), v @ v, tol, shape=())
    check(tessera.matmul(put(batch, device, dtype), tb), batch @ b, tol)
    check(tessera.matmul(put(batch, device, dtype), put(rhs, device, dtype)), batch @ rhs, tol)
    check(ta.matmul(other=tb), a @ b, tol)

    check(tessera.dot(tv, tensor=tv), v @ v, tol, shape=())
    check(tv.dot(tv), v @ v, tol, shape=())
    check(tessera.vdot(tv, other=tv), v @ v, tol, shape=())
    check(tv.vdot(tv), v @ v, tol, shape=())
    check(tessera.mv(ta, tv), a @ v, tol)
    check(ta.mv(vec=tv), a @ v, tol)
    check(tessera.outer(tv, tw), np.outer(v, w), tol)
    check(tessera.ger(tv, vec2=tw), np.outer(v, w), tol)
    check(tv.outer(tw), np.outer(v, w), tol)
    check(tv.ger(tw), np.outer(v, w), tol)

    c = values((5, 4), np_dtype, 9)
    check(tessera.inner(ta, put(c, device, dtype)), np.inner(a, c), tol)
    check(ta.inner(ta), np.inner(a, a), tol)
    check(tessera.inner(ta, put(np.array(2, dtype=np_dtype), device, dtype)), a * 2, tol)

    # tensordot: a count of dims, or explicit pairs in any order.
    p, q = values((3, 4, 2), np_dtype, 10), values((4, 2, 5), np_dtype, 11)
    tp, tq = put(p, device, dtype), put(q, device, dtype)
    check(tessera.tensordot(tp, tq), np.tensordot(p, q), tol)
    r = values((3, 2), np_dtype, 12)
    check(tessera.tensordot(tp, put(r.T.copy(), device, dtype), dims=1), np.tensordot(p, r.T, 1),
          tol)
    check(tessera.tensordot(tp, ta, dims=([0, 1], [0, 1])), np.tensordot(p, a, ([0, 1], [0, 1])),
          tol)
    check(tessera.tensordot(a=tp, b=tq, dims=([2, 1], [1, 0])),
          np.tensordot(p, q, ([2, 1], [1, 0])), tol)
    check(tessera.tensordot(tv, tw, dims=0), np.tensordot(v, w, 0), tol)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", ALL_DTYPES)
def test_scaled_products(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    integral = np.issubdtype(np_dtype, np.integer)
    beta, alpha = (2, 3) if integral else (0.5, -1.5)
    m1, m2 = values((3, 4), np_dtype, 1), values((4, 2), np_dtype, 2)
    b1, b2 = values((2, 3, 4), np_dtype, 3), values((2, 4, 2), np_dtype, 4)
    vec, v3 = values((4,), np_dtype, 5), values((3,), np_dtype, 6)
    v2 = values((2,), np_dtype, 7)
    row = values((2,), np_dtype, 8)  # input broadcast along the rows
    cases = [
        ("addmm", (m1, m2), m1 @ m2, row),
        ("baddbmm", (b1, b2), b1 @ b2, values((3, 2), np_dtype, 9)),
        ("addbmm", (b1, b2), (b1 @ b2).sum(0), row),
        ("addmv", (m1, vec), m1 @ vec, values((1,), np_dtype, 10)),
        ("addr", (v3, v2), np.outer(v3, v2), row),
    ]
    for name, operands, product, small_input in cases:
        ops = [put(o, device, dtype) for o in operands]
        full_input = np.broadcast_to(small_input, product.shape).copy()
        expected = beta * full_input + alpha * product
        fn = getattr(tessera, name)
        check(fn(put(small_input, device, dtype), *ops, beta=beta, alpha=alpha), expected, tol)
        check(fn(put(small_input, device, dtype), *ops), small_input + product, tol)
        check(getattr(put(small_input, device, dtype), name)(*ops, alpha=alpha),
              small_input + alpha * product, tol)
        # In place: self keeps its identity and gets the result.
        self_t = put(full_input, device, dtype)
        assert getattr(self_t, name + "_")(*ops, beta=beta, alpha=alpha) is self_t
        check(self_t, expected, tol)
        # out=: the out tensor's own object comes back.
        out = tessera.empty(*product.shape, dtype=dtype, device=device)
        assert fn(put(small_input, device, dtype), *ops, beta=beta, alpha=alpha, out=out) is out
        check(out, expected, tol)


def test_keyword_names_and_beta_zero(device):
    a, b = values((2, 3), np.float32, 1), values((3, 2), np.float32, 2)
    ta, tb = put(a, device, tessera.float32), put(b, device, tessera.float32)
    nan = tessera.full((2, 2), float("nan"), device=device)
    # beta=0 ignores input, NaN included (PyTorch's rule).
    check(tessera.addmm(nan, ta, tb, beta=0), a @ b, 1e-6)
    check(tessera.addmm(input=nan, mat1=ta, mat2=tb, beta=0, alpha=2), 2 * (a @ b), 1e-6)
    b1, b2 = values((2, 2, 3), np.float32, 3), values((2, 3, 2), np.float32, 4)
    check(tessera.baddbmm(input=nan, batch1=put(b1, device, tessera.float32),
                          batch2=put(b2, device, tessera.float32), beta=0), b1 @ b2, 1e-6)
    check(tessera.addbmm(input=nan, batch1=put(b1, device, tessera.float32),
                         batch2=put(b2, device, tessera.float32), beta=0), (b1 @ b2).sum(0), 1e-6)
    v = values((3,), np.float32, 5)
    check(tessera.addmv(input=tessera.zeros(2, device=device), mat=ta,
                        vec=put(v, device, tessera.float32)), a @ v, 1e-6)
    check(tessera.addr(input=tessera.zeros(2, 3, device=device), vec1=put(a[:, 0], device,
                       tessera.float32), vec2=put(v, device, tessera.float32)),
          np.outer(a[:, 0], v), 1e-6)
    # Integer inputs refuse floating beta / alpha, as PyTorch.
    ti = put(values((2, 2), np.int64, 6), device, tessera.int64)
    with pytest.raises(TypeError):
        tessera.addmm(ti, ti, ti, beta=0.5)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", FLOAT_DTYPES)
def test_non_contiguous_operands(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    a, b = values((3, 4), np_dtype, 1), values((4, 5), np_dtype, 2)
    at = put(a.T.copy(), device, dtype).t()  # transposed view of a
    bs = stepped(b, device, dtype)           # b[:, ::2] of a wider tensor
    assert not at.is_contiguous() and not bs.is_contiguous()
    check(tessera.mm(at, bs), a @ b, tol)
    check(tessera.matmul(at, bs), a @ b, tol)
    check(tessera.addmm(stepped(values((3, 5), np_dtype, 3), device, dtype), at, bs),
          values((3, 5), np_dtype, 3) + a @ b, tol)
    v = values((4,), np_dtype, 4)
    check(tessera.mv(at, stepped(v, device, dtype)), a @ v, tol)
    check(tessera.dot(stepped(v, device, dtype), stepped(v, device, dtype)), v @ v, tol, shape=())
    batch = values((2, 3, 4), np_dtype, 5)
    tb = put(batch.transpose(0, 2, 1).copy(), device, dtype).transpose(1, 2)
    check(tessera.bmm(tb, put(np.stack([b, b]), device, dtype)), batch @ b, tol)
    check(tessera.tensordot(at, bs, dims=1), a @ b, tol)


def test_out_forms_return_out(device):
    f32 = tessera.float32
    a, b = values((3, 4), np.float32, 1), values((4, 2), np.float32, 2)
    v = values((4,), np.float32, 3)
    ta, tb, tv = put(a, device, f32), put(b, device, f32), put(v, device, f32)
    cases = [
        (tessera.mm, (ta, tb), a @ b),
        (tessera.matmul, (ta, tb), a @ b),
        (tessera.bmm, (ta.unsqueeze(0), tb.unsqueeze(0)), (a @ b)[None]),
        (tessera.mv, (ta, tv), a @ v),
        (tessera.dot, (tv, tv), v @ v),
        (tessera.vdot, (tv, tv), v @ v),
        (tessera.outer, (tv, tv), np.outer(v, v)),
        (tessera.ger, (tv, tv), np.outer(v, v)),
        (tessera.inner, (ta, ta), a @ a.T),
    ]
    for fn, args, expected in cases:
        out = tessera.empty(*np.shape(expected), device=device)
        assert fn(*args, out=out) is out, fn.__name__
        check(out, expected, 1e-5)
    out = tessera.empty(3, 2, device=device)
    assert tessera.tensordot(ta, tb, dims=1, out=out) is out
    check(out, a @ b, 1e-5)
    # An empty out is resized; a wrong-sized one is refused.
    empty = tessera.empty(0, device=device)
    assert tessera.mm(ta, tb, out=empty) is empty and empty.shape == (3, 2)
    with pytest.raises(ValueError):
        tessera.mm(ta, tb, out=tessera.empty(2, 2, device=device))
    # out of another dtype than the result can be cast to.
    with pytest.raises(TypeError):
        tessera.mm(ta, tb, out=tessera.empty(3, 2, dtype=tessera.int64, device=device))


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", FLOAT_DTYPES[:2])
def test_cross(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    a, b = values((2, 3, 4), np_dtype, 1), values((2, 3, 4), np_dtype, 2)
    ta, tb = put(a, device, dtype), put(b, device, dtype)
    # Without dim: the first dim of size 3.
    check(tessera.cross(ta, tb), np.cross(a, b, axis=1), tol)
    check(ta.cross(tb), np.cross(a, b, axis=1), tol)
    check(tessera.cross(ta, tb, dim=1), np.cross(a, b, axis=1), tol)
    c, d = values((4, 3), np_dtype, 3), values((1, 3), np_dtype, 4)
    check(tessera.linalg.cross(put(c, device, dtype), put(d, device, dtype)), np.cross(c, d), tol)
    check(tessera.linalg.cross(ta.transpose(1, 2), tb.transpose(1, 2), dim=-1),
          np.cross(a.transpose(0, 2, 1), b.transpose(0, 2, 1)), tol)
    out = tessera.empty(2, 3, 4, dtype=dtype, device=device)
    assert tessera.cross(ta, tb, dim=1, out=out) is out
    check(out, np.cross(a, b, axis=1), tol)
    assert tessera.linalg.cross(ta, tb, dim=1, out=out) is out
    with pytest.raises(ValueError):
        tessera.cross(put(values((2, 4), np_dtype, 5), device, dtype),
                      put(values((2, 4), np_dtype, 6), device, dtype))


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", FLOAT_DTYPES[:2])
def test_cdist(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    x1, x2 = values((2, 3, 4), np_dtype, 1), values((2, 5, 4), np_dtype, 2)
    diff = np.abs(x1[:, :, None, :] - x2[:, None, :, :]).astype(np.float64)
    t1, t2 = put(x1, device, dtype), put(x2, device, dtype)
    check(tessera.cdist(t1, t2), np.sqrt((diff ** 2).sum(-1)), max(tol, 1e-6))
    check(tessera.cdist(x1=t1, x2=t2, p=1.0), diff.sum(-1), max(tol, 1e-6))
    check(tessera.cdist(t1, t2, p=math.inf, compute_mode="donot_use_mm_for_euclid_dist"),
          diff.max(-1), max(tol, 1e-6))
    with pytest.raises(ValueError):
        tessera.cdist(t1, t2, compute_mode="fastest")


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", FLOAT_DTYPES)
def test_linalg_norms(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    a = values((2, 3, 4), np_dtype, 1)
    ta = put(a, device, dtype)
    x = np.abs(a.astype(np.float64))
    inverse_powers = np.power(x, -2.5, out=np.full_like(x, np.inf), where=x != 0)
    vector_cases = [
        ({}, np.sqrt((x ** 2).sum())),
        ({"ord": 1, "dim": -1}, x.sum(-1)),
        ({"ord": 3, "dim": (0, 2)}, ((x ** 3).sum((0, 2))) ** (1 / 3)),
        # A zero makes |x|^-2.5 infinite and the norm 0, as in PyTorch.
        ({"ord": -2.5, "dim": 1, "keepdim": True},
         inverse_powers.sum(1, keepdims=True) ** (1 / -2.5)),
        ({"ord": math.inf, "dim": 0}, x.max(0)),
        ({"ord": -math.inf, "dim": 2}, x.min(2)),
        ({"ord": 0, "dim": 1}, (x != 0).sum(1)),
    ]
    for kwargs, expected in vector_cases:
        r = tessera.linalg.vector_norm(ta, **kwargs)
        assert r.dtype is dtype, kwargs
        check(r, expected, max(tol, 1e-5))
    check(tessera.linalg.vector_norm(x=ta, ord=2, dtype=tessera.float32), np.sqrt((x ** 2).sum()),
          1e-5)
    # Integer input needs a floating dtype.
    with pytest.raises(TypeError):
        tessera.linalg.vector_norm(tessera.ones(3, dtype=tessera.int32, device=device))

    matrix_cases = [
        ("fro", np.sqrt((x ** 2).sum((1, 2)))),
        (1, x.sum(1).max(-1)),
        (-1, x.sum(1).min(-1)),
        (math.inf, x.sum(2).max(-1)),
        (-math.inf, x.sum(2).min(-1)),
    ]
    for ord_, expected in matrix_cases:
        check(tessera.linalg.matrix_norm(ta, ord=ord_), expected, max(tol, 1e-5))
        check(tessera.linalg.norm(ta, ord_, dim=(1, 2)), expected, max(tol, 1e-5))
    check(tessera.linalg.matrix_norm(input=ta, ord=1, dim=(0, 2), keepdim=True),
          x.sum(0).max(-1)[None, :, None], max(tol, 1e-5))
    check(tessera.linalg.norm(ta), np.sqrt((x ** 2).sum()), max(tol, 1e-5))
    check(tessera.linalg.norm(ta.select(0, 0), 1), x[0].sum(0).max(),
          max(tol, 1e-5), shape=())
    check(tessera.linalg.norm(ta, 1, dim=2), x.sum(2), max(tol, 1e-5))
    out = tessera.empty(2, dtype=dtype, device=device)
    assert tessera.linalg.matrix_norm(ta, out=out) is out
    with pytest.raises(NotImplementedError):
        tessera.linalg.matrix_norm(ta, ord="nuc")
    with pytest.raises(NotImplementedError):
        tessera.linalg.matrix_norm(ta, ord=2)
    with pytest.raises(ValueError):
        tessera.linalg.matrix_norm(ta, ord=3)
    with pytest.raises(ValueError):
        tessera.linalg.norm(ta, "fro", dim=1)  # a matrix order for a vector norm
    with pytest.raises(ValueError):
        tessera.linalg.norm(ta, 2)  # an order without dim needs 1-D or 2-D input


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", ALL_DTYPES[:2] + ALL_DTYPES[3:])
def test_vecdot_multi_dot_matrix_power(device, dtype, np_dtype, tol, needs):
    skip_unsupported(device, needs)
    x, y = values((3, 4), np_dtype, 1), values((4,), np_dtype, 2)
    check(tessera.linalg.vecdot(put(x, device, dtype), put(y, device, dtype)), x @ y, tol)
    check(tessera.linalg.vecdot(x=put(x, device, dtype), y=put(x, device, dtype), dim=0),
          (x * x).sum(0), tol)
    check(tessera.linalg.matmul(put(x, device, dtype), put(y, device, dtype)), x @ y, tol)

    a, b, c = values((4, 3), np_dtype, 3), values((3, 5), np_dtype, 4), values((5, 2), np_dtype, 5)
    ts = [put(m, device, dtype) for m in (a, b, c)]
    check(tessera.linalg.multi_dot(ts), a @ b @ c, tol)
    check(tessera.linalg.multi_dot([put(a[0], device, dtype), ts[1], ts[2]]), a[0] @ b @ c, tol)
    check(tessera.linalg.multi_dot([ts[0], ts[1], put(c[:, 0], device, dtype)]), a @ b @ c[:, 0],
          tol)
    check(tessera.linalg.multi_dot([put(b[:, 0], device, dtype), put(b[:, 1], device, dtype)]),
          b[:, 0] @ b[:, 1], tol, shape=())
    with pytest.raises(ValueError):
        tessera.linalg.multi_dot([ts[0]])
    with pytest.raises(ValueError):
        tessera.linalg.multi_dot([ts[0], put(values((3, 5, 1), np_dtype, 6), device, dtype)])

    m = values((2, 3, 3), np_dtype, 7)
    tm = put(m, device, dtype)
    for n in (0, 1, 2, 5):
        expected = np.stack([np.linalg.matrix_power(m[i].astype(np.float64), n) for i in range(2)])
        check(tessera.linalg.matrix_power(tm, n), expected, tol)
        check(tessera.matrix_power(tm, n), expected, tol)
        check(tm.matrix_power(n), expected, tol)
    with pytest.raises(NotImplementedError):
        tessera.linalg.matrix_power(tm, -1)
    with pytest.raises(ValueError):
        tessera.linalg.matrix_power(put(values((2, 3), np_dtype, 8), device, dtype), 2)


def test_errors(device):
    f32 = tessera.float32
    a = tessera.ones(2, 3, device=device)
    # Shapes that do not multiply, and wrong ranks: ValueError.
    for call in [
        lambda: tessera.mm(a, a),
        lambda: tessera.mm(a, tessera.ones(3, device=device)),
        lambda: tessera.bmm(a, a.t()),
        lambda: tessera.matmul(a, tessera.ones(2, device=device)),
        lambda: tessera.dot(tessera.ones(3, device=device), tessera.ones(4, device=device)),
        lambda: tessera.dot(a, a),
        lambda: tessera.mv(a, tessera.ones(2, device=device)),
        lambda: tessera.outer(a, a),
        lambda: tessera.addmm(tessera.ones(3, 3, device=device), a, a.t()),
        lambda: tessera.addbmm(tessera.ones(2, 2, device=device), a, a),
        lambda: tessera.addbmm(tessera.ones(2, 2, device=device), a.unsqueeze(0),
                               a.unsqueeze(0)),
        lambda: tessera.addmv(tessera.ones(2, 2, device=device), a, tessera.ones(3, device=device)),
        lambda: tessera.addmv(tessera.ones(2, device=device), a, a),
        lambda: tessera.addr(tessera.ones(2, 2, device=device), a, a),
        lambda: a.addmv_(a, tessera.ones(3, device=device)),
        lambda: tessera.inner(a, tessera.ones(2, device=device)),
        lambda: tessera.tensordot(a, a, dims=([0], [1])),
        lambda: tessera.tensordot(a, a, dims=3),
    ]:
        with pytest.raises(ValueError):
            call()
    # Mixed or unsupported dtypes: TypeError.
    d = tessera.ones(3, 2, dtype=tessera.int64, device=device)
    with pytest.raises(TypeError):
        tessera.mm(a, d)
    with pytest.raises(TypeError):
        tessera.mm(a.bool(), a.t().bool())
    with pytest.raises(TypeError):
        tessera.linalg.vecdot(a, a.to(tessera.int32))
    with pytest.raises(TypeError):
        tessera.mm("a", a)
    # Dims out of range: IndexError.
    with pytest.raises(IndexError):
        tessera.tensordot(a, a, dims=([2], [0]))
    with pytest.raises(IndexError):
        tessera.linalg.vector_norm(a, dim=2)
    with pytest.raises(IndexError):
        tessera.linalg.cross(tessera.ones(3, device=device, dtype=f32),
                             tessera.ones(3, device=device), dim=1)
