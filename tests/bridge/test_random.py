"""Random ops on tessera: uniform_, normal_, random_, bernoulli and dropout
draw from the runtime's Philox generators, so one seed gives the same values
on every tessera device and through every path (torch.rand, uniform_, a
torch.Generator). Values are checked for range and rough statistics; none
of these ops may run through the CPU fallback."""

import pytest
import torch
import torch_tessera

FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ERRORS = (RuntimeError, TypeError, ValueError)


def assert_no_fallback():
    stats = torch_tessera.fallback_stats()
    assert stats == {}, f"ops ran through the CPU fallback: {stats}"


def devices():
    return [torch.device("tessera", i) for i in range(torch.tessera.device_count())]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_uniform_range_and_mean(tessera, dtype):
    torch.tessera.manual_seed(1)
    x = torch.empty(20000, dtype=dtype, device=tessera).uniform_(-2, 3)
    c = x.cpu().double()
    assert c.min() >= -2 and c.max() <= 3
    assert abs(c.mean().item() - 0.5) < 0.05
    assert c.unique().numel() > 100
    assert_no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_normal_statistics(tessera, dtype):
    torch.tessera.manual_seed(2)
    x = torch.empty(20000, dtype=dtype, device=tessera).normal_(1.5, 2.0)
    c = x.cpu().double()
    assert abs(c.mean().item() - 1.5) < 0.1
    assert abs(c.std().item() - 2.0) < 0.1
    y = torch.randn(4, 5, dtype=dtype, device=tessera)
    assert y.shape == (4, 5) and y.dtype == dtype
    assert_no_fallback()


def test_same_seed_same_values_every_path_and_device(tessera):
    draws = []
    for dev in devices():
        # manual_seed seeds the current device only (as torch.cuda's does).
        torch.tessera.manual_seed_all(123)
        a = torch.rand(257, device=dev)
        torch.tessera.manual_seed_all(123)
        b = torch.empty(257, device=dev).uniform_()
        g = torch.Generator(device=dev).manual_seed(123)
        c = torch.empty(257, device=dev).uniform_(generator=g)
        torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)
        torch.testing.assert_close(a.cpu(), c.cpu(), rtol=0, atol=0)
        draws.append(a.cpu())
    for d in draws[1:]:
        torch.testing.assert_close(d, draws[0], rtol=0, atol=0)
    assert_no_fallback()


def test_successive_draws_differ_and_state_restores(tessera):
    torch.tessera.manual_seed(7)
    state = torch.tessera.get_rng_state()
    a = torch.randn(100, device=tessera).cpu()
    b = torch.randn(100, device=tessera).cpu()
    assert not torch.equal(a, b)
    torch.tessera.set_rng_state(state)
    torch.testing.assert_close(torch.randn(100, device=tessera).cpu(), a, rtol=0, atol=0)
    assert_no_fallback()


def test_generator_does_not_advance_default(tessera):
    torch.tessera.manual_seed(5)
    expected = torch.rand(10, device=tessera).cpu()
    torch.tessera.manual_seed(5)
    g = torch.Generator(device=tessera).manual_seed(99)
    torch.rand(10, device=tessera, generator=g)
    torch.testing.assert_close(torch.rand(10, device=tessera).cpu(), expected, rtol=0, atol=0)
    assert_no_fallback()


def test_noncontiguous_fill(tessera):
    torch.tessera.manual_seed(3)
    base = torch.zeros(6, 8, device=tessera)
    base[:, ::2].uniform_(1, 2)
    c = base.cpu()
    assert (c[:, 1::2] == 0).all()
    assert ((c[:, ::2] >= 1) & (c[:, ::2] <= 2)).all()
    base.t().normal_()
    assert base.cpu().std() > 0.5
    assert_no_fallback()


# -- random_ ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                   torch.int32, torch.int16, torch.int8, torch.uint8],
                         ids=str)
def test_random_from_to(tessera, dtype):
    torch.tessera.manual_seed(4)
    x = torch.empty(5000, dtype=dtype, device=tessera).random_(-3 if dtype != torch.uint8
                                                                else 3, 9)
    c = x.cpu().double()
    low = -3 if dtype != torch.uint8 else 3
    assert c.min() == low and c.max() == 8
    assert torch.equal(c, c.round())
    y = torch.empty(5000, dtype=dtype, device=tessera).random_(5)
    c = y.cpu().double()
    assert c.min() == 0 and c.max() == 4
    z = torch.randint(2, 6, (100,), dtype=dtype, device=tessera).cpu().double()
    assert z.min() >= 2 and z.max() <= 5
    assert_no_fallback()


@pytest.mark.parametrize("dtype,upper", [(torch.uint8, 255), (torch.int8, 127),
                                         (torch.int16, 32767), (torch.float16, 2048),
                                         (torch.float32, 2 ** 24), (torch.bool, 1)],
                         ids=str)
def test_random_default_range(tessera, dtype, upper):
    torch.tessera.manual_seed(6)
    c = torch.empty(20000, dtype=dtype, device=tessera).random_().cpu().double()
    assert c.min() >= 0 and c.max() <= upper
    assert c.max() > upper / 2
    c = torch.empty(1000, dtype=dtype, device=tessera).random_(1, None).cpu().double()
    assert c.min() >= 1 and c.max() <= upper
    assert_no_fallback()


def test_random_errors(tessera):
    x = torch.empty(3, device=tessera)
    with pytest.raises(ERRORS, match="from"):
        x.random_(5, 5)
    with pytest.raises(ERRORS):
        torch.empty(3, dtype=torch.uint8, device=tessera).random_(0, 1000)
    with pytest.raises(ERRORS):
        torch.empty(3, dtype=torch.int64, device=tessera).uniform_()
    with pytest.raises(ERRORS):
        x.normal_(0, -1)


# -- bernoulli --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int64,
                                   torch.bool], ids=str)
def test_bernoulli_float_p(tessera, dtype):
    torch.tessera.manual_seed(8)
    x = torch.empty(20000, dtype=dtype, device=tessera).bernoulli_(0.3)
    c = x.cpu().double()
    assert set(c.unique().tolist()) <= {0.0, 1.0}
    assert abs(c.mean().item() - 0.3) < 0.03
    assert (torch.empty(50, dtype=dtype, device=tessera).bernoulli_(0.0).cpu() == 0).all()
    assert (torch.empty(50, dtype=dtype, device=tessera).bernoulli_(1.0).cpu() == 1).all()
    assert_no_fallback()


def test_bernoulli_tensor_p(tessera):
    torch.tessera.manual_seed(9)
    p = torch.tensor([0.0, 1.0, 0.5]).repeat(4000).to(tessera)
    r = torch.bernoulli(p).cpu()
    assert r.dtype == torch.float32
    assert (r[0::3] == 0).all() and (r[1::3] == 1).all()
    assert abs(r[2::3].mean().item() - 0.5) < 0.05
    s = torch.empty(12000, dtype=torch.float64, device=tessera).bernoulli_(p).cpu()
    assert (s[0::3] == 0).all() and (s[1::3] == 1).all()
    o = torch.empty(0, device=tessera)
    torch.bernoulli(p, out=o)
    assert o.shape == p.shape and (o.cpu()[1::3] == 1).all()
    q = torch.bernoulli(torch.full((1000,), 0.25, device=tessera), 0.75).cpu()
    assert abs(q.mean().item() - 0.75) < 0.06
    assert_no_fallback()


def test_bernoulli_same_seed_same_values(tessera):
    p = torch.full((500,), 0.5, device=tessera)
    torch.tessera.manual_seed(11)
    a = torch.bernoulli(p).cpu()
    torch.tessera.manual_seed(11)
    b = torch.empty(500, device=tessera).bernoulli_(p).cpu()
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert_no_fallback()


def test_bernoulli_errors(tessera):
    with pytest.raises(ERRORS, match="p"):
        torch.empty(3, device=tessera).bernoulli_(1.5)
    with pytest.raises(ERRORS):
        torch.bernoulli(torch.ones(3, dtype=torch.int64, device=tessera))


# -- dropout ----------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_native_dropout(tessera, p):
    torch.tessera.manual_seed(12)
    x = torch.randn(4000, device=tessera)
    out, mask = torch.ops.aten.native_dropout(x, p, True)
    assert mask.dtype == torch.bool and out.device == x.device
    xc, oc, mc = x.cpu(), out.cpu(), mask.cpu()
    scale = 0.0 if p == 1 else 1 / (1 - p)
    torch.testing.assert_close(oc, xc * mc * scale)
    assert abs(mc.float().mean().item() - (1 - p)) < 0.05
    g = torch.randn(4000, device=tessera)
    gi = torch.ops.aten.native_dropout_backward(g, mask, scale)
    torch.testing.assert_close(gi.cpu(), g.cpu() * mc * scale)
    assert_no_fallback()


def test_native_dropout_eval(tessera):
    x = torch.randn(10, device=tessera)
    out, mask = torch.ops.aten.native_dropout(x, 0.5, False)
    torch.testing.assert_close(out.cpu(), x.cpu())
    assert mask.cpu().all()
    assert_no_fallback()


def test_dropout_module_trains_and_is_reproducible(tessera):
    drop = torch.nn.Dropout(0.5)
    x = torch.randn(64, 32, device=tessera, requires_grad=True)
    torch.tessera.manual_seed(13)
    y = drop(x)
    y.backward(torch.ones_like(y))  # (sum would need a reduction kernel)
    zeroed = (y.detach().cpu() == 0)
    torch.testing.assert_close(x.grad.cpu(), (~zeroed).float() * 2.0)
    torch.tessera.manual_seed(13)
    torch.testing.assert_close(drop(x).detach().cpu(), y.detach().cpu(), rtol=0, atol=0)
    drop.eval()
    torch.testing.assert_close(drop(x).detach().cpu(), x.detach().cpu())
    assert_no_fallback()


def test_dropout_errors(tessera):
    with pytest.raises(ERRORS, match="probability|between"):
        torch.ops.aten.native_dropout(torch.ones(3, device=tessera), 1.5, True)


# -- normal with tensor mean/std, randperm ----------------------------------

def test_normal_tensor_mean_and_std(tessera):
    torch.tessera.manual_seed(14)
    mean = torch.tensor([-5.0, 0.0, 5.0]).repeat(4000).to(tessera)
    std = torch.tensor([0.5, 1.0, 2.0]).repeat(4000).to(tessera)
    for r in [torch.normal(mean, 1.0), torch.normal(mean, std),
              torch.normal(2.0, std), torch.normal(mean, std, out=torch.empty(0, device=tessera))]:
        assert r.device.type == "tessera" and r.shape == mean.shape
    c = torch.normal(mean, std).cpu()
    for k, (m, s) in enumerate([(-5.0, 0.5), (0.0, 1.0), (5.0, 2.0)]):
        assert abs(c[k::3].mean().item() - m) < 0.1
        assert abs(c[k::3].std().item() - s) < 0.1
    c = torch.normal(2.0, std).cpu()
    assert abs(c.mean().item() - 2.0) < 0.1
    b = torch.normal(torch.zeros(3, 1, device=tessera), torch.ones(1, 4, device=tessera))
    assert b.shape == (3, 4)
    with pytest.raises(ERRORS, match="std"):
        torch.normal(mean, -1.0)
    with pytest.raises(ERRORS, match="std"):
        torch.normal(mean, -std)
    assert_no_fallback()


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32], ids=str)
def test_randperm(tessera, dtype):
    torch.tessera.manual_seed(15)
    p = torch.randperm(1000, dtype=dtype, device=tessera)
    assert p.device.type == "tessera" and p.dtype == dtype
    assert torch.equal(p.cpu().sort().values, torch.arange(1000, dtype=dtype))
    assert not torch.equal(p.cpu(), torch.arange(1000, dtype=dtype))
    torch.tessera.manual_seed(15)
    torch.testing.assert_close(torch.randperm(1000, dtype=dtype, device=tessera).cpu(), p.cpu(),
                               rtol=0, atol=0)
    assert torch.randperm(0, device=tessera).numel() == 0
    assert_no_fallback()


def test_randperm_too_large_for_dtype_raises(tessera):
    with pytest.raises(ERRORS, match="too large"):
        torch.randperm(300, dtype=torch.uint8, device=tessera)
