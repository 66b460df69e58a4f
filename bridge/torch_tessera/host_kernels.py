"""How Inductor's generated C++ kernels run on tessera tensors.

Inductor compiles the fused parts of a graph on a tessera device into C++
kernels that run on the host and read and write raw data pointers (see
``torch_tessera.inductor``). The generated wrapper calls every such kernel
through ``run_host_kernel``, which picks one of two paths per call:

- direct: the device's memory is host-addressable, so the kernel gets the
  tensors themselves. The runtime's host device (``cpu:N``) runs every op
  on the calling thread before returning, so its tensors are ready; on any
  other host-addressable device the current stream is synchronized first;
- staged (the slow path, until a device has its own codegen): the
  device's data pointers are device addresses (Vulkan, CUDA), which host
  code must never dereference. The kernel's tensor arguments are copied to
  host memory, the kernel runs on those copies, and the bytes it may have
  written are copied back.

The choice is made when the kernel runs, from the device index the graph
was compiled for, rather than baked into the generated code: Inductor
caches compiled graphs on disk, and another process may map the same
``tessera:N`` to another device (``TESSERA_VISIBLE_DEVICES``).

Both paths are counted; ``compile_stats()`` reports the counts. Importing
this module loads the kernels' thread pool (libtorch_tessera_host_parallel.so).

Generated code that Inductor cached on disk calls ``run_host_kernel`` too,
possibly from an older version of this package: keep its signature.
"""

import ctypes
import os
from typing import Callable, Sequence

import torch

from . import device_module as _tessera

# The thread pool of the kernels' parallel loops (see _inductor_kernels.py),
# which the kernels find by its soname once it is loaded; kept referenced
# for the life of the process.
_HOST_PARALLEL = ctypes.CDLL(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtorch_tessera_host_parallel.so"))

_STAT_NAMES = (
    "host_kernel_calls",  # generated kernels run on tessera tensors, either path
    "staged_kernel_calls",  # of those, run on host copies (device memory not host-addressable)
    "staged_bytes_to_host",  # bytes copied device -> host for staged calls
    "staged_bytes_to_device",  # bytes copied back host -> device after staged calls
)
_stats = dict.fromkeys(_STAT_NAMES, 0)

# How a host kernel reaches a device's tensors (see the module docstring).
_DIRECT, _DIRECT_AFTER_SYNC, _STAGED = range(3)
_launch_modes: dict = {}  # tessera index -> one of the above

# Host copies start at a multiple of this many bytes of their device
# storage, so every dtype's elements keep their alignment.
_SPAN_ALIGNMENT = 64


def compile_stats() -> dict:
    """Counts of Inductor-generated kernels that ran on tessera tensors:
    ``host_kernel_calls`` (all of them), ``staged_kernel_calls`` (those on
    devices whose memory the host cannot address, which ran on host copies
    of their arguments: the slow path) and the bytes those copies moved
    (``staged_bytes_to_host``, ``staged_bytes_to_device``)."""
    return dict(_stats)


def reset_compile_stats() -> None:
    for name in _STAT_NAMES:
        _stats[name] = 0


def _launch_mode(device_index: int) -> int:
    mode = _launch_modes.get(device_index)
    if mode is None:
        props = _tessera.get_device_properties(device_index)
        if not props.host_accessible:
            mode = _STAGED
        elif props.runtime_device.startswith("cpu:"):
            mode = _DIRECT
        else:
            mode = _DIRECT_AFTER_SYNC
        _launch_modes[device_index] = mode
    return mode


def run_host_kernel(kernel: Callable, device_index: int, args: Sequence,
                    written: Sequence[int]) -> None:
    """Runs a generated host kernel on the arguments of a graph compiled for
    tessera:`device_index`. `written` lists the positions of the tensor
    arguments the kernel may write (its non-const pointer parameters)."""
    _stats["host_kernel_calls"] += 1
    mode = _launch_mode(device_index)
    if mode == _DIRECT:
        kernel(*args)
    elif mode == _DIRECT_AFTER_SYNC:
        _tessera.current_stream(device_index).synchronize()
        kernel(*args)
    else:
        _run_staged(kernel, device_index, args, written)


class _StorageSpan:
    """The bytes [begin, end) of one device storage that a kernel call
    touches, with their host copy once staged."""

    __slots__ = ("storage", "begin", "end", "write_begin", "write_end", "device_bytes",
                 "host_bytes")

    def __init__(self, storage, begin: int, end: int):
        self.storage = storage
        self.begin, self.end = begin, end
        self.write_begin, self.write_end = end, begin  # empty until a write is added
        self.device_bytes = None
        self.host_bytes = None

    def add(self, begin: int, end: int, written: bool) -> None:
        self.begin, self.end = min(self.begin, begin), max(self.end, end)
        if written:
            self.write_begin = min(self.write_begin, begin)
            self.write_end = max(self.write_end, end)


def _byte_range(t: torch.Tensor) -> tuple:
    """The bytes of t's storage that t's elements occupy: [first, last + 1)."""
    itemsize = t.element_size()
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    begin = t.storage_offset() * itemsize
    return begin, begin + (last + 1) * itemsize


def _run_staged(kernel: Callable, device_index: int, args: Sequence,
                written: Sequence[int]) -> None:
    written = set(written)
    device = torch.device("tessera", device_index)
    # One host copy per device storage, covering every argument that lives
    # in it: arguments that alias on the device alias on the host too.
    spans: dict = {}
    staged = []  # (argument position, tensor, its storage's span key)
    for position, arg in enumerate(args):
        if not isinstance(arg, torch.Tensor) or arg.device.type != "tessera":
            continue  # sizes, and 0-d CPU scalars the kernel may read
        if arg.device != device:
            raise RuntimeError(
                f"a kernel compiled for {device} got an argument on {arg.device} "
                f"(position {position}, shape {tuple(arg.shape)}, dtype {arg.dtype})")
        if arg.numel() == 0:
            staged.append((position, arg, None))
            continue
        begin, end = _byte_range(arg)
        storage = arg.untyped_storage()
        key = storage.data_ptr()
        span = spans.get(key)
        if span is None:
            span = spans[key] = _StorageSpan(storage, begin, end)
        span.add(begin, end, position in written)
        staged.append((position, arg, key))

    for span in spans.values():
        span.begin -= span.begin % _SPAN_ALIGNMENT
        span.device_bytes = torch.empty(0, dtype=torch.uint8, device=device).set_(
            span.storage, span.begin, (span.end - span.begin,), (1,))
        span.host_bytes = span.device_bytes.cpu()
        _stats["staged_bytes_to_host"] += span.end - span.begin

    host_args = list(args)
    for position, arg, key in staged:
        if key is None:
            host_args[position] = torch.empty_strided(arg.shape, arg.stride(), dtype=arg.dtype)
            continue
        span = spans[key]
        begin, _ = _byte_range(arg)
        host_args[position] = torch.empty(0, dtype=arg.dtype).set_(
            span.host_bytes.untyped_storage(), (begin - span.begin) // arg.element_size(),
            arg.shape, arg.stride())

    kernel(*host_args)

    for span in spans.values():
        if span.write_begin >= span.write_end:
            continue
        lo, hi = span.write_begin - span.begin, span.write_end - span.begin
        span.device_bytes[lo:hi].copy_(span.host_bytes[lo:hi])
        _stats["staged_bytes_to_device"] += hi - lo
    _stats["staged_kernel_calls"] += 1
