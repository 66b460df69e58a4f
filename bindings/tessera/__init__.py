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

from . import _tessera
from ._tessera import *  # noqa: F401,F403
from ._tessera import Tensor, device, dtype  # noqa: F401

__version__ = "0.1.0"


def _dtype_by_name(name: str) -> "dtype":
    """The dtype called name ("float32"); pickling dtypes goes through it."""
    return getattr(_tessera, name)


from . import nn  # noqa: E402,F401
