"""Tessera: tensors on CPU, CUDA and Vulkan devices from Python, without PyTorch.

    import tessera
    x = tessera.ones(2, 3, device="vulkan:0")
    y = (x * 2).sum(dim=1)
    print(y.cpu().tolist())

The functions and the Tensor class come from the C++ extension
``tessera._tessera`` over the runtime (libtessera.so) and the device
libraries (libtessera_<device>.so) that sit in this package; every op
releases the GIL while it runs. ``tessera.nn.functional`` holds the neural
network ops. See docs/bindings.md for the whole API.
"""

# Annotations stay strings: the stubs (generate_stubs.py) copy them from the
# functions below, and numpy is imported only when a conversion needs it.
from __future__ import annotations

# Annotations say builtins.bool: `import *` below binds bool, int and float
# to tessera's dtypes of those names.
import builtins
import typing

from . import _tessera
from ._tessera import *  # noqa: F401,F403
from ._tessera import Tensor, device, dtype  # noqa: F401

# PyTorch's underscore-named multi-tensor, fused optimizer and gradient
# scaler ops (tessera._foreach_add_, tessera._fused_adam_,
# tessera._amp_update_scale_, ...), which `import *` skips.
globals().update({name: value for name, value in vars(_tessera).items()
                  if name.startswith(("_foreach_", "_fused_", "_amp_"))})

if typing.TYPE_CHECKING:
    import numpy.typing

__version__ = "0.1.0"


def _dtype_by_name(name: str) -> "dtype":
    """The dtype called name ("float32"); pickling dtypes goes through it."""
    return getattr(_tessera, name)


def _numpy(self: Tensor, *, force: builtins.bool = False) -> numpy.typing.NDArray[typing.Any]:
    """The tensor as a NumPy array sharing its memory (host devices only;
    with force=True, a tensor elsewhere is copied to the host first)."""
    import numpy

    t = self.cpu() if force else self
    return numpy.asarray(t)


def _array(self: Tensor, dtype: typing.Any = None,
           copy: builtins.bool | None = None) -> numpy.typing.NDArray[typing.Any]:
    """NumPy's conversion hook: a view of host memory through the buffer
    protocol; a tensor on a device the host cannot address raises (NumPy
    would otherwise read it element by element)."""
    import numpy

    if not get_device_properties(self.device)["host_accessible"]:  # noqa: F405
        raise TypeError(f"can't convert a tensor on {self.device} to a NumPy array; "
                        "copy it to the host with .cpu() first")
    # The buffer protocol is installed in C (interop.cc), out of the stubs' sight.
    array = numpy.asarray(memoryview(self))  # type: ignore[arg-type]
    if dtype is not None and array.dtype != dtype:
        return array.astype(dtype)
    return array.copy() if copy else array


def _rebuild_tensor(data: bytes, dtype_name: str, shape: tuple, device_text: str) -> "Tensor":
    """Unpickles a tensor: its values (row-major bytes of dtype_name, or
    float32 for bfloat16, which has no buffer format) on device_text."""
    stored = _tessera.float32 if dtype_name == "bfloat16" else getattr(_tessera, dtype_name)
    flat = empty(len(data) // stored.itemsize, dtype=stored)  # noqa: F405
    if data:
        memoryview(flat).cast("B")[:] = data  # type: ignore[arg-type]
    return flat.view(shape).to(device(device_text), getattr(_tessera, dtype_name))  # noqa: F405


def _reduce(self: "Tensor") -> tuple:
    """Pickling (and copy.deepcopy): the values, dtype, shape and device.
    The copy is a new tensor; views do not stay views of a shared base."""
    host = self.cpu()
    if self.dtype == _tessera.bfloat16:
        host = host.float()
    host = host.contiguous()
    name = str(self.dtype).split(".", 1)[1]
    return (_rebuild_tensor, (bytes(memoryview(host)), name, tuple(self.shape),
                              str(self.device)))


# Methods added to the extension's class (the stubs list them as Tensor's).
setattr(Tensor, "__reduce__", _reduce)  # mypy: stubs differ on whether Tensor declares it
Tensor.numpy = _numpy  # type: ignore[method-assign]
Tensor.__array__ = _array  # type: ignore[method-assign]
Tensor.__array_priority__ = 1000  # NumPy defers to Tensor's reflected operators


class stream:
    """Context manager: ``with tessera.stream(s):`` makes s the current stream
    of its device for the block, then restores the previous one (None: no
    change)."""

    def __init__(self, s: Stream | None) -> None:  # noqa: F405
        self.stream = s
        self._previous: Stream | None = None  # noqa: F405

    def __enter__(self) -> Stream | None:  # noqa: F405
        if self.stream is not None:
            self._previous = current_stream(self.stream.device)  # noqa: F405
            set_stream(self.stream)  # noqa: F405
        return self.stream

    def __exit__(self, *exc: object) -> typing.Literal[False]:
        if self._previous is not None:
            set_stream(self._previous)  # noqa: F405
        return False


from . import nn  # noqa: E402,F401
# `import *` has bound the name already, to the extension's submodule (the
# functions special.py re-exports), which this import keeps.
from . import special  # type: ignore[no-redef]  # noqa: E402,F401
