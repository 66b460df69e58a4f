"""Complex tensors on tessera, against the CPU on every tessera device.

The runtime stores a complex tensor as real pairs (bridge/csrc/complex_views.h).
Native on every device: copies both ways (conjugate and negative bits
applied), clone, fill_/zero_, item, view_as_real/view_as_complex, complex,
polar, conj_physical, abs, angle, sum, add/sub/mul/div and mm/bmm/matmul
(bridge/csrc/ops/complex_ops.cc). Every other op with a complex argument
runs through the CPU fallback, native kernel or not (complex_routing.h), and
must give the CPU's result there too.
"""

import math

import pytest
import torch
import torch_tessera
from torch.testing._internal.common_methods_invocations import op_db

from bridge_testing import assert_no_fallback, every_device
from opinfo_testing import compare_forward, opinfo_name

OPS = {opinfo_name(op): op for op in op_db}

# op_db entries whose complex64 samples run with zero fallback calls.
NATIVE = ["add", "sub", "mul", "div.no_rounding_mode", "mm", "bmm", "matmul", "abs", "angle",
          "conj_physical", "view_as_real", "real", "imag", "resolve_conj", "sum"]
# Real inputs, complex outputs.
NATIVE_FROM_REAL = ["view_as_complex", "complex", "polar"]
# Complex ops that run through the fallback; their results must still match.
THROUGH_FALLBACK = ["fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "exp", "log", "sqrt",
                    "cumsum", "prod", "linalg.eig", "stft", "cat", "flip", "where"]


def complex_values(shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=dtype)


@every_device
@pytest.mark.parametrize("name", NATIVE)
def test_native_complex_ops_match_cpu(device, name):
    assert compare_forward(OPS[name], device, torch.complex64, limit=12) > 0


@every_device
@pytest.mark.parametrize("name", NATIVE_FROM_REAL)
def test_ops_building_complex_tensors_match_cpu(device, name):
    assert compare_forward(OPS[name], device, torch.float32, limit=12) > 0


@every_device
@pytest.mark.parametrize("name", THROUGH_FALLBACK)
def test_complex_ops_through_the_fallback_match_cpu(device, name):
    op = OPS[name]
    dtype = torch.float32 if name in ("fft.rfft", "stft") else torch.complex64
    compared = 0
    for sample in list(op.sample_inputs("cpu", dtype))[:6]:
        args = (sample.input, *sample.args)
        expected = op(*args, **sample.kwargs)
        moved = [a.to(device) if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v
                  for k, v in sample.kwargs.items()}
        actual = op(*moved, **kwargs)
        for a, e in zip(torch.utils._pytree.tree_leaves(actual),
                        torch.utils._pytree.tree_leaves(expected)):
            if isinstance(e, torch.Tensor):
                torch.testing.assert_close(a.cpu(), e, rtol=1e-4, atol=1e-4, equal_nan=True)
        compared += 1
    assert compared > 0


def same_bits(a, b):
    """Exactly equal, complex32 included (torch.equal lacks it on the CPU)."""
    return a.dtype == b.dtype and torch.equal(torch.view_as_real(a), torch.view_as_real(b))


@every_device
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.complex32])
def test_round_trips_and_casts(device, dtype):
    x = complex_values((3, 5)).to(dtype)
    assert same_bits(x.to(device).cpu(), x)
    assert same_bits(x.to(device).t().contiguous().cpu(), x.t().contiguous())
    assert same_bits(x.to(device)[:, 1::2].clone().cpu(), x[:, 1::2].contiguous())
    # Across dtypes: complex <-> complex, real -> complex, complex -> real.
    wide = x.to(device).to(torch.complex128)
    assert same_bits(wide.cpu(), x.to(torch.complex128))
    r = torch.randn(4)
    assert same_bits(r.to(device).to(dtype).cpu(), r.to(dtype))
    torch.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            assert torch.equal(x.to(device).to(torch.float64).cpu(), x.to(torch.float64))
    finally:
        torch.set_warn_always(False)
    assert x.to(device)[1, 2].item() == x[1, 2].item()


@every_device
def test_conjugate_and_negative_bits(device):
    x = complex_values((4, 3))
    d = x.to(device)
    c = d.conj()
    assert c.is_conj()
    assert torch.equal(c.cpu(), x.conj())
    assert torch.equal(c.resolve_conj().cpu(), x.conj().resolve_conj())
    assert torch.equal(c.clone().cpu(), x.conj())
    assert torch.equal(x.conj().to(device).cpu(), x.conj())
    # imag of a conjugate is a view with the negative bit.
    assert c.imag.is_neg()
    assert torch.equal(c.imag.cpu(), x.conj().imag)
    assert torch.equal((c.imag * 2).cpu(), x.conj().imag * 2)
    torch.testing.assert_close((c * d).cpu(), x.conj() * x)
    torch.testing.assert_close((c @ d.t()).cpu(), x.conj() @ x.t())
    # Writing through a view of the imaginary parts reaches the tensor.
    e = d.clone()
    e.imag.zero_()
    assert torch.equal(e.cpu(), torch.complex(x.real, torch.zeros_like(x.real)))


@every_device
def test_fill_zero_and_factories(device):
    assert torch.equal(torch.full((2, 3), 1 - 2j, device=device).cpu(),
                       torch.full((2, 3), 1 - 2j))
    assert torch.equal(torch.zeros(4, dtype=torch.complex128, device=device).cpu(),
                       torch.zeros(4, dtype=torch.complex128))
    assert torch.equal(torch.tensor([1 + 2j, -3j], device=device).cpu(),
                       torch.tensor([1 + 2j, -3j]))
    x = torch.ones(3, dtype=torch.complex64, device=device)
    x.fill_(torch.tensor(2.5 + 1j))
    assert torch.equal(x.cpu(), torch.full((3,), 2.5 + 1j))


@every_device
def test_arithmetic_with_python_numbers_and_mixed_dtypes(device):
    x, y = complex_values((3, 4), seed=1), complex_values((4,), seed=2)
    r = torch.randn(3, 4, dtype=torch.float64)
    d = x.to(device)
    torch_tessera.reset_fallback_stats()
    cases = [
        (lambda a, b, q: a * (2 - 1j), None),
        (lambda a, b, q: (1 + 1j) / a, None),
        (lambda a, b, q: a + b, None),
        (lambda a, b, q: a - 3 * b, None),
        (lambda a, b, q: a * q, None),
        (lambda a, b, q: q / a, None),
        (lambda a, b, q: torch.add(a, b, alpha=2j), None),
    ]
    for f, _ in cases:
        want = f(x, y, r)
        got = f(d, y.to(device), r.to(device))
        assert got.dtype == want.dtype
        torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-6)
    assert_no_fallback()


@every_device
def test_division_keeps_range(device):
    # |b|^2 would overflow float32 for these divisors; the scaled division does not.
    a = torch.tensor([1e30 + 1e30j, 3 + 4j], dtype=torch.complex64)
    b = torch.tensor([2e30 - 1e30j, 1e-30 + 1e-30j], dtype=torch.complex64)
    torch.testing.assert_close((a.to(device) / b.to(device)).cpu(), a / b)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Rotary position embeddings as Meta's LLaMA reference writes them:
    pairs of features as complex numbers, rotated by a complex multiply."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)


@every_device
def test_llama_rotary_embedding_forward_and_backward_without_fallback(device):
    batch, seq, heads, head_dim = 2, 7, 3, 8
    g = torch.Generator().manual_seed(0)
    xq = torch.randn(batch, seq, heads, head_dim, generator=g, requires_grad=True)
    xk = torch.randn(batch, seq, heads, head_dim, generator=g, requires_grad=True)
    freqs_cis = precompute_freqs_cis(head_dim, seq)
    q, k = apply_rotary_emb(xq, xk, freqs_cis)
    loss = (q * k).sum() + (q ** 2).mean()
    loss.backward()

    dq = xq.detach().to(device).requires_grad_()
    dk = xk.detach().to(device).requires_grad_()
    torch_tessera.reset_fallback_stats()
    freqs_dev = precompute_freqs_cis(head_dim, seq).to(device)
    q_dev, k_dev = apply_rotary_emb(dq, dk, freqs_dev)
    loss_dev = (q_dev * k_dev).sum() + (q_dev ** 2).mean()
    loss_dev.backward()
    assert_no_fallback()
    torch.testing.assert_close(q_dev.cpu(), q, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(loss_dev.cpu(), loss, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dq.grad.cpu(), xq.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dk.grad.cpu(), xk.grad, rtol=1e-5, atol=1e-5)


@every_device
def test_complex_linear_map_trains_like_cpu(device):
    """A complex weight learnt by gradient descent on |W x - y|^2."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(16, 4, generator=g, dtype=torch.complex64)
    y = torch.randn(16, 3, generator=g, dtype=torch.complex64)
    w0 = torch.randn(4, 3, generator=g, dtype=torch.complex64)
    results = []
    for dev in ("cpu", device):
        w = w0.clone().to(dev).requires_grad_()
        opt = torch.optim.SGD([w], lr=0.05)
        for _ in range(5):
            opt.zero_grad()
            loss = (x.to(dev) @ w - y.to(dev)).abs().pow(2).mean()
            loss.backward()
            opt.step()
        results.append(w.detach().cpu())
    torch.testing.assert_close(results[1], results[0], rtol=1e-5, atol=1e-5)


@every_device
def test_native_kernels_reject_nothing_silently(device):
    """A native real kernel never reads a complex tensor as real: ops
    without a complex kernel give the CPU's result through the fallback."""
    x = complex_values((5,))
    d = x.to(device)
    for f in (torch.exp, torch.tanh, lambda t: t.pow(2), lambda t: t.mean(),
              lambda t: torch.cat([t, t]), lambda t: t.flip(0), lambda t: t[t.abs() > 0.5]):
        torch.testing.assert_close(f(d).cpu(), f(x), rtol=1e-5, atol=1e-5)
    assert math.isclose(torch_tessera.fallback_stats().get("aten::exp", 0), 1)


@every_device
def test_writes_through_conjugate_and_negative_views_land(device):
    """aten runs an in-place op on a conjugate view as a copy back into it;
    that copy must reach the memory (and likewise for the negative bit)."""
    for dev in ("cpu", device):
        z = torch.zeros(3, dtype=torch.complex64, device=dev)
        z.conj().add_(1 + 2j)
        z.conj().mul_(2)
        w = torch.zeros(2, dtype=torch.complex64, device=dev)
        w.conj().copy_(torch.tensor([1j, 2 - 1j], device=dev))
        v = torch.ones(2, dtype=torch.complex64, device=dev)
        v.conj().imag.mul_(3)  # imag of a conjugate: a real view with the negative bit
        host = torch.zeros(2, dtype=torch.complex64)
        host.conj().copy_(torch.tensor([1j, 1.0 + 0j], device=dev))
        if dev == "cpu":
            want = [z, w, v, host]
        else:
            for got, expected in zip([z.cpu(), w.cpu(), v.cpu(), host], want):
                assert torch.equal(got, expected)


@every_device
def test_complex_views_casts_and_scalar_dtypes(device):
    x = complex_values((6,))
    d = x.to(device)
    # unfold is a view for complex tensors too.
    view = d.unfold(0, 2, 1)
    view.fill_(1j)
    assert torch.equal(d.cpu(), torch.full((6,), 1j))
    # complex to bool: true when either part is nonzero.
    c = torch.tensor([1j, 0j, 2 + 0j, 0.5 - 3j])
    assert torch.equal(c.to(device).bool().cpu(), c.bool())
    # Python numbers never raise a 0-d tensor's dtype.
    z0 = torch.tensor(1 + 1j)
    for f in (torch.reciprocal, lambda t: t * 2.5, lambda t: 1 / t, lambda t: t * 1j):
        got, want = f(z0.to(device)), f(z0)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got.cpu(), want)
    # abs of a real tensor into a complex out: the CPU's error, not a crash.
    r = torch.tensor([-1.5, 2.0])
    with pytest.raises(RuntimeError, match="Found dtype ComplexFloat but expected Float"):
        torch.abs(r, out=torch.empty(2, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="Found dtype ComplexFloat but expected Float"):
        torch.abs(r.to(device), out=torch.empty(2, dtype=torch.complex64, device=device))
