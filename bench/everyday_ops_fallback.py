"""Which of the ops everyday models call run natively on each tessera device.

For each op below (forward, and backward where autograd calls an op of its
own), runs one representative call on every tessera device and reads
torch_tessera.fallback_stats(): an op is native on a device when the call
sent nothing through the CPU fallback. Prints one table and the totals:

    .venv/bin/python bench/everyday_ops_fallback.py

Not a benchmark (nothing is timed) and not a test (it never fails): a
report of where the CPU fallback is still needed.
"""

import torch
import torch.nn.functional as F
import torch_tessera


def _x(device, *shape, low=-2.0, high=2.0, grad=False):
    g = torch.Generator().manual_seed(0)
    t = (torch.rand(*shape, generator=g) * (high - low) + low).to(device)
    return t.requires_grad_() if grad else t


def _backward(fn):
    """fn(device) returns (output, inputs); the report is for the backward only."""
    def run(device):
        out, inputs = fn(device)
        torch_tessera.reset_fallback_stats()
        torch.autograd.grad(out.float().square().sum(), inputs)
    return run


def _unary(name, low=-2.0, high=2.0):
    return lambda d: getattr(torch, name)(_x(d, 4, 5, low=low, high=high))


# (label, call): each call takes a device.
OPS = [
    ("log10", _unary("log10", 0.1, 3.0)),
    ("sinh", _unary("sinh")),
    ("cosh", _unary("cosh")),
    ("asin", _unary("asin", -1.0, 1.0)),
    ("acos", _unary("acos", -1.0, 1.0)),
    ("atan", _unary("atan")),
    ("asinh", _unary("asinh")),
    ("acosh", _unary("acosh", 1.0, 3.0)),
    ("atanh", _unary("atanh", -0.9, 0.9)),
    ("hardswish", lambda d: F.hardswish(_x(d, 4, 5, low=-5, high=5))),
    ("hardsigmoid", lambda d: F.hardsigmoid(_x(d, 4, 5, low=-5, high=5))),
    ("hardswish backward", _backward(lambda d: (lambda x: (F.hardswish(x), [x]))(
        _x(d, 4, 5, low=-5, high=5, grad=True)))),
    ("hardsigmoid backward", _backward(lambda d: (lambda x: (F.hardsigmoid(x), [x]))(
        _x(d, 4, 5, low=-5, high=5, grad=True)))),
    ("isneginf", lambda d: torch.isneginf(_x(d, 4, 5))),
    ("isposinf", lambda d: torch.isposinf(_x(d, 4, 5))),
    ("fmod", lambda d: torch.fmod(_x(d, 4, 5), 0.7)),
    ("logaddexp", lambda d: torch.logaddexp(_x(d, 4, 5), _x(d, 5))),
    ("logaddexp2", lambda d: torch.logaddexp2(_x(d, 4, 5), _x(d, 5))),
    ("binary_cross_entropy_with_logits",
     lambda d: F.binary_cross_entropy_with_logits(_x(d, 4, 5), _x(d, 4, 5, low=0, high=1),
                                                  pos_weight=_x(d, 5, low=0.5, high=2))),
    ("binary_cross_entropy_with_logits backward", _backward(lambda d: (lambda x: (
        F.binary_cross_entropy_with_logits(x, _x(d, 4, 5, low=0, high=1),
                                           weight=_x(d, 5, low=0, high=1)), [x]))(
        _x(d, 4, 5, grad=True)))),
    ("adaptive_avg_pool2d", lambda d: F.adaptive_avg_pool2d(_x(d, 2, 3, 7, 9), (3, 5))),
    ("adaptive_avg_pool2d backward", _backward(lambda d: (lambda x: (
        F.adaptive_avg_pool2d(x, (3, 5)), [x]))(_x(d, 2, 3, 7, 9, grad=True)))),
    ("aminmax", lambda d: torch.aminmax(_x(d, 4, 5), dim=1)),
    ("cross", lambda d: torch.linalg.cross(_x(d, 4, 3), _x(d, 4, 3))),
    ("cdist", lambda d: torch.cdist(_x(d, 2, 5, 3), _x(d, 2, 4, 3))),
    ("cdist backward", _backward(lambda d: (lambda a, b: (torch.cdist(a, b), [a, b]))(
        _x(d, 2, 5, 3, grad=True), _x(d, 2, 4, 3, grad=True)))),
    ("cummax", lambda d: torch.cummax(_x(d, 4, 5), dim=1)),
    ("cummin", lambda d: torch.cummin(_x(d, 4, 5), dim=1)),
    ("median", lambda d: torch.median(_x(d, 4, 5), dim=1)),
    ("kthvalue", lambda d: torch.kthvalue(_x(d, 4, 5), 2, dim=1)),
    ("unfold (im2col)", lambda d: F.unfold(_x(d, 1, 2, 5, 5), kernel_size=3)),
    ("unfold backward (col2im)", _backward(lambda d: (lambda x: (
        F.unfold(x, kernel_size=3), [x]))(_x(d, 1, 2, 5, 5, grad=True)))),
    ("Tensor.unfold backward", _backward(lambda d: (lambda x: (
        x.unfold(1, 3, 2), [x]))(_x(d, 4, 9, grad=True)))),
    ("masked_scatter", lambda d: _x(d, 4, 5).masked_scatter(_x(d, 4, 5) > 0, _x(d, 20))),
    ("masked_scatter backward", _backward(lambda d: (lambda x, s: (
        x.masked_scatter(_x(d, 4, 5) > 0, s), [x, s]))(_x(d, 4, 5, grad=True),
                                                      _x(d, 20, grad=True)))),
    ("cummax backward", _backward(lambda d: (lambda x: (
        torch.cummax(x, dim=1)[0], [x]))(_x(d, 4, 5, grad=True)))),
    ("median backward", _backward(lambda d: (lambda x: (
        torch.median(x, dim=1)[0], [x]))(_x(d, 4, 5, grad=True)))),
    ("upsample_nearest2d", lambda d: F.interpolate(_x(d, 1, 2, 3, 4), scale_factor=2)),
    ("upsample_nearest2d backward", _backward(lambda d: (lambda x: (
        F.interpolate(x, scale_factor=2), [x]))(_x(d, 1, 2, 3, 4, grad=True)))),
    ("upsample_bilinear2d", lambda d: F.interpolate(_x(d, 1, 2, 3, 4), size=(5, 7),
                                                    mode="bilinear")),
    ("upsample_bilinear2d backward", _backward(lambda d: (lambda x: (
        F.interpolate(x, size=(5, 7), mode="bilinear"), [x]))(_x(d, 1, 2, 3, 4, grad=True)))),
]


def main():
    devices = [torch.device("tessera", i) for i in range(torch.tessera.device_count())]
    names = [torch.tessera.get_device_properties(i).runtime_device
             for i in range(len(devices))]
    print("| op | " + " | ".join(f"{d} ({n})" for d, n in zip(devices, names)) + " |")
    print("|---|" + "---|" * len(devices))
    native = [0] * len(devices)
    for label, call in OPS:
        cells = []
        for k, device in enumerate(devices):
            torch_tessera.reset_fallback_stats()
            try:
                call(device)
                stats = torch_tessera.fallback_stats()
            except Exception as e:  # reported, not raised: this is a survey
                cells.append(f"error: {type(e).__name__}")
                continue
            if stats:
                cells.append("fallback: " + ", ".join(sorted(stats)))
            else:
                cells.append("native")
                native[k] += 1
        print(f"| {label} | " + " | ".join(cells) + " |")
    for device, n in zip(devices, native):
        print(f"{device}: {n} of {len(OPS)} ops with zero CPU fallback")


if __name__ == "__main__":
    main()
