"""Shared setup for the tessera module's tests (no PyTorch needed).

The module is imported from the source tree (bindings/), where ./dev and
`pip install -e ./bindings` put the extension and the runtime libraries;
an installed copy takes its place when there is none there. A module that
PYTHONPATH names explicitly comes first (tools/gpu_check runs these tests
with a module built for another Python than the source tree's).
"""

import os
import sys

import pytest


def _has_module(directory):
    return os.path.exists(os.path.join(directory, "tessera", "_tessera.so"))


_BINDINGS = os.path.join(os.path.dirname(__file__), "..", "..", "bindings")
_FROM_PYTHONPATH = any(_has_module(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                       if p)
if _has_module(_BINDINGS) and not _FROM_PYTHONPATH:
    sys.path.insert(0, os.path.abspath(_BINDINGS))

import tessera  # noqa: E402

# The device types every test runs on; one that is absent shows as skipped.
DEVICE_TYPES = ("cpu", "vulkan", "cuda")


def _device_params():
    present = {d.type for d in tessera.devices()}
    params = []
    for kind in DEVICE_TYPES:
        marks = [] if kind in present else [pytest.mark.skip(reason=f"no {kind} device")]
        params.append(pytest.param(f"{kind}:0", marks=marks, id=kind))
    return params


DEVICES = _device_params()


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device type in turn (its device 0)."""
    return tessera.device(request.param)
