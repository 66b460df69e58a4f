"""torch's multi-tensor _foreach_* ops on tessera (bridge/csrc/ops/foreach.cc
over the runtime's foreach_pointwise).

PyTorch's own foreach OpInfos (foreach_unary_op_db, foreach_binary_op_db,
foreach_pointwise_op_db, foreach_other_op_db: lists of 20 tensors of
shrinking shapes, with list, scalar, scalar-list and tensor operands) run
on every tessera device against the CPU, functional and in place. Then:
plain lists take the multi-tensor route (no per-tensor aten op runs), the
lists that route cannot take (integers, mixed dtypes, an in-place list
whose entries share memory) give aten's per-tensor results, and the
optimizers' foreach implementations and clip_grad_norm_ train like CPU.
"""

import copy
import itertools

import pytest
import torch
import torch_tessera
from torch.testing._internal.common_methods_invocations import (
    foreach_binary_op_db, foreach_other_op_db, foreach_pointwise_op_db, foreach_reduce_op_db,
    foreach_unary_op_db)

from bridge_testing import assert_no_fallback, every_device
from opinfo_testing import assert_same, describe, to_device

# The ops the bridge routes (the rest of the dbs stay on aten's loop).
ROUTED = {"_foreach_add", "_foreach_sub", "_foreach_mul", "_foreach_div", "_foreach_clamp_min",
          "_foreach_clamp_max", "_foreach_minimum", "_foreach_maximum", "_foreach_pow",
          "_foreach_addcmul", "_foreach_addcdiv", "_foreach_lerp", "_foreach_neg",
          "_foreach_abs", "_foreach_sign", "_foreach_sqrt", "_foreach_rsqrt",
          "_foreach_reciprocal", "_foreach_exp", "_foreach_log", "_foreach_sigmoid",
          "_foreach_tanh", "_foreach_acos", "_foreach_asin", "_foreach_atan", "_foreach_cos",
          "_foreach_cosh", "_foreach_log10", "_foreach_log2", "_foreach_tan", "_foreach_sin",
          "_foreach_sinh", "_foreach_ceil", "_foreach_erf", "_foreach_expm1",
          "_foreach_floor", "_foreach_log1p", "_foreach_round", "_foreach_trunc",
          "_foreach_norm", "_foreach_zero"}
OPS = [op for op in foreach_unary_op_db + foreach_binary_op_db + foreach_pointwise_op_db
       + foreach_other_op_db + foreach_reduce_op_db if op.name in ROUTED]
DTYPES = [torch.float32, torch.float64, torch.bfloat16]
SAMPLES = 6  # per op and dtype: every operand form the db generates comes early


def tolerances(dtype):
    # A few ulp: the devices' transcendental functions (Vulkan's pow, exp)
    # are not the CPU's.
    return {torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-2},
            torch.float32: {"rtol": 1e-5, "atol": 1e-5}}.get(dtype, {})


def samples(op, dtype):
    return itertools.islice(op.sample_inputs("cpu", dtype, noncontiguous=False), SAMPLES)


def clone_tree(v):
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, (list, tuple)):
        return type(v)(clone_tree(x) for x in v)
    return v


@every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_matches_cpu(device, op, dtype):
    compared = 0
    for sample in samples(op, dtype):
        args, kwargs = (sample.input, *sample.args), sample.kwargs
        try:
            expected = op.op(*args, **kwargs)
        except (RuntimeError, TypeError, ValueError):
            continue  # the CPU refuses the sample (e.g. an integer scalar list for pow)
        torch_tessera.reset_fallback_stats()
        actual = op.op(*to_device(args, device), **to_device(kwargs, device))
        assert_no_fallback()
        assert_same(actual, expected, describe(sample), **tolerances(dtype))
        compared += 1
        if op.inplace_variant is None:
            continue
        cpu_args, dev_args = clone_tree(args), to_device(clone_tree(args), device)
        try:
            op.inplace_variant(*cpu_args, **kwargs)
        except (RuntimeError, TypeError, ValueError):
            continue  # e.g. an in-place op whose result would change dtype
        op.inplace_variant(*dev_args, **to_device(kwargs, device))
        assert_same(dev_args[0], cpu_args[0], "in place: " + describe(sample), **tolerances(dtype))
    assert compared > 0


def aten_calls(fn):
    with torch.profiler.profile() as prof:
        fn()
    return {e.key for e in prof.key_averages()}


def params(device, dtype=torch.float32, n=5):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(3 + i, 4, generator=g, dtype=dtype).to(device) for i in range(n)]


@every_device
def test_plain_lists_take_the_multi_tensor_route(device):
    a, b, c = params(device), params(device), params(device)
    calls = aten_calls(lambda: (torch._foreach_add_(a, b, alpha=0.5), torch._foreach_mul_(a, 2.0),
                                torch._foreach_addcdiv_(a, b, c, [0.1] * 5),
                                torch._foreach_lerp_(a, b, 0.3), torch._foreach_sqrt(b)))
    per_tensor = {"aten::add_", "aten::mul_", "aten::addcdiv_", "aten::lerp_", "aten::sqrt"}
    assert not calls & per_tensor, calls & per_tensor


@every_device
def test_norm_zero_and_copy_take_the_multi_tensor_route(device):
    grads, src = params(device), params(device, dtype=torch.float64)
    cpu_grads, cpu_src = [g.cpu() for g in grads], [s.cpu() for s in src]
    calls = aten_calls(lambda: (torch._foreach_norm(grads, 2.0), torch._foreach_norm(grads, 1.0),
                                torch._foreach_copy_(grads, src)))
    assert not calls & {"aten::linalg_vector_norm", "aten::copy_"}, calls
    torch._foreach_copy_(cpu_grads, cpu_src)
    assert_same(grads, cpu_grads, "_foreach_copy_ with a cast")
    for order in (2.0, 1.0, float("inf"), 3.0):
        assert_same(torch._foreach_norm(grads, order), torch._foreach_norm(cpu_grads, order),
                    f"_foreach_norm {order}", rtol=1e-5, atol=1e-5)
    assert_same(torch._foreach_norm(grads, 2.0, dtype=torch.float64),
                torch._foreach_norm(cpu_grads, 2.0, dtype=torch.float64), "norm into float64")
    # 16-bit lists, one of mixed dtypes, with 0-d and empty entries.
    for dtype in (torch.float16, torch.bfloat16):
        low = [g.to(dtype) for g in params(device)] + [torch.ones((), dtype=dtype, device=device),
                                                       torch.ones(0, 3, dtype=dtype, device=device)]
        mixed = low + [g.float() for g in low]
        for order in (2.0, 1.0, float("inf")):
            keep = mixed if order != float("inf") else [t for t in mixed if t.numel()]
            assert_same(torch._foreach_norm(keep, order),
                        torch._foreach_norm([t.cpu() for t in keep], order),
                        f"_foreach_norm {order} of a {dtype} and float32 list", rtol=1e-2, atol=1e-3)
    assert "aten::zero_" not in aten_calls(lambda: torch._foreach_zero_(grads))
    assert all(g.abs().sum().item() == 0 for g in grads)
    # Lists the route refuses (integers; a host source) give aten's results.
    ints = [torch.arange(6) + i for i in range(3)]
    ints_dev = to_device(ints, device)
    torch._foreach_zero_(ints_dev)
    assert all(t.sum().item() == 0 for t in ints_dev)
    host = [torch.randn(3 + i, 4) for i in range(5)]
    torch._foreach_copy_(grads, host)
    assert_same(grads, host, "_foreach_copy_ from the host")


@every_device
def test_lists_the_route_refuses_give_aten_results(device):
    ints = [torch.arange(6).reshape(2, 3) + i for i in range(3)]
    mixed = [torch.randn(4), torch.randn(4, dtype=torch.float64)]
    for fn in (lambda x: torch._foreach_add(x, 2), lambda x: torch._foreach_div(x, 3),
               lambda x: torch._foreach_mul(x, x)):
        for lst in (ints, mixed):
            assert_same(fn(to_device(lst, device)), fn(lst), "refused list")
    # One tensor twice in an in-place list: aten applies the entries in order.
    w = torch.randn(5)
    w_dev = w.to(device)
    torch._foreach_add_([w, w], [torch.ones(5), torch.ones(5)])
    torch._foreach_add_([w_dev, w_dev], [torch.ones(5, device=device)] * 2)
    assert_same(w_dev, w, "repeated in-place entry")
    # Entries that read another entry's output, in place.
    x, y = torch.randn(4), torch.randn(4)
    x_dev, y_dev = x.to(device), y.to(device)
    torch._foreach_add_([x, y], [y, x])
    torch._foreach_add_([x_dev, y_dev], [y_dev, x_dev])
    assert_same([x_dev, y_dev], [x, y], "crossed in-place entries")


@every_device
def test_a_device_tensor_operand_and_tensor_scalars(device):
    a, b, c = params(device), params(device), params(device)
    lr = torch.tensor(0.25)
    values = torch.tensor([0.5, -1.0, 2.0, 0.0, 3.0])
    got = torch._foreach_mul(a, lr.to(device))
    want = torch._foreach_mul([t.cpu() for t in a], lr)
    assert_same(got, want, "mul by a 0-d device tensor")
    got = torch._foreach_addcmul([t for t in a], b, c, values.to(device))
    want = torch._foreach_addcmul(*[[t.cpu() for t in lst] for lst in (a, b, c)], values)
    assert_same(got, want, "addcmul with a tensor of scalars")


@every_device
def test_misuse_is_refused_clearly(device):
    a = params(device)
    with pytest.raises(RuntimeError, match="same"):
        torch._foreach_add(a, a[:3])
    with pytest.raises(RuntimeError):
        torch._foreach_add(a, [t.t() for t in a])  # shapes do not match


@every_device
@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD,
                                 torch.optim.RMSprop, torch.optim.Adagrad, torch.optim.NAdam],
                         ids=lambda c: c.__name__)
def test_foreach_optimizers_and_clipping_train_like_cpu(device, cls):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.GELU(),
                                torch.nn.Linear(16, 3))
    model_dev = copy.deepcopy(model).to(device)
    kwargs = {"lr": 0.05, "foreach": True}
    if cls is torch.optim.SGD:
        kwargs.update(momentum=0.9, nesterov=True)
    opts = [cls(model.parameters(), **kwargs), cls(model_dev.parameters(), **kwargs)]
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        x, y = torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)
        for m, opt, dev in ((model, opts[0], "cpu"), (model_dev, opts[1], device)):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x.to(dev)), y.to(dev)).backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5, foreach=True)
            opt.step()
    for p_dev, p in zip(model_dev.parameters(), model.parameters()):
        torch.testing.assert_close(p_dev.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5)
