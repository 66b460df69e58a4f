"""torch.autocast("tessera"): matmuls and convolutions run in the lower
precision, precision-sensitive ops in float32, other ops as they are,
following the op lists CUDA's autocast uses."""

import warnings

import pytest
import torch
import torch.nn.functional as F

LOW = [torch.bfloat16, torch.float16]


def tol(dtype):
    return {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 2e-3, "atol": 2e-3}


def t(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g)


def test_autocast_is_available_with_float16_default(tessera):
    assert torch.amp.is_autocast_available("tessera")
    assert torch.get_autocast_dtype("tessera") == torch.float16
    assert set(torch.tessera.get_amp_supported_dtype()) == {torch.float16, torch.bfloat16}


LOWER_PRECISION_OPS = {
    "mm": lambda a, b, c: torch.mm(a, b),
    "matmul": lambda a, b, c: a @ b,
    "linear": lambda a, b, c: F.linear(a, b.t(), c),
    "addmm": lambda a, b, c: torch.addmm(c, a, b),
    "bmm": lambda a, b, c: torch.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "mv": lambda a, b, c: torch.mv(a, c),
}


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("name", sorted(LOWER_PRECISION_OPS))
def test_lower_precision_ops_run_in_the_autocast_dtype(tessera, dtype, name):
    fn = LOWER_PRECISION_OPS[name]
    a, b, c = t(6, 5), t(5, 5), t(5)
    with torch.autocast("tessera", dtype=dtype):
        out = fn(a.to(tessera), b.to(tessera), c.to(tessera))
    assert out.dtype == dtype
    assert out.device == torch.device("tessera:0")
    # The same op on the CPU with inputs rounded to dtype, in float32.
    expected = fn(a.to(dtype).float(), b.to(dtype).float(), c.to(dtype).float())
    torch.testing.assert_close(out.cpu().float(), expected, **tol(dtype))


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_conv2d_runs_in_the_autocast_dtype(tessera, dtype):
    x, w, b = t(2, 3, 8, 8), t(4, 3, 3, 3), t(4)
    try:
        F.conv2d(x.to(tessera), w.to(tessera))
    except NotImplementedError as e:
        pytest.xfail(f"no tessera convolution kernel yet: {str(e).splitlines()[0]}")
    with torch.autocast("tessera", dtype=dtype):
        out = F.conv2d(x.to(tessera), w.to(tessera), b.to(tessera), padding=1)
    assert out.dtype == dtype
    expected = F.conv2d(x.to(dtype).float(), w.to(dtype).float(), b.to(dtype).float(), padding=1)
    torch.testing.assert_close(out.cpu().float(), expected, **tol(dtype))


FP32_OPS = {
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: F.log_softmax(x, -1),
    "layer_norm": lambda x: F.layer_norm(x, (x.shape[-1],)),
    "exp": torch.exp,
    "log": lambda x: torch.log(x.abs()),
    "pow": lambda x: torch.pow(x, 2),
    "sum": torch.sum,
    "cumsum": lambda x: torch.cumsum(x, 0),
    "mse_loss": lambda x: F.mse_loss(x, torch.zeros_like(x)),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
}


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("name", sorted(FP32_OPS))
def test_precision_sensitive_ops_run_in_float32(tessera, dtype, name):
    fn = FP32_OPS[name]
    x = t(4, 6).to(dtype)  # a lower-precision input, e.g. a matmul's output
    with torch.autocast("tessera", dtype=dtype):
        out = fn(x.to(tessera))
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.cpu(), fn(x.float()), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_promote_ops_use_the_widest_input(tessera, dtype):
    a = t(3, 4).to(tessera)
    b = t(3, 4).to(dtype).to(tessera)
    with torch.autocast("tessera", dtype=dtype):
        out = torch.addcmul(a, b, b, value=0.5)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.cpu(), torch.addcmul(a.cpu(), b.cpu().float(), b.cpu().float(),
                                                        value=0.5))


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_other_ops_keep_their_input_dtype(tessera, dtype):
    x32 = t(3, 4).to(tessera)
    x16 = x32.to(dtype)
    with torch.autocast("tessera", dtype=dtype):
        assert (x32 + 1).dtype == torch.float32
        assert torch.relu(x16).dtype == dtype
        assert (x16 * 2).dtype == dtype
        assert x32.t().contiguous().dtype == torch.float32


def test_outside_autocast_and_when_disabled_matmul_stays_float32(tessera):
    a = t(4, 4).to(tessera)
    assert torch.mm(a, a).dtype == torch.float32
    with torch.autocast("tessera", dtype=torch.bfloat16):
        with torch.autocast("tessera", enabled=False):
            assert torch.mm(a, a).dtype == torch.float32
        assert torch.mm(a, a).dtype == torch.bfloat16
    assert torch.mm(a, a).dtype == torch.float32


def test_tessera_autocast_leaves_cpu_tensors_alone(tessera):
    a = t(4, 4)
    with torch.autocast("tessera", dtype=torch.float16):
        assert torch.mm(a, a).dtype == torch.float32


def test_default_dtype_is_float16(tessera):
    a = t(4, 4).to(tessera)
    with torch.autocast("tessera"):
        assert torch.mm(a, a).dtype == torch.float16


def test_unsupported_autocast_dtype_warns_and_disables(tessera):
    a = t(4, 4).to(tessera)
    with pytest.warns(UserWarning, match="tessera"):
        ctx = torch.autocast("tessera", dtype=torch.float64)
    with ctx:
        assert torch.mm(a, a).dtype == torch.float32


def test_binary_cross_entropy_is_refused_as_on_cuda(tessera):
    p = torch.rand(5).to(tessera)
    target = torch.rand(5).to(tessera)
    with torch.autocast("tessera"):
        with pytest.raises(RuntimeError, match="unsafe to autocast on tessera"):
            F.binary_cross_entropy(p, target)
        out = F.binary_cross_entropy_with_logits(p, target)
    assert out.dtype == torch.float32


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_training_step_under_autocast(tessera, dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    reference.load_state_dict(model.state_dict())
    model.to(tessera)
    x, y = t(5, 8), t(5, 2)
    with torch.autocast("tessera", dtype=dtype):
        out = model(x.to(tessera))
        assert out.dtype == dtype
        loss = F.mse_loss(out, y.to(tessera))
    assert loss.dtype == torch.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype == torch.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU autocast of this dtype may warn
        with torch.autocast("cpu", dtype=dtype):
            ref_loss = F.mse_loss(reference(x), y)
    ref_loss.backward()
    torch.testing.assert_close(loss.cpu(), ref_loss.float(), rtol=5e-2, atol=5e-2)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=5e-2, atol=5e-2)


def test_grad_scaler_unscales_steps_and_skips_infinite_steps(tessera):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).to(tessera)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("tessera", init_scale=1024.0)
    x = t(3, 4).to(tessera)

    def backward():
        opt.zero_grad()
        with torch.autocast("tessera", dtype=torch.float16):
            loss = model(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        return loss

    loss = backward()
    scaled = [p.grad.detach().cpu().clone() for p in model.parameters()]
    scaler.unscale_(opt)
    grads = [p.grad.detach().cpu().clone() for p in model.parameters()]
    for s, g in zip(scaled, grads):
        torch.testing.assert_close(s / 1024.0, g)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    for p, b, g in zip(model.parameters(), before, grads):
        torch.testing.assert_close(p.detach().cpu(), b - 0.1 * g)
    assert scaler.get_scale() == 1024.0

    backward()
    with torch.no_grad():
        model.weight.grad[0, 0] = float("inf")
    before = [p.detach().cpu().clone() for p in model.parameters()]
    scaler.step(opt)  # skipped: a gradient is not finite
    scaler.update()
    for p, b in zip(model.parameters(), before):
        torch.testing.assert_close(p.detach().cpu(), b, rtol=0, atol=0)
    assert scaler.get_scale() == 512.0
    assert torch.isfinite(loss).item()
