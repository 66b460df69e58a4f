"""Tessera as a PyTorch device.

Importing this package (PyTorch does it on ``import torch`` through the
``torch.backends`` entry point) loads the C++ extension, which registers the
allocator, device guard, hooks, generators and aten kernels for PyTorch's
PrivateUse1 key, then renames that key to ``tessera`` and installs the
device module ``torch.tessera``.
"""



def _autoload():
    """The ``torch.backends`` entry point: importing the package is all.

    Defined before ``import torch`` so that ``import torch_tessera`` on its
    own works: torch's autoload then finds this module half-imported and
    needs only this function from it.
    """


import atexit  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from . import _C  # noqa: F401  (registers everything C++ side)
from . import device_module as _device_module  # noqa: E402
from . import distributed as _distributed  # noqa: E402
from . import dlpack as _dlpack  # noqa: E402

__all__ = [
    "device_libraries",
    "fallback_stats",
    "reset_fallback_stats",
    "set_fallback_enabled",
    "fallback_enabled",
    "runtime_fallback_stats",
]


def _register():
    if torch._C._get_privateuse1_backend_name() != "tessera":
        torch.utils.rename_privateuse1_backend("tessera")
    if not hasattr(torch, "tessera"):
        torch._register_device_module("tessera", _device_module)
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_storage=True, for_packed_sequence=True
        )
    _distributed._register()  # the "tessera" torch.distributed backend
    _dlpack.install()


_register()


def _other_accelerator():
    """Whether a device type beside tessera has autograd device threads
    that its users may rely on (CUDA, XPU, MPS)."""
    xpu = getattr(torch, "xpu", None)
    mps = getattr(torch.backends, "mps", None)
    return (torch.cuda.is_available() or (xpu is not None and xpu.is_available())
            or (mps is not None and mps.is_available()))


def _backward_on_the_calling_thread():
    """Runs tessera's backward passes on the thread that calls backward(),
    as CPU tensors' are.

    PyTorch's autograd engine gives every device type but CPU a worker
    thread per device and hands each backward's nodes to it: two thread
    wake-ups per backward() call, about 90 us on a 2-core machine, more
    than a small model's whole backward. Tessera's kernels return once
    their work is enqueued (or done, on the CPU-backed device), so the
    handoff buys no overlap. The engine's switch for this is thread-local
    and covers every device type, so it is set here only for the
    importing thread and only when no other accelerator is present;
    TESSERA_AUTOGRAD_DEVICE_THREADS=1 keeps the engine's device threads.
    """
    import os

    if os.environ.get("TESSERA_AUTOGRAD_DEVICE_THREADS", "0") not in ("", "0"):
        return
    if _other_accelerator():
        return
    torch.autograd.set_multithreading_enabled(False)


_backward_on_the_calling_thread()


def _release_gil_before_exit():
    """Lets autograd's tessera device thread finish before finalization.

    After a backward, that thread may still hold the last reference to the
    finished graph task, whose destructor takes the GIL to drop a Python
    object. If it gets the GIL only after interpreter finalization has
    begun, Python ends the thread inside that destructor and the process
    aborts ("terminate called without an active exception"). Sleeping
    releases the GIL while the interpreter is still whole.
    """
    time.sleep(0.05)


atexit.register(_release_gil_before_exit)


def device_libraries():
    """The device libraries (libtessera_<device>.so) the package loaded at
    import: [{"path", "loaded", "error"}]. A device whose library failed to
    load is absent from torch.tessera; "error" says why."""
    return list(_C.device_libraries())


def fallback_stats():
    """aten ops that ran through the CPU fallback: {op name: calls}."""
    return dict(_C.fallback_stats())


def reset_fallback_stats():
    _C.reset_fallback_stats()
    _C.reset_runtime_fallback_stats()


def set_fallback_enabled(enabled: bool):
    """Off: an op with no tessera kernel raises NotImplementedError."""
    _C.set_fallback_enabled(bool(enabled))


def fallback_enabled() -> bool:
    return bool(_C.fallback_enabled())


def runtime_fallback_stats():
    """Runtime ops that ran on the host because their device lacks a kernel."""
    return dict(_C.runtime_fallback_stats())


from .inductor import compile_stats, reset_compile_stats  # noqa: E402,F401  (torch.compile)
