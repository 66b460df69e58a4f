"""PyTorch's OpInfo samples run on a tessera device against the CPU: the
comparisons the bridge's op tests share."""

import itertools

import torch
import torch_tessera
from torch.utils._pytree import tree_flatten, tree_map

from bridge_testing import assert_no_fallback


def opinfo_name(op):
    """"name", or "name.variant" (interpolate's modes are variants)."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def to_device(tree, device):
    return tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, tree)


def assert_same(actual, expected, what, **tolerances):
    """Same structure; tensors on tessera, of the same dtype, equal within
    assert_close's tolerances (NaN equal to NaN); other leaves equal."""
    actual_leaves, _ = tree_flatten(actual)
    expected_leaves, _ = tree_flatten(expected)
    assert len(actual_leaves) == len(expected_leaves), what
    for a, e in zip(actual_leaves, expected_leaves):
        if isinstance(e, torch.Tensor):
            assert a.device.type == "tessera", what
            assert a.dtype == e.dtype, what
            torch.testing.assert_close(a.cpu(), e, equal_nan=True, **tolerances,
                                       msg=lambda m: f"{what}: {m}")
        else:
            assert a == e, what


def total(out):
    """A weighted sum of every floating output (some ops return several).
    The weights are random but fixed by each output's shape, so a backward
    that misplaces gradient entries shows (an all-ones gradient would not)."""
    leaves = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)
              and t.dtype.is_floating_point]
    terms = []
    for t in leaves:
        g = torch.Generator().manual_seed(t.numel())
        weights = torch.rand(t.shape, generator=g, dtype=torch.float64) + 0.5
        terms.append((t * weights.to(t.device, t.dtype)).sum())
    return sum(terms)


def describe(sample):
    def one(v):
        return f"Tensor{list(v.shape)}:{v.dtype}" if isinstance(v, torch.Tensor) else repr(v)
    return f"input={tree_map(one, sample.input)} args={tree_map(one, sample.args)} " \
           f"kwargs={tree_map(one, sample.kwargs)}"


def compare_forward(op, device, dtype, limit, samples=None, comparable=None, **tolerances):
    """op's reference inputs (or `samples`) on device and on the CPU: equal
    results, no CPU fallback. `comparable(sample, out)`, when given, maps
    each result to what is compared (for outputs PyTorch leaves partly
    unspecified). Returns how many samples were compared."""
    samples = op.reference_inputs("cpu", dtype) if samples is None else samples
    compared = 0
    for sample in itertools.islice(samples, limit):
        args = (sample.input, *sample.args)
        try:
            expected = op(*args, **sample.kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError):
            continue  # the reference rejects the sample
        torch_tessera.reset_fallback_stats()
        actual = op(*to_device(args, device), **to_device(sample.kwargs, device))
        assert_no_fallback()
        if comparable is not None:
            actual, expected = comparable(sample, actual), comparable(sample, expected)
        assert_same(actual, expected, describe(sample), **tolerances)
        compared += 1
    return compared


def compare_backward(op, device, limit, dtype=torch.float32, **tolerances):
    """The gradients of every differentiable input of op's samples, for the
    sum of its outputs, on device and on the CPU: equal, no CPU fallback.
    Returns how many samples were compared."""
    compared = 0
    samples = op.sample_inputs("cpu", dtype, requires_grad=True)
    for sample in itertools.islice(samples, limit):
        leaves = [t for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0]
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        out = op(sample.input, *sample.args, **sample.kwargs)
        grads = torch.autograd.grad(total(out), leaves, allow_unused=True)

        moved = [t.detach().to(device).requires_grad_() for t in leaves]
        swap = dict(zip(map(id, leaves), moved))
        rebuilt = tree_map(lambda v: swap.get(id(v), v.to(device) if isinstance(v, torch.Tensor)
                                              else v), (sample.input, sample.args, sample.kwargs))
        torch_tessera.reset_fallback_stats()
        out_dev = op(rebuilt[0], *rebuilt[1], **rebuilt[2])
        grads_dev = torch.autograd.grad(total(out_dev), moved, allow_unused=True)
        assert_no_fallback()
        for g_dev, g in zip(grads_dev, grads):
            assert (g_dev is None) == (g is None), describe(sample)
            if g is not None:
                assert_same(g_dev, g, describe(sample), **tolerances)
        compared += 1
    return compared
