"""Inductor as of torch 2.13 decides "this node gets C++ kernels" in two
places by comparing the device type with "cpu", with no registry an
out-of-tree device can join; every other device type is taken for Triton.
Tessera's nodes get C++ kernels (``CppScheduling``), so this module widens
those two checks to ``tessera`` (the bridge's only changes to Inductor;
``dlpack.py`` and ``distributed.py`` explain the others):

- ``torch._inductor.utils.get_current_backend``: the code generator of the
  device being compiled ("cpp" for cpu, else ``config.cuda_backend``,
  "triton"). Inductor's C++ kernels read it while generating code (dtype
  propagation of each value, masked loads): "triton" there produces
  broken kernels or assertion errors.
- ``torch._inductor.scheduler.BaseSchedulerNode.is_cpu``, which the
  scheduler asks only to keep nodes away from fusion rewrites its C++
  backend does not support (loop reindexing and index inversion across a
  fusion, which assume Triton's (numel, rnumel) loop groups).

Both keep their answer for every other device.
"""

import sys

import torch._inductor.utils as inductor_utils
from torch._inductor.scheduler import BaseSchedulerNode
from torch._inductor.virtualized import V

# Devices whose nodes Inductor generates C++ kernels for.
_CPP_DEVICE_TYPES = ("cpu", "tessera")

_torch_get_current_backend = inductor_utils.get_current_backend


def get_current_backend(device_type: str = None) -> str:
    if not device_type:
        device_type = V.graph.get_current_device_or_throw().type
    if device_type == "tessera":
        return "cpp"
    return _torch_get_current_backend(device_type)


def _is_cpp_node(node: BaseSchedulerNode) -> bool:
    device = node.get_device()
    return device is not None and device.type in _CPP_DEVICE_TYPES


def install() -> None:
    if BaseSchedulerNode.is_cpu is _is_cpp_node:
        return
    BaseSchedulerNode.is_cpu = _is_cpp_node
    # Modules that imported the function by name hold their own reference;
    # those imported later take it from inductor_utils.
    for name, module in list(sys.modules.items()):
        if (name.startswith("torch._inductor")
                and getattr(module, "get_current_backend", None) is _torch_get_current_backend):
            module.get_current_backend = get_current_backend
