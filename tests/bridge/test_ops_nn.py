"""Native tessera kernels for linear algebra, normalization and nn ops,
forward and backward, compared with torch on CPU.

Each test checks that the ops it is about did not go through the CPU
fallback; ops outside this file's scope that a composite or a backward
formula touches (pointwise ops, for instance) may still be served by it.
"""

import copy
import time
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import torch_tessera

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def tol(dtype):
    if dtype == torch.float16:
        return dict(rtol=5e-3, atol=5e-3)
    if dtype == torch.bfloat16:
        return dict(rtol=3e-2, atol=3e-2)
    if dtype == torch.float32:
        return dict(rtol=1e-4, atol=1e-5)
    return {}


def make(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def assert_native(*ops):
    used = torch_tessera.fallback_stats()
    hit = [k for k in used if k.split(".")[0] in {"aten::" + op for op in ops}]
    assert not hit, f"CPU fallback served {hit}"


def run_both(fn, inputs, dev, grad=True, **kw):
    """fn(*inputs) on CPU and tessera; compares outputs and input grads."""
    cpu_in = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    dev_in = [x.to(dev).requires_grad_(grad and x.is_floating_point()) for x in inputs]
    out_c, out_t = fn(*cpu_in), fn(*dev_in)
    outs_c = out_c if isinstance(out_c, tuple) else (out_c,)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    for c, t in zip(outs_c, outs_t):
        assert t.device.type == "tessera"
        assert_close(t.detach().cpu(), c.detach(), **kw)
    if grad:
        w = make(tuple(outs_c[0].shape), outs_c[0].dtype, seed=99)
        (outs_c[0] * w).sum().backward()
        (outs_t[0] * w.to(dev)).sum().backward()
        for c, t in zip(cpu_in, dev_in):
            if c.requires_grad:
                assert_close(t.grad.cpu(), c.grad, **kw)
    return out_t


# -- linear algebra ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_mm_bmm_addmm_baddbmm(tessera, dtype):
    a, b = make((3, 4), dtype), make((4, 5), dtype, 1)
    run_both(torch.mm, [a, b], tessera, grad=dtype == torch.float64, **tol(dtype))
    run_both(lambda x, y: torch.mm(x.t(), y.t()), [make((4, 3), dtype), make((5, 4), dtype)],
             tessera, **tol(dtype))
    run_both(torch.bmm, [make((2, 3, 4), dtype), make((2, 4, 5), dtype, 1)], tessera, **tol(dtype))
    run_both(lambda s, x, y: torch.addmm(s, x, y, beta=0.5, alpha=2), [make((5,), dtype), a, b],
             tessera, **tol(dtype))
    run_both(lambda s, x, y: torch.baddbmm(s, x, y, beta=0.5, alpha=2),
             [make((2, 3, 5), dtype), make((2, 3, 4), dtype), make((2, 4, 5), dtype, 1)],
             tessera, **tol(dtype))
    assert_native("mm", "bmm", "addmm", "baddbmm")


def test_batched_products_noncontiguous_and_broadcast(tessera):
    run_both(lambda a, b: torch.bmm(a.transpose(1, 2), b.transpose(0, 1)),
             [make((2, 4, 3)), make((4, 2, 5), seed=1)], tessera, **tol(torch.float32))
    run_both(torch.baddbmm, [make((5,)), make((2, 3, 4)), make((2, 4, 5), seed=1)], tessera,
             **tol(torch.float32))
    run_both(torch.addmm, [make(()), make((3, 4)), make((4, 5), seed=1)], tessera,
             **tol(torch.float32))
    assert_native("bmm", "baddbmm", "addmm")


def _busy_wait(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@pytest.mark.parametrize("shape", [(512, 32, 64), (64, 512, 32), (10, 384, 384), (384, 200, 20)])
@pytest.mark.parametrize("transposed", [(False, False), (True, False), (False, True)])
def test_small_products_same_bits_split_or_not(tessera, shape, transposed):
    # Products near the CPU device's split threshold (2^21 multiply-adds,
    # devices/cpu/kernels/gemm_dnnl.cc), back to back (workers awake) and
    # after a pause (asleep): the bits must not depend on the timing. A
    # split once depended on it, and oneDNN's AVX2 sgemm sums a split
    # product in another order than the whole.
    m, k, n = shape
    g = torch.Generator().manual_seed(7)
    a = torch.randn(k, m, generator=g).t() if transposed[0] else torch.randn(m, k, generator=g)
    b = torch.randn(n, k, generator=g).t() if transposed[1] else torch.randn(k, n, generator=g)
    at, bt = a.to(tessera), b.to(tessera)
    for _ in range(3):
        at @ bt
    back_to_back = (at @ bt).cpu()
    _busy_wait(0.002)
    after_pause = (at @ bt).cpu()
    assert torch.equal(back_to_back, after_pause)
    # Sums of k products of unit normals: a few ulps of sqrt(k) apart.
    assert_close(after_pause, a @ b, rtol=1e-4, atol=4e-6 * k ** 0.5)


def test_matmul_out_and_inplace(tessera):
    a, b = make((3, 4)), make((4, 5), seed=1)
    at, bt = a.to(tessera), b.to(tessera)
    out = torch.empty(0, device=tessera)
    torch.mm(at, bt, out=out)
    assert_close(out.cpu(), a @ b, **tol(torch.float32))
    s = make((3, 5), seed=2)
    st = s.to(tessera)
    st.addmm_(at, bt, beta=2)
    assert_close(st.cpu(), s.clone().addmm_(a, b, beta=2), **tol(torch.float32))
    nan_self = torch.full((3, 5), float("nan"), device=tessera)
    assert_close(torch.addmm(nan_self, at, bt, beta=0).cpu(), a @ b, **tol(torch.float32))
    bs = make((2, 3, 5), seed=3)
    bst = bs.to(tessera)
    bst.baddbmm_(make((2, 3, 4)).to(tessera), make((2, 4, 5)).to(tessera))
    assert_close(bst.cpu(), bs.baddbmm(make((2, 3, 4)), make((2, 4, 5))), **tol(torch.float32))
    assert_native("mm", "addmm", "baddbmm")


def _out_layouts(shape, dev):
    """out= tensors a compiled graph or a user may pass: preallocated
    row-major (written directly), transposed (strided, also direct), empty
    (resized first) and wrongly sized (resized, with torch's warning)."""
    n = len(shape)
    return {
        "preallocated": torch.full(shape, 7.0, device=dev),
        "transposed": torch.full(shape[:-2] + shape[-1:] + shape[-2:-1], 7.0,
                                 device=dev).transpose(n - 2, n - 1),
        "empty": torch.empty(0, device=dev),
        "wrong size": torch.full((1,), 7.0, device=dev),
    }


@pytest.mark.parametrize("layout", ["preallocated", "transposed", "empty", "wrong size"])
def test_product_out_forms(tessera, layout):
    """mm/bmm/addmm/baddbmm with out=: the runtime writes a fitting out
    directly; every layout gives torch CPU's values, beta and alpha included."""
    a, b, s = make((3, 4)), make((4, 5), seed=1), make((5,), seed=2)
    ba, bb, bs = make((2, 3, 4)), make((2, 4, 5), seed=1), make((3, 5), seed=2)
    cases = [
        (lambda x, y, out: torch.mm(x, y, out=out), (a, b), (3, 5)),
        (lambda x, y, out: torch.bmm(x, y, out=out), (ba, bb), (2, 3, 5)),
        (lambda z, x, y, out: torch.addmm(z, x, y, beta=0.5, alpha=2, out=out), (s, a, b), (3, 5)),
        (lambda z, x, y, out: torch.addmm(z, x, y, out=out), (s, a, b), (3, 5)),
        (lambda z, x, y, out: torch.baddbmm(z, x, y, beta=2, alpha=0.5, out=out), (bs, ba, bb),
         (2, 3, 5)),
    ]
    for fn, args, shape in cases:
        expected = fn(*args, out=torch.empty(shape))
        out = _out_layouts(shape, tessera)[layout]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the resize warning of "wrong size"
            result = fn(*(t.to(tessera) for t in args), out=out)
        assert result is out
        assert out.shape == shape
        assert_close(out.cpu(), expected, **tol(torch.float32))
    assert_native("mm", "bmm", "addmm", "baddbmm")


def test_product_out_aliasing_an_input(tessera):
    """out that is also an operand (addmm's self, or a matrix) takes the
    general path: the result is as if computed first, then written."""
    a, s = make((4, 4)), make((4, 4), seed=1)
    at, st = a.to(tessera), s.to(tessera)
    torch.addmm(st, at, at, beta=0.5, out=st)
    assert_close(st.cpu(), torch.addmm(s, a, a, beta=0.5), **tol(torch.float32))
    torch.mm(at, at, out=at)
    assert_close(at.cpu(), a @ a, **tol(torch.float32))
    c, m = make((4, 4), seed=2), make((4, 4), seed=3)
    ct = c.to(tessera)
    torch.mm(ct[:, :2].T, m.to(tessera), out=ct[2:, :])  # out overlaps its first operand
    assert_close(ct[2:, :].cpu(), c[:, :2].T @ m, **tol(torch.float32))
    assert_native("mm", "addmm")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dot_mv_addmv_linear_matmul(tessera, dtype):
    run_both(torch.dot, [make((5,), dtype), make((5,), dtype, 1)], tessera, **tol(dtype))
    run_both(torch.vdot, [make((5,), dtype), make((5,), dtype, 1)], tessera, **tol(dtype))
    run_both(torch.mv, [make((3, 5), dtype), make((5,), dtype, 1)], tessera, **tol(dtype))
    run_both(lambda s, m, v: torch.addmv(s, m, v, beta=0.5, alpha=3),
             [make((3,), dtype), make((3, 5), dtype), make((5,), dtype, 1)], tessera, **tol(dtype))
    run_both(lambda s, m, v: torch.addmv(s, m, v), [make((1,), dtype), make((3, 5), dtype),
                                                   make((5,), dtype, 1)], tessera, **tol(dtype))
    run_both(F.linear, [make((2, 3, 5), dtype), make((4, 5), dtype), make((4,), dtype)], tessera,
             **tol(dtype))
    run_both(torch.matmul, [make((2, 1, 3, 5), dtype), make((4, 5, 2), dtype)], tessera,
             **tol(dtype))
    run_both(torch.outer, [make((3,), dtype), make((4,), dtype)], tessera, grad=False)
    assert_native("mm", "bmm", "addmm", "dot", "vdot", "mv", "addmv")


def test_addmv_inplace_and_out(tessera):
    s, m, v = make((3,)), make((3, 5)), make((5,), seed=1)
    st = s.to(tessera)
    st.addmv_(m.to(tessera), v.to(tessera), beta=2)
    assert_close(st.cpu(), s.clone().addmv_(m, v, beta=2), **tol(torch.float32))
    out = torch.empty(0, device=tessera)
    torch.mv(m.to(tessera), v.to(tessera), out=out)
    assert_close(out.cpu(), m @ v, **tol(torch.float32))
    assert_native("mv", "addmv")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_matmul(tessera, dtype):
    a = torch.randint(-5, 5, (3, 4), dtype=dtype)
    b = torch.randint(-5, 5, (4, 2), dtype=dtype)
    run_both(torch.mm, [a, b], tessera, grad=False)
    run_both(torch.bmm, [a[None], b[None]], tessera, grad=False)
    run_both(lambda s, x, y: torch.addmm(s, x, y, beta=2, alpha=3), [b[:1, :], a, b], tessera,
             grad=False)
    assert_native("mm", "bmm", "addmm")


def test_matmul_dtype_and_device_errors(tessera):
    a = torch.ones(2, 3, device=tessera)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.mm(a, a.t(), out=torch.empty(0, device=tessera, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="dtype"):
        torch.ops.aten._softmax.out(a, 0, False,
                                    out=torch.empty(0, device=tessera, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="mm"):
        torch.mm(a, torch.ones(3, 2, device=tessera, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="device"):
        torch.mm(a, torch.ones(3, 2))
    with pytest.raises(RuntimeError, match="mm"):
        torch.mm(a.bool(), a.bool().t())


def test_mm_shape_errors_name_shapes(tessera):
    a, b = torch.ones(2, 3, device=tessera), torch.ones(4, 5, device=tessera)
    # RuntimeError, as CPU torch (the bridge maps the runtime's ValueError).
    with pytest.raises(RuntimeError, match=r"mm.*\[2, 3\].*\[4, 5\]"):
        torch.mm(a, b)
    with pytest.raises(RuntimeError, match="bmm"):
        torch.bmm(torch.ones(2, 2, 3, device=tessera), torch.ones(3, 3, 4, device=tessera))
    with pytest.raises(RuntimeError, match="dot"):
        torch.dot(torch.ones(3, device=tessera), torch.ones(4, device=tessera))


# -- softmax ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax(tessera, dtype, fn):
    x = make((3, 4, 5), dtype) * 3
    for dim in (0, -1, 1):
        run_both(lambda t: fn(t, dim), [x], tessera, **tol(dtype))
    run_both(lambda t: fn(t.transpose(0, 2), 1), [x], tessera, **tol(dtype))
    run_both(lambda t: fn(t, 0), [make((0, 4), dtype)], tessera, grad=False)
    run_both(lambda t: fn(t, 1, dtype=torch.float64), [x], tessera, grad=False, **tol(dtype))
    assert_native("_softmax", "_log_softmax", "_softmax_backward_data",
                  "_log_softmax_backward_data")


def test_softmax_half_to_float(tessera):
    x = make((3, 4), torch.float16)
    out = torch.ops.aten._softmax(x.to(tessera), 1, True)
    assert out.dtype == torch.float32
    assert_close(out.cpu(), torch.softmax(x.float(), 1), rtol=1e-3, atol=1e-3)


# -- layer norm / batch norm ------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm(tessera, dtype):
    x = make((2, 3, 8), dtype)
    w, b = make((8,), dtype, 1), make((8,), dtype, 2)
    run_both(lambda t, ww, bb: F.layer_norm(t, (8,), ww, bb), [x, w, b], tessera, **tol(dtype))
    run_both(lambda t: F.layer_norm(t, (3, 8)), [x], tessera, **tol(dtype))
    run_both(lambda t, ww: F.layer_norm(t.transpose(0, 1), (8,), ww, eps=1e-3), [x, w], tessera,
             **tol(dtype))
    assert_native("native_layer_norm", "native_layer_norm_backward", "native_batch_norm")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_module(tessera, dtype, training):
    torch.manual_seed(0)
    ref = torch.nn.BatchNorm2d(3, dtype=dtype)
    with torch.no_grad():
        ref.weight.copy_(make((3,), dtype, 1))
        ref.bias.copy_(make((3,), dtype, 2))
        ref.running_mean.copy_(make((3,), dtype, 3))
        ref.running_var.copy_(make((3,), dtype, 4).abs() + 0.5)
    mod = torch.nn.BatchNorm2d(3, dtype=dtype).to(tessera)
    mod.load_state_dict(ref.state_dict())
    ref.train(training)
    mod.train(training)
    x = make((4, 3, 5, 5), dtype) * 2 + 1
    xc, xt = x.clone().requires_grad_(), x.to(tessera).requires_grad_()
    yc, yt = ref(xc), mod(xt)
    assert_close(yt.detach().cpu(), yc.detach(), **tol(dtype))
    w = make((4, 3, 5, 5), dtype, 5)
    (yc * w).sum().backward()
    (yt * w.to(tessera)).sum().backward()
    assert_close(xt.grad.cpu(), xc.grad, **tol(dtype))
    assert_close(mod.weight.grad.cpu(), ref.weight.grad, **tol(dtype))
    assert_close(mod.bias.grad.cpu(), ref.bias.grad, **tol(dtype))
    assert_close(mod.running_mean.cpu(), ref.running_mean, **tol(dtype))
    assert_close(mod.running_var.cpu(), ref.running_var, **tol(dtype))
    assert_native("native_batch_norm", "native_batch_norm_backward")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("training", [True, False])
def test_norms_low_precision_input_float_params(tessera, dtype, training):
    # Mixed precision as under autocast: half input, float32 parameters.
    x = make((4, 3, 5, 5), dtype)
    w, b, rm, rv = make((3,), seed=1), make((3,), seed=2), make((3,), seed=3), \
        make((3,), seed=4).abs() + 0.5
    run_both(lambda t, ww, bb: F.batch_norm(t, rm.to(t.device), rv.to(t.device), ww, bb,
                                            training=training),
             [x, w, b], tessera, grad=training, rtol=3e-2, atol=3e-2)
    run_both(lambda t, ww, bb: F.layer_norm(t, (5,), ww, bb), [x, make((5,)), make((5,), seed=1)],
             tessera, rtol=3e-2, atol=3e-2)
    assert_native("native_batch_norm", "native_batch_norm_backward", "native_layer_norm",
                  "native_layer_norm_backward")


def test_batch_norm_functional_variants(tessera):
    x = make((6, 4))
    rm, rv = torch.zeros(4), torch.ones(4)
    rmt, rvt = rm.to(tessera), rv.to(tessera)
    got = torch.ops.aten._native_batch_norm_legit(x.to(tessera), None, None, rmt, rvt, True, 0.2,
                                                  1e-5)
    exp = torch.ops.aten._native_batch_norm_legit(x, None, None, rm, rv, True, 0.2, 1e-5)
    for g, e in zip(got, exp):
        assert_close(g.cpu(), e)
    assert_close(rmt.cpu(), rm)
    assert_close(rvt.cpu(), rv)
    got = torch.ops.aten._native_batch_norm_legit.no_stats(x.to(tessera), None, None, True, 0.1,
                                                           1e-5)
    exp = torch.ops.aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)
    for g, e in zip(got, exp):
        assert_close(g.cpu(), e)
    run_both(lambda t: F.batch_norm(t, None, None, training=True), [make((5, 3, 7))], tessera)
    assert_native("native_batch_norm", "_native_batch_norm_legit", "native_batch_norm_backward")


def test_batch_norm_legit_no_training(tessera):
    x, rm, rv = make((6, 4)), make((4,), seed=1), make((4,), seed=2).abs() + 0.5
    w, b = make((4,), seed=3), make((4,), seed=4)
    got = torch.ops.aten._native_batch_norm_legit_no_training(
        x.to(tessera), w.to(tessera), b.to(tessera), rm.to(tessera), rv.to(tessera), 0.1, 1e-5)
    exp = torch.ops.aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
    assert_close(got[0].cpu(), exp[0], **tol(torch.float32))
    assert_native("native_batch_norm", "_native_batch_norm_legit")


def test_rms_norm_decomposition(tessera):
    # aten has no backend entry for rms_norm on PrivateUse1: it decomposes
    # (pointwise ops and mean); the reduction in it is native.
    run_both(lambda t, w: F.rms_norm(t, (8,), w, eps=1e-6), [make((3, 8), torch.float64),
                                                            make((8,), torch.float64, 1)],
             tessera)
    run_both(lambda t: F.rms_norm(t, (2, 8)), [make((3, 2, 8), torch.float64)], tessera)
    assert_native("mean", "sum")


# -- convolution -------------------------------------------------------------------------


CONV_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=2, dilation=2),
    dict(groups=2, padding=(1, 0)),
]


@pytest.mark.parametrize("kw", CONV_CASES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d(tessera, kw, dtype):
    x, w, b = make((2, 4, 7, 6), dtype), make((6, 4 // kw.get("groups", 1), 3, 3), dtype, 1), \
        make((6,), dtype, 2)
    run_both(lambda t, ww, bb: F.conv2d(t, ww, bb, **kw), [x, w, b], tessera, **tol(dtype))
    run_both(lambda t, ww: F.conv2d(t, ww, **kw), [x, w], tessera, **tol(dtype))
    assert_native("convolution_overrideable", "convolution_backward_overrideable")


# ResNet's layers (7x7 stride-2 stem, 3x3 blocks, 1x1 stride-2 downsample), the
# shapes the CPU device's oneDNN backward sees in training.
RESNET_CONVS = [
    ((2, 3, 32, 32), (8, 3, 7, 7), dict(stride=2, padding=3)),
    ((2, 8, 9, 9), (8, 8, 3, 3), dict(padding=1)),
    ((2, 8, 9, 9), (16, 8, 1, 1), dict(stride=2)),
    ((2, 8, 9, 9), (8, 1, 3, 3), dict(padding=1, groups=8)),
]


@pytest.mark.parametrize("xs, ws, kw", RESNET_CONVS, ids=str)
@pytest.mark.parametrize("wanted", ["input", "weight", "bias", "weight+bias", "all"])
def test_conv2d_backward_each_gradient(tessera, xs, ws, kw, wanted):
    """Each gradient alone and together (the kernel takes a mask of them),
    including a channels-last grad_out (a permuted, non-contiguous tensor)."""
    x, w, b = make(xs), make(ws, seed=1), make((ws[0],), seed=2)
    grads = {}
    for dev in ("cpu", tessera):
        xd, wd, bd = (t.detach().to(dev) for t in (x, w, b))
        for t, name in ((xd, "input"), (wd, "weight"), (bd, "bias")):
            t.requires_grad_(wanted == "all" or name in wanted.split("+"))
        out = F.conv2d(xd, wd, bd, **kw)
        g = make(tuple(out.shape), seed=3).to(dev).to(memory_format=torch.channels_last)
        out.backward(g)
        grads[dev] = [t.grad.cpu() if t.grad is not None else None for t in (xd, wd, bd)]
    for c, t in zip(grads["cpu"], grads[tessera]):
        assert (c is None) == (t is None)
        if c is not None:
            assert_close(t, c, rtol=1e-4, atol=1e-4)
    assert_native("convolution_overrideable", "convolution_backward_overrideable")


def test_conv2d_unbatched_and_noncontiguous(tessera):
    run_both(lambda t, ww: F.conv2d(t, ww, padding=1), [make((3, 5, 5)), make((2, 3, 3, 3))],
             tessera, **tol(torch.float32))
    run_both(lambda t, ww: F.conv2d(t.transpose(2, 3), ww), [make((1, 3, 6, 5)),
                                                             make((2, 3, 2, 2))],
             tessera, **tol(torch.float32))
    assert_native("convolution_overrideable", "convolution_backward_overrideable")


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, groups=2)], ids=str)
def test_conv1d(tessera, kw):
    run_both(lambda t, ww, bb: F.conv1d(t, ww, bb, **kw),
             [make((2, 4, 9)), make((6, 4 // kw.get("groups", 1), 3), seed=1),
              make((6,), seed=2)], tessera, **tol(torch.float32))
    assert_native("convolution_overrideable", "convolution_backward_overrideable")


@pytest.mark.parametrize(
    "kw", [dict(), dict(stride=2, padding=1, output_padding=1), dict(groups=2, dilation=2),
           # output_padding at or past the stride (allowed below the dilation)
           dict(stride=(3, 2), padding=(1, 2), output_padding=(2, 3), groups=2, dilation=4)],
    ids=str)
def test_conv_transpose2d(tessera, kw):
    groups = kw.get("groups", 1)
    run_both(lambda t, ww, bb: F.conv_transpose2d(t, ww, bb, **kw),
             [make((2, 4, 5, 4)), make((4, 6 // groups, 3, 3), seed=1), make((6,), seed=2)],
             tessera, **tol(torch.float32))
    run_both(lambda t, ww: F.conv_transpose1d(t, ww, stride=2),
             [make((2, 4, 5)), make((4, 3, 3), seed=1)], tessera, **tol(torch.float32))
    assert_native("convolution_overrideable", "convolution_backward_overrideable")


def test_convolution_beyond_3d_is_a_clear_error(tessera):
    x, w = torch.ones(1, 1, 3, 3, 3, 3, device=tessera), torch.ones(1, 1, 2, 2, 2, 2, device=tessera)
    with pytest.raises(NotImplementedError, match=r"1-D, 2-D and 3-D.*\[1, 1, 3, 3, 3, 3\]"):
        torch.ops.aten.convolution_overrideable(x, w, None, [1] * 4, [0] * 4, [1] * 4, False,
                                                [0] * 4, 1)


def test_conv2d_shape_error(tessera):
    x, w = torch.ones(1, 3, 5, 5, device=tessera), torch.ones(2, 4, 3, 3, device=tessera)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(x, w)


# -- pooling --------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, dilation=2, ceil_mode=True),
                                dict(kernel_size=(3, 2), stride=(2, 1), ceil_mode=True)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d(tessera, kw, dtype):
    out = run_both(lambda t: F.max_pool2d(t, return_indices=True, **kw),
                   [make((2, 3, 7, 8), dtype)], tessera, **tol(dtype))
    assert out[1].dtype == torch.int64
    run_both(lambda t: F.max_pool2d(t.transpose(1, 2), **kw), [make((3, 8, 7), dtype)], tessera,
             **tol(dtype))
    assert_native("max_pool2d_with_indices", "max_pool2d_with_indices_backward")


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=3, ceil_mode=True, divisor_override=5)],
                         ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_avg_pool2d(tessera, kw, dtype):
    run_both(lambda t: F.avg_pool2d(t, **kw), [make((2, 3, 7, 8), dtype)], tessera, **tol(dtype))
    run_both(lambda t: F.avg_pool2d(t, **kw), [make((3, 7, 8), dtype)], tessera, **tol(dtype))
    assert_native("avg_pool2d", "avg_pool2d_backward")


def test_pool_out_variants(tessera):
    x = make((1, 2, 6, 6))
    xt = x.to(tessera)
    out = torch.empty(0, device=tessera)
    idx = torch.empty(0, device=tessera, dtype=torch.long)
    torch.ops.aten.max_pool2d_with_indices.out(xt, [2, 2], [2, 2], [0, 0], [1, 1], False,
                                               out=out, indices=idx)
    ev, ei = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    assert_close(out.cpu(), ev)
    assert_close(idx.cpu(), ei)
    o2 = torch.empty(0, device=tessera)
    torch.ops.aten.avg_pool2d.out(xt, [2, 2], out=o2)
    assert_close(o2.cpu(), F.avg_pool2d(x, 2))
    assert_native("max_pool2d_with_indices", "avg_pool2d")


# -- embedding / losses -----------------------------------------------------------------


@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=1), dict(scale_grad_by_freq=True),
                                dict(padding_idx=0, scale_grad_by_freq=True)], ids=str)
def test_embedding_backward(tessera, kw):
    idx = torch.tensor([[0, 2, 2, 5], [1, 2, 0, 5]])
    wc = make((7, 3), torch.float64).requires_grad_()
    wt = wc.detach().to(tessera).requires_grad_()
    yc, yt = F.embedding(idx, wc, **kw), F.embedding(idx.to(tessera), wt, **kw)
    g = make(tuple(yc.shape), torch.float64, 1)
    yc.backward(g)
    yt.backward(g.to(tessera))
    assert_close(yt.detach().cpu(), yc.detach())
    assert_close(wt.grad.cpu(), wc.grad)
    assert_native("embedding_dense_backward")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_and_cross_entropy(tessera, reduction, weighted):
    x = make((6, 5), torch.float64)
    target = torch.tensor([0, 4, 2, -100, 1, 4])
    weight = make((5,), torch.float64, 3).abs() if weighted else None

    def loss(t, fn=F.nll_loss):
        tgt = target.to(t.device)
        w = weight.to(t.device) if weight is not None else None
        return fn(t.log_softmax(1), tgt, weight=w, reduction=reduction)

    run_both(loss, [x], tessera)
    target4 = torch.tensor([0, 4, 2, 3, 1, 4])
    run_both(lambda t: F.cross_entropy(t, target4.to(t.device), reduction=reduction,
                                       ignore_index=4), [x], tessera)
    assert_native("nll_loss_forward", "nll_loss_backward")


def test_nll_loss2d(tessera):
    x = make((2, 4, 3, 3), torch.float64)
    target = torch.randint(0, 4, (2, 3, 3), generator=torch.Generator().manual_seed(1))
    run_both(lambda t: F.cross_entropy(t, target.to(t.device)), [x], tessera)
    run_both(lambda t: F.nll_loss(t, target.to(t.device), reduction="none"), [x], tessera)
    assert_native("nll_loss2d_forward", "nll_loss2d_backward", "nll_loss_forward",
                  "nll_loss_backward")


def test_nll_loss_bad_target_errors(tessera):
    x = torch.zeros(3, 4, device=tessera)
    with pytest.raises(ValueError, match="batch_size"):  # raised by aten itself (nll_loss_nd)
        F.nll_loss(x, torch.tensor([0, 1], device=tessera))
    with pytest.raises(IndexError, match="out of bounds|target"):
        F.nll_loss(x, torch.tensor([0, 1, 7], device=tessera))


# -- attention ----------------------------------------------------------------------


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True), dict(scale=0.3)], ids=str)
def test_sdpa_math_path(tessera, kw):
    q, k, v = make((2, 3, 4, 8), torch.float64), make((2, 3, 6, 8), torch.float64, 1), \
        make((2, 3, 6, 5), torch.float64, 2)
    if kw.get("is_causal"):
        k, v = k[:, :, :4], v[:, :, :4]
    run_both(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kw), [q, k, v], tessera)
    assert_native("bmm", "_softmax", "_softmax_backward_data")


def test_sdpa_with_masks(tessera):
    q, k, v = make((2, 4, 8)), make((2, 5, 8), seed=1), make((2, 5, 3), seed=2)
    bool_mask = torch.rand(4, 5, generator=torch.Generator().manual_seed(3)) > 0.3
    bool_mask[:, 0] = True
    run_both(lambda a, b, c: F.scaled_dot_product_attention(a, b, c,
                                                            attn_mask=bool_mask.to(a.device)),
             [q, k, v], tessera, **tol(torch.float32))
    add_mask = make((4, 5), seed=4)
    run_both(lambda a, b, c: F.scaled_dot_product_attention(a, b, c,
                                                            attn_mask=add_mask.to(a.device)),
             [q, k, v], tessera, **tol(torch.float32))
    assert_native("bmm", "_softmax", "_softmax_backward_data")


# -- end to end ---------------------------------------------------------------------


def test_small_cnn_training_matches_cpu(tessera):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 4, 3), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 3),
    ).double()
    dev_model = copy.deepcopy(ref).to(tessera)
    opt_c = torch.optim.SGD(ref.parameters(), lr=0.1, foreach=False)
    opt_t = torch.optim.SGD(dev_model.parameters(), lr=0.1, foreach=False)
    x = make((8, 1, 8, 8), torch.float64)
    y = torch.randint(0, 3, (8,), generator=torch.Generator().manual_seed(5))
    def step(model, opt, dev):
        opt.zero_grad()
        loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(3):
        loss_c = step(ref, opt_c, "cpu")
        loss_t = step(dev_model, opt_t, tessera)
        assert loss_t == pytest.approx(loss_c, rel=1e-9, abs=1e-12)
    for pc, pt in zip(ref.parameters(), dev_model.parameters()):
        assert_close(pt.detach().cpu(), pc.detach())
    assert_native("convolution_overrideable", "convolution_backward_overrideable",
                  "native_batch_norm", "native_batch_norm_backward", "max_pool2d_with_indices",
                  "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
                  "addmm", "mm", "native_layer_norm", "native_layer_norm_backward",
                  "_log_softmax", "_log_softmax_backward_data", "nll_loss_forward",
                  "nll_loss_backward", "sum")


# -- mse_loss -------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_mse_loss_forward_and_backward(tessera, reduction, dtype):
    import warnings

    x, y = make((4, 6), dtype), make((4, 6), dtype, 1)
    xc = x.clone().requires_grad_()
    xt = x.to(tessera).requires_grad_()
    expected = F.mse_loss(xc, y, reduction=reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no resize warning from a fallback
        actual = F.mse_loss(xt, y.to(tessera), reduction=reduction)
    torch.testing.assert_close(actual.cpu(), expected.detach())
    expected.sum().backward()
    actual.sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), xc.grad)
    assert torch_tessera.fallback_stats() == {}
