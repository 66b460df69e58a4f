"""tessera.nn.functional (ops_nn*.cc) against torch.nn.functional on the
CPU as the reference (NumPy has no convolutions, pooling or losses), on
every device, in float32, float64 and float16: convolutions, pooling,
resampling, activations, normalizations, losses, attention, dropout, and
the errors of bad arguments."""

import math

import numpy as np
import pytest

import tessera
import tessera.nn.functional as F

# (tessera dtype, NumPy dtype, tolerance, device property it needs)
DTYPES = [
    pytest.param(tessera.float32, np.float32, 1e-4, None, id="float32"),
    pytest.param(tessera.float64, np.float64, 1e-10, "supports_float64", id="float64"),
    pytest.param(tessera.float16, np.float16, 5e-2, "supports_float16", id="float16"),
]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def skip_unsupported(device, needs):
    if needs and not tessera.get_device_properties(device)[needs]:
        pytest.skip(f"{device} lacks {needs}")


class Inputs:
    """Random inputs for one device and dtype: each array is drawn, rounded
    to the dtype, and kept in float64 for the torch reference."""

    def __init__(self, device, dtype, np_dtype, seed=0):
        self.device, self.dtype, self.np_dtype = device, dtype, np_dtype
        self.rng = np.random.default_rng(seed)

    def array(self, *shape, low=None, high=None):
        if low is None:
            a = self.rng.standard_normal(shape)
        else:
            a = self.rng.uniform(low, high, size=shape)
        return a.astype(self.np_dtype).astype(np.float64)

    def put(self, a, dtype=None):
        return tessera.tensor(np.asarray(a).tolist(), dtype=dtype or self.dtype, device=self.device)

    def pair(self, *shape, **kwargs):
        """(tessera tensor, float64 torch tensor) holding the same values."""
        import torch

        a = self.array(*shape, **kwargs)
        return self.put(a), torch.tensor(a)


def back(t):
    return np.array(t.cpu().tolist(), dtype=np.float64)


def check(ours, reference, tol, what=""):
    got = back(ours)
    expected = reference.detach().double().numpy() if hasattr(reference, "detach") else \
        np.asarray(reference, dtype=np.float64)
    assert got.shape == expected.shape, what
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=what)


def strided_view(t):
    """t's values through a non-contiguous view (a transposed copy, transposed back)."""
    n = t.dim()
    return t.transpose(0, n - 1).contiguous().transpose(0, n - 1)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_convolutions(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype)
    cases = [  # (rank, input shape, weight shape, bias, kwargs)
        (1, (2, 4, 7), (6, 2, 3), True, dict(stride=2, padding=1, groups=2)),
        (1, (4, 9), (3, 4, 2), False, dict(dilation=3, padding="same")),
        (1, (1, 2, 6), (2, 2, 4), True, dict(padding="valid", stride=(1,))),
        (2, (1, 2, 5, 6), (4, 1, 3, 2), True, dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                                                   groups=2)),
        (2, (2, 5, 5), (3, 2, 2, 2), False, dict(padding="same", dilation=2)),
        (3, (1, 2, 3, 4, 4), (2, 2, 2, 3, 1), True, dict(stride=(1, 2, 1), padding=(1, 0, 0))),
    ]
    for rank, in_shape, w_shape, with_bias, kwargs in cases:
        x, rx = g.pair(*in_shape)
        w, rw = g.pair(*w_shape)
        b, rb = g.pair(w_shape[0]) if with_bias else (None, None)
        ours = getattr(F, f"conv{rank}d")(x, w, b, **kwargs)
        check(ours, getattr(TF, f"conv{rank}d")(rx, rw, rb, **kwargs), tol, f"conv{rank}d {kwargs}")
        assert ours.dtype is dtype
    # Keyword names and a non-contiguous input.
    x, rx = g.pair(1, 2, 4, 5)
    w, rw = g.pair(2, 2, 2, 2)
    check(F.conv2d(input=strided_view(x), weight=w, bias=None, stride=1, padding=1, dilation=1,
                   groups=1), TF.conv2d(rx, rw, padding=1), tol, "conv2d keywords")

    transposed = [  # (rank, input shape, weight shape [C_in, C_out / g, k...], kwargs)
        (1, (2, 4, 5), (4, 3, 3), dict(stride=3, padding=1, output_padding=2, groups=2)),
        (1, (2, 3), (2, 2, 2), dict(dilation=2)),
        (2, (1, 4, 3, 4), (4, 1, 2, 3), dict(stride=(2, 1), padding=(0, 1), output_padding=(1, 0),
                                             groups=2, dilation=(1, 2))),
        (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), dict(stride=2, padding=(0, 1, 0))),
    ]
    for rank, in_shape, w_shape, kwargs in transposed:
        x, rx = g.pair(*in_shape)
        w, rw = g.pair(*w_shape)
        b, rb = g.pair(w_shape[1] * kwargs.get("groups", 1))
        name = f"conv_transpose{rank}d"
        check(getattr(F, name)(x, w, b, **kwargs), getattr(TF, name)(rx, rw, rb, **kwargs), tol,
              f"{name} {kwargs}")
    # Unbatched and non-contiguous input.
    x, rx = g.pair(2, 3, 3)
    w, rw = g.pair(2, 1, 2, 2)
    check(F.conv_transpose2d(input=strided_view(x), weight=w, stride=2, groups=2),
          TF.conv_transpose2d(rx, rw, stride=2, groups=2), tol, "conv_transpose2d unbatched")


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_pooling(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=1)
    x1, r1 = g.pair(2, 3, 9)
    x2, r2 = g.pair(1, 2, 7, 6)
    x3, r3 = g.pair(1, 2, 4, 5, 4)
    for x, r, rank in [(x1, r1, 1), (x2, r2, 2), (x3, r3, 3)]:
        for kwargs in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                       dict(kernel_size=2, stride=1, dilation=2, ceil_mode=True)]:
            name = f"max_pool{rank}d"
            values, indices = getattr(F, name)(x, return_indices=True, **kwargs)
            rv, ri = getattr(TF, name)(r, return_indices=True, **kwargs)
            check(values, rv, tol, f"{name} {kwargs}")
            assert back(indices).tolist() == ri.tolist(), f"{name} indices {kwargs}"
            assert indices.dtype is tessera.int64
            check(getattr(F, name)(strided_view(x), **kwargs), rv, tol)
        for kwargs in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1,
                                                 count_include_pad=False, ceil_mode=True)]:
            name = f"avg_pool{rank}d"
            check(getattr(F, name)(x, **kwargs), getattr(TF, name)(r, **kwargs), tol,
                  f"{name} {kwargs}")
        if rank > 1:
            check(getattr(F, f"avg_pool{rank}d")(x, 3, stride=1, padding=1, divisor_override=5),
                  getattr(TF, f"avg_pool{rank}d")(r, 3, stride=1, padding=1, divisor_override=5),
                  tol, "divisor_override")
        # None keeps the input's size of that dim.
        size = 4 if rank == 1 else [3, None, 2][:rank]
        torch_size = size
        check(getattr(F, f"adaptive_avg_pool{rank}d")(x, size),
              getattr(TF, f"adaptive_avg_pool{rank}d")(r, torch_size), tol, "adaptive avg")
        values, indices = getattr(F, f"adaptive_max_pool{rank}d")(x, output_size=size,
                                                                 return_indices=True)
        rv, ri = getattr(TF, f"adaptive_max_pool{rank}d")(r, torch_size, return_indices=True)
        check(values, rv, tol, "adaptive max")
        assert back(indices).tolist() == ri.tolist()
    # Unbatched input, and the power-average pools (positive values: x^p is real).
    check(F.max_pool2d(x2.select(0, 0), (3, 2)), TF.max_pool2d(r2[0], (3, 2)), tol)
    xp, rp = g.pair(1, 2, 6, 6, low=0.5, high=2.0)
    check(F.lp_pool2d(xp, 2.0, 3, stride=2), TF.lp_pool2d(rp, 2.0, 3, stride=2), tol * 10)
    check(F.lp_pool1d(xp.select(2, 0), 3.0, 2), TF.lp_pool1d(rp[:, :, 0], 3.0, 2), tol * 10)
    check(F.lp_pool3d(xp.unsqueeze(2), 1.5, (1, 2, 3), ceil_mode=True),
          TF.lp_pool3d(rp[:, :, None], 1.5, (1, 2, 3), ceil_mode=True), tol * 10)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_resampling(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=2)
    x1, r1 = g.pair(1, 2, 5)
    x2, r2 = g.pair(1, 2, 4, 5)
    x3, r3 = g.pair(1, 1, 3, 4, 2)
    cases = [
        (x1, r1, dict(size=8, mode="nearest")),
        (x1, r1, dict(scale_factor=1.7, mode="linear", align_corners=True)),
        (x2, r2, dict(size=(3, 7), mode="nearest-exact")),
        (x2, r2, dict(scale_factor=(2, 1.5), mode="bilinear")),
        (x2, r2, dict(size=(6, 3), mode="bicubic", align_corners=False)),
        (x2, r2, dict(scale_factor=0.6, mode="bilinear", recompute_scale_factor=True)),
        (x2, r2, dict(size=(2, 3), mode="area")),
        (x3, r3, dict(scale_factor=2, mode="trilinear")),
        (x3, r3, dict(size=(2, 2, 2), mode="area")),
    ]
    for x, r, kwargs in cases:
        check(F.interpolate(x, **kwargs), TF.interpolate(r, **kwargs), tol, str(kwargs))
    check(F.interpolate(strided_view(x2), size=(5, 5), mode="bilinear"),
          TF.interpolate(r2, size=(5, 5), mode="bilinear"), tol)
    check(F.upsample(x2, scale_factor=2), TF.interpolate(r2, scale_factor=2), tol)
    check(F.upsample_nearest(x2, size=(8, 10)), TF.interpolate(r2, size=(8, 10)), tol)
    check(F.upsample_bilinear(x2, scale_factor=2),
          TF.interpolate(r2, scale_factor=2, mode="bilinear", align_corners=True), tol)

    for mode, pad in [("constant", (1, 2)), ("constant", (1, 0, -1, 2)), ("reflect", (2, 1, 1, 3)),
                      ("replicate", (0, 2, 3, 1)), ("circular", (2, 2, 1, 0))]:
        check(F.pad(x2, pad, mode=mode), TF.pad(r2, pad, mode=mode), tol, f"pad {mode} {pad}")
    check(F.pad(x2, (1, 1), value=2.5), TF.pad(r2, (1, 1), value=2.5), tol)
    check(F.pad(x3, (1, 1, 1, 0, 0, 1), mode="replicate"),
          TF.pad(r3, (1, 1, 1, 0, 0, 1), mode="replicate"), tol)

    cols = F.unfold(x2, kernel_size=(2, 3), dilation=1, padding=1, stride=(2, 1))
    check(cols, TF.unfold(r2, (2, 3), padding=1, stride=(2, 1)), tol)
    check(F.fold(cols, output_size=(4, 5), kernel_size=(2, 3), padding=1, stride=(2, 1)),
          TF.fold(TF.unfold(r2, (2, 3), padding=1, stride=(2, 1)), (4, 5), (2, 3), padding=1,
                  stride=(2, 1)), tol)

    xs, rs = g.pair(2, 8, 2, 3)
    check(F.pixel_shuffle(xs, 2), TF.pixel_shuffle(rs, 2), 0)
    check(F.pixel_unshuffle(F.pixel_shuffle(xs, upscale_factor=2), downscale_factor=2), rs, 0)
    check(F.pixel_unshuffle(x2.narrow(2, 0, 4).narrow(3, 0, 4), 2),
          TF.pixel_unshuffle(r2[:, :, :4, :4], 2), 0)
    check(F.channel_shuffle(xs, 4), TF.channel_shuffle(rs, 4), 0)


ACTIVATIONS = [  # (name, kwargs, supports inplace=)
    ("relu", {}, True), ("relu6", {}, True), ("silu", {}, True), ("hardswish", {}, True),
    ("hardsigmoid", {}, True), ("mish", {}, True), ("selu", {}, True),
    ("elu", {"alpha": 0.7}, True), ("celu", {"alpha": 1.3}, True),
    ("leaky_relu", {"negative_slope": 0.2}, True), ("hardtanh", {"min_val": -0.5, "max_val": 1.5},
                                                    True),
    ("threshold", {"threshold": 0.3, "value": -2.0}, True),
    ("rrelu", {"lower": 0.1, "upper": 0.3}, True),
    ("gelu", {}, False), ("gelu", {"approximate": "tanh"}, False), ("sigmoid", {}, False),
    ("tanh", {}, False), ("logsigmoid", {}, False), ("softplus", {"beta": 2, "threshold": 1.5},
                                                     False),
    ("hardshrink", {"lambd": 0.4}, False), ("softshrink", {"lambd": 0.4}, False),
    ("tanhshrink", {}, False), ("softsign", {}, False), ("glu", {"dim": 1}, False),
]


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_activations(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=3)
    a = g.array(3, 4) * 3
    for name, kwargs, has_inplace in ACTIVATIONS:
        expected = getattr(TF, name)(torch.tensor(a), **kwargs)
        ours = getattr(F, name)(g.put(a), **kwargs)
        assert ours.dtype is dtype, name
        check(ours, expected, tol, name)
        check(getattr(F, name)(strided_view(g.put(a)), **kwargs), expected, tol, name)
        if has_inplace:
            x = g.put(a)
            assert getattr(F, name)(x, inplace=True, **kwargs) is x, name
            check(x, expected, tol, name + " inplace")
    for name in ["relu_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_", "rrelu_"]:
        x = g.put(a)
        assert getattr(F, name)(x) is x
        check(x, getattr(TF, name)(torch.tensor(a)), tol, name)
    x = g.put(a)
    assert F.threshold_(x, 0.5, 9.0) is x
    check(x, TF.threshold(torch.tensor(a), 0.5, 9.0), tol)
    # prelu: one slope, or one per channel.
    xp, rp = g.pair(2, 3, 4)
    for w in [np.array([0.25]), np.array([0.1, -0.5, 2.0])]:
        check(F.prelu(xp, g.put(w)), TF.prelu(rp, torch.tensor(w)), tol, "prelu")
    # rrelu when training: each negative element scaled by a slope in [lower, upper].
    neg = -np.abs(a) - 0.5
    r = back(F.rrelu(g.put(neg), 0.1, 0.3, training=True))
    assert np.all(r <= neg * 0.1 + tol) and np.all(r >= neg * 0.3 - tol)
    assert len(np.unique(np.round(r / neg, 3))) > 1  # slopes differ


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_softmax_family(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=4)
    for shape in [(5,), (2, 3, 4), (2, 3), (2, 2, 3, 2)]:
        x, r = g.pair(*shape)
        for name in ["softmax", "log_softmax", "softmin"]:
            # dim=None: PyTorch's implicit dim (0 for 1-D and 3-D, else 1).
            with pytest.warns(UserWarning):
                expected = getattr(TF, name)(r)
            check(getattr(F, name)(x), expected, tol, f"{name} implicit dim {shape}")
            check(getattr(F, name)(strided_view(x), dim=-1), getattr(TF, name)(r, dim=-1), tol)
    x, r = g.pair(2, 3)
    y = F.softmax(x, 1, dtype=tessera.float64)
    assert y.dtype is tessera.float64
    check(y, TF.softmax(r, 1), tol)
    y = F.log_softmax(input=x, dim=0, dtype=tessera.float32)
    assert y.dtype is tessera.float32
    check(y, TF.log_softmax(r, 0), max(tol, 1e-6))
    # gumbel_softmax: rows of probabilities, or one-hot rows with hard=True.
    logits = g.put(g.array(4, 5))
    soft = back(F.gumbel_softmax(logits, tau=0.5))
    np.testing.assert_allclose(soft.sum(-1), 1, atol=tol * 10)
    hard = back(F.gumbel_softmax(logits, hard=True, dim=-1))
    assert set(np.unique(hard)) <= {0.0, 1.0} and (hard.sum(-1) == 1).all()


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_normalization(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=5)
    tol = max(tol, 1e-6) * 4
    x, r = g.pair(2, 4, 3, 2)
    w, rw = g.pair(4)
    b, rb = g.pair(4)
    lw, rlw = g.pair(3, 2)
    check(F.layer_norm(x, (3, 2), lw, None, 1e-3), TF.layer_norm(r, (3, 2), rlw, None, 1e-3), tol)
    check(F.layer_norm(strided_view(x), [2]), TF.layer_norm(r, [2]), tol)
    check(F.rms_norm(x, (3, 2), weight=lw, eps=1e-4), TF.rms_norm(r, (3, 2), rlw, 1e-4), tol)
    check(F.group_norm(x, 2, w, b, eps=1e-4), TF.group_norm(r, 2, rw, rb, eps=1e-4), tol)
    check(F.group_norm(strided_view(x), num_groups=4), TF.group_norm(r, 4), tol)
    check(F.local_response_norm(x, 3, alpha=0.1, beta=0.5, k=2.0),
          TF.local_response_norm(r, 3, alpha=0.1, beta=0.5, k=2.0), tol)
    check(F.normalize(x, p=1.0, dim=2), TF.normalize(r, p=1.0, dim=2), tol)
    check(F.normalize(x, p=3.0, dim=-1, eps=1e-6), TF.normalize(r, p=3.0, dim=-1, eps=1e-6), tol)
    out = tessera.empty(2, 4, 3, 2, dtype=dtype, device=device)
    assert F.normalize(x, out=out) is out
    check(out, TF.normalize(r), tol)

    # batch_norm: training updates the running statistics in place.
    stats = [g.array(4), np.abs(g.array(4)) + 0.5]
    rm, rv = (g.put(s) for s in stats)
    trm, trv = (torch.tensor(s) for s in stats)
    check(F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3),
          TF.batch_norm(r, trm, trv, rw, rb, training=True, momentum=0.3, eps=1e-3), tol)
    check(rm, trm, tol, "running_mean")
    check(rv, trv, tol, "running_var")
    check(F.batch_norm(x, rm, rv, weight=w, bias=b), TF.batch_norm(r, trm, trv, rw, rb), tol)
    check(F.batch_norm(x, None, None, training=True), TF.batch_norm(r, None, None, training=True),
          tol)

    rm, rv = (g.put(s) for s in stats)
    trm, trv = (torch.tensor(s) for s in stats)
    check(F.instance_norm(x, rm, rv, w, b, momentum=0.2),
          TF.instance_norm(r, trm, trv, rw, rb, momentum=0.2), tol)
    check(rm, trm, tol, "instance running_mean")
    check(rv, trv, tol, "instance running_var")
    check(F.instance_norm(x, rm, rv, use_input_stats=False),
          TF.instance_norm(r, trm, trv, use_input_stats=False), tol)
    check(F.instance_norm(strided_view(x)), TF.instance_norm(r), tol)


def loss_cases(g, torch):
    """(name, tessera args, torch args, kwargs) for the losses and distances."""
    import torch as t

    x, rx = g.pair(3, 4)
    y, ry = g.pair(3, 4)
    p, rp = g.pair(3, 4, low=0.05, high=0.95)
    q, rq = g.pair(3, 4, low=0.0, high=1.0)
    sign = np.where(g.array(3, 4) > 0, 1.0, -1.0)
    s, rs = g.put(sign), t.tensor(sign)
    w, rw = g.pair(3, 4, low=0.5, high=2.0)
    pos, rpos = g.pair(4, low=0.5, high=2.0)
    var, rvar = g.pair(3, 4, low=0.1, high=1.0)
    var_row, rvar_row = g.pair(3, low=0.1, high=1.0)
    counts = g.rng.integers(0, 5, size=(3, 4)).astype(np.float64)
    c, rc = g.put(counts), t.tensor(counts)
    v1, rv1 = g.pair(3)
    v2, rv2 = g.pair(3)
    target1 = np.where(g.array(3) > 0, 1.0, -1.0)
    t1, rt1 = g.put(target1), t.tensor(target1)
    return [
        ("mse_loss", (x, y), (rx, ry), {}),
        ("mse_loss", (x, y), (rx, ry), {"weight": (w, rw)}),
        ("l1_loss", (x, y), (rx, ry), {}),
        ("l1_loss", (x, y), (rx, ry), {"weight": (w, rw)}),
        ("smooth_l1_loss", (x, y), (rx, ry), {"beta": 0.5}),
        ("smooth_l1_loss", (x, y), (rx, ry), {"beta": 0.0}),
        ("huber_loss", (x, y), (rx, ry), {"delta": 0.7}),
        ("huber_loss", (x, y), (rx, ry), {"delta": 0.7, "weight": (w, rw)}),
        ("binary_cross_entropy", (p, q), (rp, rq), {}),
        ("binary_cross_entropy", (p, q), (rp, rq), {"weight": (w, rw)}),
        ("binary_cross_entropy_with_logits", (x, q), (rx, rq), {"pos_weight": (pos, rpos)}),
        ("binary_cross_entropy_with_logits", (x, q), (rx, rq), {"weight": (w, rw)}),
        ("kl_div", (x, p), (rx, rp), {}),
        ("kl_div", (x, y), (rx, ry), {"log_target": True}),
        ("soft_margin_loss", (x, s), (rx, rs), {}),
        ("margin_ranking_loss", (x, y, s), (rx, ry, rs), {"margin": 0.3}),
        ("hinge_embedding_loss", (x, s), (rx, rs), {"margin": 0.5}),
        ("poisson_nll_loss", (x, c), (rx, rc), {}),
        ("poisson_nll_loss", (p, c), (rp, rc), {"log_input": False, "full": True}),
        ("gaussian_nll_loss", (x, y, var), (rx, ry, rvar), {"full": True}),
        ("gaussian_nll_loss", (x, y, var_row), (rx, ry, rvar_row), {}),
        ("gaussian_nll_loss", (x, y, 0.5), (rx, ry, 0.5), {}),
        ("cosine_embedding_loss", (x.narrow(1, 0, 3), y.narrow(1, 0, 3), t1),
         (rx[:, :3], ry[:, :3], rt1), {"margin": 0.1}),
        ("cosine_embedding_loss", (v1, v2, g.put(np.array(-1.0))), (rv1, rv2, t.tensor(-1.0)), {}),
        ("triplet_margin_loss", (x, y, p), (rx, ry, rp), {"p": 1.5, "swap": True}),
        ("multilabel_soft_margin_loss", (x, q), (rx, rq), {"weight": (w, rw)}),
    ]


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_losses(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=6)
    tol = max(tol, 1e-6) * 4
    for name, ours_args, torch_args, kwargs in loss_cases(g, torch):
        ours_kw = {k: v[0] if isinstance(v, tuple) else v for k, v in kwargs.items()}
        torch_kw = {k: v[1] if isinstance(v, tuple) else v for k, v in kwargs.items()}
        for reduction in ["none", "mean", "sum"]:
            r = getattr(F, name)(*ours_args, reduction=reduction, **ours_kw)
            check(r, getattr(TF, name)(*torch_args, reduction=reduction, **torch_kw), tol,
                  f"{name} {reduction} {kwargs.keys()}")
    x, rx = g.pair(3, 4)
    y, ry = g.pair(3, 4)
    check(F.kl_div(x, F.softmax(y, 1), reduction="batchmean"),
          TF.kl_div(rx, TF.softmax(ry, 1), reduction="batchmean"), tol)
    # The deprecated size_average / reduce decide the reduction when given.
    check(F.mse_loss(x, y, size_average=False), TF.mse_loss(rx, ry, reduction="sum"), tol)
    check(F.l1_loss(x, y, reduce=False), TF.l1_loss(rx, ry, reduction="none"), tol)
    check(F.mse_loss(input=strided_view(x), target=y), TF.mse_loss(rx, ry), tol)
    # Distances.
    check(F.cosine_similarity(x, y), TF.cosine_similarity(rx, ry), tol)
    check(F.cosine_similarity(x, y.narrow(0, 0, 1), dim=0, eps=1e-3),
          TF.cosine_similarity(rx, ry[:1], dim=0, eps=1e-3), tol)
    check(F.pairwise_distance(x, y, p=3.0, keepdim=True),
          TF.pairwise_distance(rx, ry, p=3.0, keepdim=True), tol)
    if dtype is not tessera.float16:  # cdist is float32 / float64 only
        check(F.pdist(x, p=1.0), TF.pdist(rx, p=1.0), tol)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_classification_losses(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=7)
    tol = max(tol, 1e-6) * 4
    x, rx = g.pair(4, 5)
    xs, rxs = g.pair(2, 5, 3)   # [N, C, d]
    x1, rx1 = g.pair(5)         # unbatched
    w, rw = g.pair(5, low=0.5, high=2.0)
    labels = [1, 4, -100, 0]
    labels4 = [1, 4, 2, 0]  # with ignore_index=4
    spatial = [[0, 2, -100], [4, 4, 1]]
    probs = g.array(4, 5, low=0.0, high=1.0)
    probs = probs / probs.sum(1, keepdims=True)
    i64 = tessera.int64
    cases = [
        ((x, g.put(labels, i64)), (rx, torch.tensor(labels)), {}),
        ((x, g.put(labels, i64)), (rx, torch.tensor(labels)), {"weight": (w, rw)}),
        ((x, g.put(labels, i64)), (rx, torch.tensor(labels)),
         {"weight": (w, rw), "label_smoothing": 0.3}),
        ((x, g.put(labels4, i64)), (rx, torch.tensor(labels4)), {"label_smoothing": 0.1,
                                                                  "ignore_index": 4}),
        ((xs, g.put(spatial, i64)), (rxs, torch.tensor(spatial)), {"label_smoothing": 0.2}),
        ((x1, g.put(3, i64)), (rx1, torch.tensor(3)), {"weight": (w, rw)}),
        ((x, g.put(probs)), (rx, torch.tensor(probs)), {}),
        ((x, g.put(probs)), (rx, torch.tensor(probs)), {"weight": (w, rw),
                                                        "label_smoothing": 0.25}),
    ]
    for ours_args, torch_args, kwargs in cases:
        ours_kw = {k: v[0] if isinstance(v, tuple) else v for k, v in kwargs.items()}
        torch_kw = {k: v[1] if isinstance(v, tuple) else v for k, v in kwargs.items()}
        for reduction in ["none", "mean", "sum"]:
            check(F.cross_entropy(*ours_args, reduction=reduction, **ours_kw),
                  TF.cross_entropy(*torch_args, reduction=reduction, **torch_kw), tol,
                  f"cross_entropy {reduction} {kwargs}")
    logp = F.log_softmax(x, 1)
    check(F.nll_loss(logp, g.put(labels, i64), weight=w, ignore_index=-100, reduction="sum"),
          TF.nll_loss(TF.log_softmax(rx, 1), torch.tensor(labels), weight=rw, reduction="sum"),
          tol)
    check(F.nll_loss(input=strided_view(logp), target=g.put(labels4, i64), ignore_index=4,
                     reduce=False),
          TF.nll_loss(TF.log_softmax(rx, 1), torch.tensor(labels4), ignore_index=4,
                      reduction="none"), tol)


@pytest.mark.parametrize("dtype,np_dtype,tol,needs", DTYPES)
def test_layers_attention(device, dtype, np_dtype, tol, needs, torch):
    skip_unsupported(device, needs)
    TF = torch.nn.functional
    g = Inputs(device, dtype, np_dtype, seed=8)
    tol = max(tol, 1e-6) * 4
    x, rx = g.pair(2, 3, 4)
    w, rw = g.pair(5, 4)
    b, rb = g.pair(5)
    check(F.linear(x, w, b), TF.linear(rx, rw, rb), tol)
    check(F.linear(input=strided_view(x), weight=w), TF.linear(rx, rw), tol)
    x2, rx2 = g.pair(2, 3, 2)
    wb, rwb = g.pair(5, 4, 2)
    check(F.bilinear(x, x2, wb, b), TF.bilinear(rx, rx2, rwb, rb), tol)

    table, rtable = g.pair(6, 3)
    idx = [[0, 5, 2], [2, 2, 1]]
    check(F.embedding(g.put(idx, tessera.int64), table, padding_idx=2),
          TF.embedding(torch.tensor(idx), rtable, padding_idx=2), tol)
    # max_norm rescales the rows it reads, in place, as PyTorch does.
    big = g.array(6, 3) * 4
    tbig, rbig = g.put(big), torch.tensor(big)
    check(F.embedding(g.put(idx, tessera.int32), tbig, max_norm=1.5, norm_type=1.0),
          TF.embedding(torch.tensor(idx), rbig, max_norm=1.5, norm_type=1.0), tol)
    check(tbig, rbig, tol, "renormed weight")
    # embedding_bag: 1-D with offsets (an empty bag, repeats, padding),
    # 2-D, include_last_offset, per_sample_weights.
    flat = [1, 4, 4, 0, 5, 2, 2]
    for mode in ["sum", "mean", "max"]:
        for kwargs in [{}, {"padding_idx": 2}, {"include_last_offset": True}]:
            offsets = [0, 3, 3, 7] if kwargs.get("include_last_offset") else [0, 3, 3]
            check(F.embedding_bag(g.put(flat, tessera.int64), table, g.put(offsets, tessera.int64),
                                  mode=mode, **kwargs),
                  TF.embedding_bag(torch.tensor(flat), rtable, torch.tensor(offsets), mode=mode,
                                   **kwargs), tol, f"embedding_bag {mode} {kwargs}")
        check(F.embedding_bag(g.put(idx, tessera.int32), table, mode=mode),
              TF.embedding_bag(torch.tensor(idx), rtable, mode=mode), tol, f"embedding_bag 2-D {mode}")
    weights, rweights = g.pair(7)
    check(F.embedding_bag(g.put(flat, tessera.int64), table, g.put([0, 2], tessera.int64),
                          mode="sum", per_sample_weights=weights),
          TF.embedding_bag(torch.tensor(flat), rtable, torch.tensor([0, 2]), mode="sum",
                           per_sample_weights=rweights), tol, "embedding_bag per_sample_weights")
    with pytest.raises(ValueError, match="mode must be"):
        F.embedding_bag(g.put(flat, tessera.int64), table, g.put([0], tessera.int64), mode="min")
    assert back(F.one_hot(g.put([0, 3, 1], tessera.int64))).tolist() == \
        TF.one_hot(torch.tensor([0, 3, 1])).tolist()
    assert F.one_hot(g.put([1], tessera.int64), num_classes=3).shape == (1, 3)

    q, rq = g.pair(1, 4, 3, 8)
    k, rk = g.pair(1, 4, 5, 8)
    v, rv = g.pair(1, 4, 5, 6)
    mask = g.array(3, 5) > -0.5
    additive = g.array(1, 1, 3, 5)
    k2, rk2 = g.pair(1, 2, 5, 8)
    v2, rv2 = g.pair(1, 2, 5, 6)
    attn_cases = [
        ((q, k, v), (rq, rk, rv), {}),
        ((q, k, v), (rq, rk, rv), {"is_causal": True, "scale": 0.3}),
        ((q, k, v), (rq, rk, rv), {"attn_mask": (g.put(mask, tessera.bool), torch.tensor(mask))}),
        ((q, k, v), (rq, rk, rv), {"attn_mask": (g.put(additive), torch.tensor(additive))}),
        ((q, k2, v2), (rq, rk2, rv2), {"enable_gqa": True}),
        ((strided_view(q), k, v), (rq, rk, rv), {}),
    ]
    for ours_args, torch_args, kwargs in attn_cases:
        ours_kw = {kk: vv[0] if isinstance(vv, tuple) else vv for kk, vv in kwargs.items()}
        torch_kw = {kk: vv[1] if isinstance(vv, tuple) else vv for kk, vv in kwargs.items()}
        check(F.scaled_dot_product_attention(*ours_args, **ours_kw),
              TF.scaled_dot_product_attention(*torch_args, **torch_kw), tol, str(kwargs.keys()))


def test_dropout(device):
    x = tessera.ones(64, 32, device=device)
    gen = tessera.Generator(7)
    y = back(F.dropout(x, p=0.25, generator=gen))
    assert set(np.unique(y)) == {0.0, float(np.float32(1 / 0.75))}
    assert abs((y == 0).mean() - 0.25) < 0.05
    # The same seed drops the same elements.
    assert (back(F.dropout(x, 0.25, generator=tessera.Generator(7))) == y).all()
    check(F.dropout(x, 0.9, training=False), np.ones((64, 32)), 0)
    check(F.dropout(x, 1.0), np.zeros((64, 32)), 0)
    z = tessera.ones(4, 4, device=device)
    assert F.dropout(z, 0.5, inplace=True) is z
    assert set(np.unique(back(z))) <= {0.0, 2.0}

    # Channel dropout: whole [H, W] planes kept (scaled) or zeroed.
    for name, shape in [("dropout1d", (8, 16, 5)), ("dropout2d", (8, 16, 3, 2)),
                        ("dropout3d", (16, 2, 2, 3))]:
        planes = back(getattr(F, name)(tessera.ones(*shape, device=device), p=0.5,
                                       generator=tessera.Generator(1)))
        channels = planes.reshape(-1, int(np.prod(shape[2:] if name != "dropout3d" else shape[1:])))
        assert all(len(np.unique(row)) == 1 for row in channels), name
        assert set(np.unique(channels)) == {0.0, 2.0}, name
        check(getattr(F, name)(tessera.ones(*shape, device=device), 0.5, training=False),
              np.ones(shape), 0)
    a = F.alpha_dropout(tessera.ones(256, device=device), p=0.2, training=True)
    assert len(np.unique(back(a))) == 2
    check(F.alpha_dropout(x, 0.2), np.ones((64, 32)), 0)  # training=False by default


def test_errors(device):
    f32 = tessera.float32
    x4 = tessera.ones(1, 2, 5, 5, device=device)
    w = tessera.ones(3, 2, 3, 3, device=device)
    value_errors = [
        lambda: F.conv2d(tessera.ones(5, 5, device=device), w),          # rank
        lambda: F.conv1d(x4, tessera.ones(3, 2, 3, device=device)),      # rank
        lambda: F.conv2d(x4, tessera.ones(3, 4, 3, 3, device=device)),   # channels
        lambda: F.conv1d(tessera.ones(1, 2, 5, device=device),
                         tessera.ones(3, 4, 3, device=device)),          # channels
        lambda: F.conv2d(x4, w, stride=(1, 2, 3)),                      # tuple length
        lambda: F.conv2d(x4, w, padding="full"),
        lambda: F.conv2d(x4, w, stride=2, padding="same"),
        lambda: F.conv_transpose2d(x4, tessera.ones(3, 2, 2, 2, device=device)),  # channels
        lambda: F.conv_transpose2d(x4, tessera.ones(2, 2, 2, 2, device=device), stride=2,
                                   output_padding=2),
        lambda: F.max_pool2d(tessera.ones(5, device=device), 2),
        lambda: F.avg_pool1d(x4, 2),
        lambda: F.adaptive_avg_pool2d(x4, (1, 2, 3)),
        lambda: F.interpolate(tessera.ones(2, 3, device=device), size=4),
        lambda: F.interpolate(x4, size=4, mode="linear"),
        lambda: F.interpolate(x4, size=4, mode="nearest", align_corners=True),
        lambda: F.interpolate(x4),
        lambda: F.interpolate(x4, size=4, scale_factor=2.0),
        lambda: F.pad(x4, (1, 2, 3)),
        lambda: F.pad(x4, (1, 1), mode="reflect"),                      # rank
        lambda: F.pad(tessera.ones(1, 2, 5, device=device), (5, 0), mode="reflect"),
        lambda: F.group_norm(x4, 3),
        lambda: F.layer_norm(x4, (4,)),
        lambda: F.batch_norm(x4, None, None),                            # eval needs stats
        lambda: F.batch_norm(tessera.ones(1, 2, device=device), None, None, training=True),
        lambda: F.glu(tessera.ones(3, device=device)),
        lambda: F.dropout(x4, p=1.5),
        lambda: F.mse_loss(x4, x4, reduction="average"),
        lambda: F.cross_entropy(tessera.ones(2, 3, device=device),
                                tessera.tensor([0, 1, 1], device=device)),
        lambda: F.binary_cross_entropy(x4 * 2, x4),
        lambda: F.binary_cross_entropy(x4, tessera.ones(2, device=device)),
        lambda: F.pixel_shuffle(tessera.ones(1, 3, 2, 2, device=device), 2),
        lambda: F.embedding(tessera.tensor([0], device=device), tessera.ones(3, device=device)),
        lambda: F.scaled_dot_product_attention(tessera.ones(1, 3, 4, device=device),
                                               tessera.ones(1, 5, 3, device=device),
                                               tessera.ones(1, 5, 3, device=device)),
    ]
    for i, call in enumerate(value_errors):
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"case {i} raised nothing")
    type_errors = [
        lambda: F.conv2d(x4, w.to(tessera.float64)),
        lambda: F.conv_transpose2d(x4.long(), tessera.ones(2, 2, 2, 2, device=device).long()),
        lambda: F.nll_loss(tessera.ones(2, 3, device=device), tessera.ones(2, device=device)),
        lambda: F.cross_entropy(tessera.ones(2, 3, device=device),
                                tessera.ones(2, 3, dtype=tessera.int64, device=device)),
        lambda: F.mse_loss(x4.long(), x4.long()),
        lambda: F.embedding(tessera.ones(2, device=device), tessera.ones(3, 2, device=device)),
        lambda: F.dropout(x4.long()),
        lambda: F.scaled_dot_product_attention(x4, x4, x4.to(tessera.float64)),
        lambda: F.conv2d("input", w),
    ]
    for i, call in enumerate(type_errors):
        with pytest.raises(TypeError):
            call()
            pytest.fail(f"case {i} raised nothing")
    with pytest.raises(IndexError):
        F.softmax(tessera.ones(2, 3, device=device), dim=2)
    with pytest.raises(NotImplementedError):
        F.interpolate(x4, size=3, mode="bilinear", antialias=True)
    assert f32 is x4.dtype
