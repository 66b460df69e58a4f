"""Shared setup for the tessera module's tests (no PyTorch needed).

The module is imported from the source tree (bindings/), where ./dev and
`pip install -e ./bindings` put the extension and the runtime libraries;
an installed copy takes its place when there is none there.
"""

import os
import sys

import pytest

_BINDINGS = os.path.join(os.path.dirname(__file__), "..", "..", "bindings")
if os.path.exists(os.path.join(_BINDINGS, "tessera", "_tessera.so")):
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
