"""tessera._foreach_* against a per-tensor NumPy loop, and the fused optimizer
steps (_fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_) against a
NumPy implementation of the same update, on every device. Plain lists (one
device, one floating dtype, one shape per entry) take the multi-tensor
route; integer, mixed, broadcast and aliased lists the per-entry one; both
must give NumPy's values."""

import math

import numpy as np
import pytest
import tessera

NUMPY_DTYPES = {tessera.float32: np.float32, tessera.float64: np.float64,
                tessera.float16: np.float16, tessera.int64: np.int64, tessera.int32: np.int32}
SHAPES = [(2, 3), (5,), (1, 4, 2)]


def require(device, dtype_name):
    props = tessera.get_device_properties(device)
    needs = {"float64": "supports_float64", "float16": "supports_float16",
             "int64": "supports_int64"}.get(dtype_name)
    if needs and not props[needs]:
        pytest.skip(f"{device} has no {dtype_name}")


def dev(array, device):
    array = np.asarray(array)
    return tessera.tensor(array.tolist(), dtype=getattr(tessera, str(array.dtype)), device=device)


def npy(t):
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPES[t.dtype]).reshape(tuple(t.shape))


def arrays(dtype="float32", seed=0, low=0.5, high=2.0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(dtype) for s in shapes]


def check_list(got, expected, rtol=1e-6, atol=1e-6):
    assert isinstance(got, list) and len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert tuple(g.shape) == e.shape
        assert NUMPY_DTYPES[g.dtype] == e.dtype, (g.dtype, e.dtype)
        np.testing.assert_allclose(npy(g).astype(np.float64), e.astype(np.float64), rtol=rtol,
                                   atol=atol)


def both_forms(device, name, a, args, expected, rtol=1e-6, **kwargs):
    """name (new tensors) and name_ (in place, None, self written)."""
    xs = [dev(x, device) for x in a]
    check_list(getattr(tessera, name)(xs, *args, **kwargs), expected, rtol=rtol)
    check_list(xs, a)  # inputs untouched
    assert getattr(tessera, name + "_")(xs, *args, **kwargs) is None
    check_list(xs, [np.asarray(e).astype(x.dtype) for e, x in zip(expected, a)], rtol=rtol)


# -- add, sub, mul, div.

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_ops(device, dtype):
    require(device, dtype)
    a, b = arrays(dtype, 0), arrays(dtype, 1)
    for name, fn in BINARY.items():
        op = f"_foreach_{name}"
        ys = [dev(y, device) for y in b]
        if name in ("add", "sub"):
            both_forms(device, op, a, (ys,), [fn(x, 2 * y) for x, y in zip(a, b)], alpha=2)
        both_forms(device, op, a, (ys,), [fn(x, y) for x, y in zip(a, b)])
        both_forms(device, op, a, (1.5,), [fn(x, x.dtype.type(1.5)) for x in a])
        both_forms(device, op, a, (3,), [fn(x, x.dtype.type(3)) for x in a])
        scalars = [1.5, -2, 0.25]
        both_forms(device, op, a, (scalars,),
                   [fn(x, x.dtype.type(s)) for x, s in zip(a, scalars)])
        if name != "sub":
            for where in (device, tessera.host_device()):
                zero_d = tessera.tensor(0.75, dtype=getattr(tessera, dtype), device=where)
                extra = {"alpha": -1} if name == "add" else {}
                factor = -1 if name == "add" else 1
                both_forms(device, op, a, (zero_d,),
                           [fn(x, x.dtype.type(0.75 * factor)) for x in a], **extra)


def test_float16_lists(device):
    require(device, "float16")
    a = arrays("float16", 2)
    ref = [x.astype(np.float32) for x in a]
    # 0.5 is exact in float16 (multi-tensor route); 0.1 is not (per entry,
    # the number kept as the single ops keep it). Both compute in float32.
    for value in (0.5, 0.1):
        expected = [(r * np.float32(value)).astype(np.float16) for r in ref]
        both_forms(device, "_foreach_mul", a, (value,), expected, rtol=1e-3)
        expected = [(r + np.float32(value)).astype(np.float16) for r in ref]
        both_forms(device, "_foreach_add", a, (value,), expected, rtol=1e-3)


def test_per_entry_route(device):
    # Integer lists promote as the single ops do.
    ints = [np.arange(6, dtype=np.int64).reshape(2, 3), np.array([5, -3], dtype=np.int64)]
    xs = [dev(x, device) for x in ints]
    check_list(tessera._foreach_add(xs, 2), [x + 2 for x in ints])
    check_list(tessera._foreach_mul(xs, 1.5), [(x * 1.5).astype(np.float32) for x in ints])
    check_list(tessera._foreach_sqrt(xs[:1]), [np.sqrt(ints[0]).astype(np.float32)], rtol=1e-6)
    with pytest.raises(TypeError):
        tessera._foreach_mul_(xs, 1.5)  # float results cannot be written into int64
    # Mixed dtypes and broadcasting.
    a = [np.ones((2, 3), np.float32), np.full((2,), 2.0, np.float64)]
    b = [np.arange(3, dtype=np.float32), np.array([1.0, 2.0], np.float64)]
    both_forms(device, "_foreach_sub", a, ([dev(y, device) for y in b],),
               [x - y for x, y in zip(a, b)])
    # An in-place list naming one tensor twice runs entry by entry, in order.
    w = dev(np.array([1.0, 2.0], np.float32), device)
    assert tessera._foreach_add_([w, w], 1.0) is None
    assert w.cpu().tolist() == [3.0, 4.0]
    tessera._foreach_mul_([w, w], [2.0, 3.0])
    assert w.cpu().tolist() == [18.0, 24.0]
    # Entries whose output partly overlaps its own input fail as the single op does.
    base = dev(np.arange(4, dtype=np.float32), device)
    with pytest.raises(ValueError, match="single memory location"):
        tessera._foreach_add_([base[0:3]], [base[1:4]])


# -- maximum, minimum, clamp_min, clamp_max, pow, lerp, addcmul, addcdiv.

def test_extrema(device):
    a, b = arrays("float32", 3), arrays("float32", 4)
    a[0][0, 1] = np.nan
    ys = [dev(y, device) for y in b]
    # NaN propagates through the list forms and through clamping.
    for name, fn in [("maximum", np.maximum), ("minimum", np.minimum),
                     ("clamp_min", np.maximum), ("clamp_max", np.minimum)]:
        op = f"_foreach_{name}"
        both_forms(device, op, a, (ys,), [fn(x, y) for x, y in zip(a, b)])
        both_forms(device, op, a, (1.0,), [fn(x, np.float32(1.0)) for x in a])
        both_forms(device, op, a, ([0.8, 1.2, 1.9],),
                   [fn(x, np.float32(s)) for x, s in zip(a, [0.8, 1.2, 1.9])])


def test_pow_lerp_addc(device):
    a, b, c = arrays("float32", 5), arrays("float32", 6), arrays("float32", 7)
    ys = [dev(y, device) for y in b]
    zs = [dev(z, device) for z in c]
    both_forms(device, "_foreach_pow", a, (ys,), [x ** y for x, y in zip(a, b)], rtol=1e-5)
    both_forms(device, "_foreach_pow", a, (2,), [x ** 2 for x in a], rtol=1e-5)
    both_forms(device, "_foreach_pow", a, ([0.5, 3, -1.0],),
               [x ** np.float32(e) for x, e in zip(a, [0.5, 3, -1.0])], rtol=1e-5)
    check_list(tessera._foreach_pow(2.0, ys), [np.float32(2.0) ** y for y in b], rtol=1e-5)
    lerp = [x + w * (y - x) for x, y, w in zip(a, b, c)]
    both_forms(device, "_foreach_lerp", a, (ys, zs), lerp, rtol=1e-5)
    both_forms(device, "_foreach_lerp", a, (ys, 0.25),
               [x + np.float32(0.25) * (y - x) for x, y in zip(a, b)], rtol=1e-5)
    both_forms(device, "_foreach_lerp", a, (ys, [0.0, 0.5, 1.0]),
               [x + np.float32(w) * (y - x) for x, y, w in zip(a, b, [0.0, 0.5, 1.0])], rtol=1e-5)
    for name, fn in [("addcmul", np.multiply), ("addcdiv", np.divide)]:
        op = f"_foreach_{name}"
        both_forms(device, op, a, (ys, zs), [x + fn(y, z) for x, y, z in zip(a, b, c)], rtol=1e-5)
        both_forms(device, op, a, (ys, zs, 0.5),
                   [x + np.float32(0.5) * fn(y, z) for x, y, z in zip(a, b, c)], rtol=1e-5)
        values = [2.0, -1.0, 0.5]
        expected = [x + np.float32(v) * fn(y, z) for x, y, z, v in zip(a, b, c, values)]
        both_forms(device, op, a, (ys, zs, values), expected, rtol=1e-5)
        both_forms(device, op, a, (ys, zs, tessera.tensor(values)), expected, rtol=1e-5)


UNARY = {
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": np.reciprocal, "exp": np.exp,
    "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "erf": np.vectorize(math.erf), "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "trunc": np.trunc,
}


def test_unary_ops(device):
    a = arrays("float32", 8, low=0.05, high=0.95)
    a[1] = a[1] * 6 - 3  # signs and integer parts for neg, abs, sign, floor, ...
    for name, fn in UNARY.items():
        inputs = [a[0], a[2]] if name in ("sqrt", "rsqrt", "log", "log2", "log10", "log1p",
                                          "asin", "acos") else a
        both_forms(device, f"_foreach_{name}", inputs, (),
                   [fn(x.astype(np.float64)).astype(np.float32) for x in inputs], rtol=1e-5)


def test_zero_copy_norm(device):
    a = arrays("float32", 9)
    xs = [dev(x, device) for x in a]
    check_list(tessera._foreach_norm(xs), [np.float32(np.linalg.norm(x)) for x in a], rtol=1e-5)
    check_list(tessera._foreach_norm(xs, 1), [np.float32(np.abs(x).sum()) for x in a], rtol=1e-5)
    check_list(tessera._foreach_norm(xs, ord=math.inf), [np.float32(np.abs(x).max()) for x in a])
    if tessera.get_device_properties(device)["supports_float64"]:
        check_list(tessera._foreach_norm(xs, dtype=tessera.float64),
                   [np.linalg.norm(x.astype(np.float64)) for x in a], rtol=1e-6)
    # From float64 tensors on the host: cast and copied across devices.
    sources = [tessera.tensor((x * 3).tolist(), dtype=tessera.float64) for x in a]
    assert tessera._foreach_copy_(xs, sources) is None
    check_list(xs, [x * 3 for x in a], rtol=1e-6)
    assert tessera._foreach_zero_(xs) is None
    check_list(xs, [np.zeros_like(x) for x in a])


def test_errors(device):
    xs = [dev(x, device) for x in arrays()]
    with pytest.raises(ValueError, match="expected 3 tensors in other"):
        tessera._foreach_add(xs, xs[:2])
    with pytest.raises(ValueError, match="expected 3 numbers in scalars"):
        tessera._foreach_mul_(xs, [1.0, 2.0])
    with pytest.raises(ValueError, match="non-empty"):
        tessera._foreach_neg([])
    with pytest.raises(TypeError):
        tessera._foreach_neg(xs[0])  # a tensor is not a list of tensors
    with pytest.raises(ValueError, match="0-d tensor"):
        tessera._foreach_mul(xs, xs[1])
    with pytest.raises(ValueError):
        tessera._foreach_copy_(xs, xs[:1])


# -- Fused optimizer steps.

def adam_reference(p, g, m, v, vmax, step, lr, beta1, beta2, weight_decay, eps, amsgrad,
                   maximize, decoupled, grad_scale=None):
    p, g, m, v, vmax = (x.astype(np.float64) for x in (p, g, m, v, vmax))
    if grad_scale is not None:
        g = g / grad_scale
    written_grad = g
    if maximize:
        g = -g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m = m + (1 - beta1) * (g - m)
    v = beta2 * v + (1 - beta2) * g * g
    second = v
    if amsgrad:
        vmax = np.maximum(vmax, v)
        second = vmax
    denom = np.sqrt(second) / math.sqrt(1 - beta2 ** step) + eps
    p = p - lr / (1 - beta1 ** step) * m / denom
    return p, written_grad, m, v, vmax


def state_lists(device, seed, dtype="float32"):
    """Three parameters (one non-contiguous) and matching state."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4, 3), (5,)]
    out = []
    for _ in range(5):  # params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs
        arrays_k = [rng.uniform(0.1, 1.0, s).astype(dtype) for s in shapes]
        tensors = [dev(x, device) for x in arrays_k]
        # The second entry as the transpose of a contiguous tensor.
        arrays_k[1] = arrays_k[1].T.copy()
        tensors[1] = tensors[1].t()
        out.append((arrays_k, tensors))
    return out


@pytest.mark.parametrize("variant", ["adam", "adamw_amsgrad", "adam_maximize_scaled"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_adam(device, variant, dtype):
    require(device, dtype)
    decoupled = variant.startswith("adamw")
    amsgrad = "amsgrad" in variant
    maximize = "maximize" in variant
    grad_scale = 4.0 if "scaled" in variant else None
    hyper = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8)
    arrays_, tensors = zip(*state_lists(device, 10, dtype))
    steps = [3.0, tessera.tensor(3.0), tessera.tensor([3.0], dtype=tessera.float64)]
    fn = tessera._fused_adamw_ if decoupled else tessera._fused_adam_
    result = fn(*tensors, steps, lr=tessera.tensor(hyper["lr"]), beta1=hyper["beta1"],
                beta2=hyper["beta2"], weight_decay=hyper["weight_decay"], eps=hyper["eps"],
                amsgrad=amsgrad, maximize=maximize,
                grad_scale=None if grad_scale is None else dev(np.float32(grad_scale), device))
    assert result is None
    rtol = 1e-5 if dtype == "float32" else 1e-10
    for i in range(3):
        expected = adam_reference(*(lst[i] for lst in arrays_), 3.0, **hyper, amsgrad=amsgrad,
                                  maximize=maximize, decoupled=decoupled, grad_scale=grad_scale)
        for k, e in enumerate(expected):
            if k == 4 and not amsgrad:
                e = arrays_[4][i]
            np.testing.assert_allclose(npy(tensors[k][i]), e, rtol=rtol, atol=1e-7,
                                       err_msg=f"list {k} entry {i}")


def test_fused_adam_found_inf_and_errors(device):
    lists = state_lists(device, 11)
    arrays_, tensors = zip(*lists)
    args = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                maximize=False)
    tessera._fused_adam_(*tensors, [1, 1, 1], found_inf=tessera.tensor([1.0]), **args)
    for lst_arrays, lst_tensors in zip(arrays_, tensors):
        for a, t in zip(lst_arrays, lst_tensors):
            np.testing.assert_array_equal(npy(t), a)  # skipped entirely
    with pytest.raises(ValueError, match="grads"):
        tessera._fused_adam_(tensors[0], tensors[1][:2], *tensors[2:], [1, 1, 1], **args)
    with pytest.raises(ValueError, match="state_steps"):
        tessera._fused_adam_(*tensors, [1, 1], **args)
    ints = [tessera.ones(2, dtype=tessera.int64, device=device)]
    with pytest.raises(TypeError, match="floating"):
        tessera._fused_adam_(ints, ints, ints, ints, [], [1], **args)


def sgd_reference(p, g, buf, lr, weight_decay, momentum, dampening, nesterov, maximize, first):
    p, g, buf = (x.astype(np.float64) for x in (p, g, buf))
    if maximize:
        g = -g
    g = g + weight_decay * p
    if momentum:
        buf = g if first else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return p - lr * g, buf


@pytest.mark.parametrize("first,nesterov,maximize", [(True, False, False), (False, True, False),
                                                     (False, False, True)])
def test_fused_sgd(device, first, nesterov, maximize):
    lists = state_lists(device, 12)
    (params_a, params), (grads_a, grads), (bufs_a, bufs) = lists[:3]
    hyper = dict(lr=0.05, weight_decay=0.01, momentum=0.9, dampening=0.1, nesterov=nesterov,
                 maximize=maximize)
    assert tessera._fused_sgd_(params, grads, bufs, is_first_step=first, **hyper) is None
    for i in range(3):
        p, buf = sgd_reference(params_a[i], grads_a[i], bufs_a[i], first=first, **hyper)
        np.testing.assert_allclose(npy(params[i]), p, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(npy(bufs[i]), buf, rtol=1e-5, atol=1e-7)
    # Without momentum the buffer list may be empty.
    hyper.update(momentum=0.0)
    before = [npy(p) for p in params]
    tessera._fused_sgd_(params, grads, [], is_first_step=False, **hyper)
    for i in range(3):
        p, _ = sgd_reference(before[i], grads_a[i], bufs_a[i], first=False, **hyper)
        np.testing.assert_allclose(npy(params[i]), p, rtol=1e-5, atol=1e-7)


def test_fused_adagrad(device):
    lists = state_lists(device, 13)
    (params_a, params), (grads_a, grads), (sums_a, sums) = lists[:3]
    lr, lr_decay, weight_decay, eps, step = 0.1, 0.01, 0.05, 1e-10, 4.0
    tessera._fused_adagrad_(params, grads, sums, [step] * 3, lr=lr, lr_decay=lr_decay,
                            weight_decay=weight_decay, eps=eps, maximize=True,
                            grad_scale=tessera.tensor(2.0, device=device))
    for i in range(3):
        g = grads_a[i].astype(np.float64) / 2.0
        np.testing.assert_allclose(npy(grads[i]), g, rtol=1e-6)  # written back unscaled
        g = -g + weight_decay * params_a[i]
        total = sums_a[i] + g * g
        clr = lr / (1 + (step - 1) * lr_decay)
        p = params_a[i] - clr * g / (np.sqrt(total) + eps)
        np.testing.assert_allclose(npy(sums[i]), total, rtol=1e-5)
        np.testing.assert_allclose(npy(params[i]), p, rtol=1e-5, atol=1e-7)


# -- Gradient scaling (mixed-precision training's GradScaler steps).
@pytest.mark.parametrize("poison", [None, math.inf, math.nan], ids=str)
def test_amp_unscale_and_check_against_numpy(device, poison):
    grads = arrays(seed=11, low=-1e4, high=1e4)
    if poison is not None:
        grads[1].reshape(-1)[2] = poison
    inv_scale = np.float32(1.0 / 3.0)
    ts = [dev(g, device) for g in grads]
    found = tessera.zeros([1], device=device)
    tessera._amp_foreach_non_finite_check_and_unscale_(
        ts, found, tessera.full([], float(inv_scale), device=device))
    assert found.item() == (0.0 if poison is None else 1.0)
    for t, g in zip(ts, grads):
        np.testing.assert_array_equal(npy(t), g * inv_scale)


def test_amp_update_scale_against_a_python_model(device):
    scale = tessera.full([], 1024.0, device=device)
    tracker = tessera.zeros([1], dtype=tessera.int32, device=device)
    want_scale, want_tracker = 1024.0, 0
    for bad in [0, 0, 1, 0, 0, 0, 1, 0]:
        tessera._amp_update_scale_(scale, tracker, tessera.full([1], float(bad), device=device),
                                   2.0, 0.5, 2)
        if bad:
            want_scale, want_tracker = want_scale * 0.5, 0
        elif want_tracker + 1 == 2:
            want_scale, want_tracker = want_scale * 2.0, 0
        else:
            want_tracker += 1
        assert (scale.item(), tracker.item()) == (want_scale, want_tracker)
    with pytest.raises(TypeError, match="growth_tracker must be int32"):
        tessera._amp_update_scale_(scale, tessera.zeros([1], dtype=tessera.int64, device=device),
                                   tessera.zeros([1], device=device), 2.0, 0.5, 2)
