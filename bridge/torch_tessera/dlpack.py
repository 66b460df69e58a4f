"""DLPack for tessera tensors.

torch's C++ conversion (ATen's DLConvertor) handles PrivateUse1 already:
``torch.utils.dlpack.to_dlpack(x)`` and ``x.__dlpack__()`` describe a
tessera tensor as DLPack device ``(kDLExtDev, index)``, with the address of
its first element as ``data``; ``torch.from_dlpack`` turns a kDLExtDev
capsule back into a ``tessera:index`` tensor over the same memory, through
``at::from_blob``. Such a tensor's memory did not come from the tessera
allocator, so the bridge's kernels borrow it after checking that it is a
live tessera allocation of that device (``bridge/csrc/foreign_memory.h``).

One piece is missing in torch 2.13: ``Tensor.__dlpack_device__`` knows
PrivateUse1 only by the name ``"privateuse1"`` and raises ``ValueError:
Unknown device type tessera for Dlpack`` once the backend is renamed, and
``torch.from_dlpack(x)`` asks it first. ``install()`` wraps the method:
a tessera tensor answers the device torch's C++ exporter writes into its
capsule (``torch._C._torchDeviceToDLDevice``); every other tensor gets
torch's own answer.

A tessera tensor is never exported as ``kDLCPU``, not even on a device whose
memory the host can read (``tessera:0``, the runtime's CPU device): a
consumer would then see host memory with no owner it knows, torch itself
would import it as a CPU tensor (so tessera -> capsule -> tessera would
come back on the wrong device), and whether the export is zero-copy would
depend on the device. NumPy and other host libraries ask for a copy on the
host instead: ``np.from_dlpack(x, device="cpu")`` (torch copies when the
requested DLPack device differs), or ``x.cpu().numpy()``.
"""

import functools

import torch
from torch.overrides import has_torch_function_unary
from torch.utils.dlpack import DLDeviceType

_INSTALLED_MARK = "_tessera_dlpack_device"


def install() -> None:
    """Makes ``Tensor.__dlpack_device__`` answer for tessera tensors (once)."""
    torch_method = torch.Tensor.__dlpack_device__
    if getattr(torch_method, _INSTALLED_MARK, False):
        return

    @functools.wraps(torch_method)
    def __dlpack_device__(self):
        if self.device.type != "tessera" or has_torch_function_unary(self):
            return torch_method(self)
        device_type, index = torch._C._torchDeviceToDLDevice(self.device)
        return (DLDeviceType(device_type), index)

    setattr(__dlpack_device__, _INSTALLED_MARK, True)
    torch.Tensor.__dlpack_device__ = __dlpack_device__
