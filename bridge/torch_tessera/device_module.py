"""``torch.tessera``: the device module, in the style of ``torch.cuda``.

Everything here reaches the runtime through the C++ extension: devices
(device_list), streams and events (the device guard, through torch.Stream,
torch.Event and torch.accelerator), memory (the runtime's caching
allocator, through torch.accelerator's memory functions) and random numbers
(one Philox generator per device).
"""

import dataclasses
from typing import Any, Optional, Union

import torch

from . import _C
from . import memory_report as _memory_report

_device_t = Union[torch.device, str, int, None]


def _index(device: _device_t = None) -> int:
    """The tessera index of `device` (None: the current device)."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "tessera":
            raise ValueError(f"expected a tessera device, got {device}")
        return current_device() if device.index is None else device.index
    raise TypeError(f"expected a torch.device, str or int, got {type(device).__name__}")


def _dev(device: _device_t) -> torch.device:
    return torch.device("tessera", _index(device))


# -- Devices.
def is_available() -> bool:
    return device_count() > 0


def is_initialized() -> bool:
    """Loading the extension initializes the runtime: always True."""
    return True


def init() -> None:
    """Nothing is lazy: loading the extension initializes the runtime."""


def _lazy_init() -> None:
    """Called by PyTorch before first use of a PrivateUse1 device."""


def device_count() -> int:
    return _C.device_count()


def current_device() -> int:
    return _C.current_device()


def set_device(device: _device_t) -> None:
    _C.set_device(_index(device))


@dataclasses.dataclass(frozen=True)
class _DeviceProperties:
    """What the runtime reports about a tessera device."""

    name: str
    vendor: str
    runtime_device: str  # the runtime device behind it, e.g. "cpu:0"
    total_memory: int  # bytes
    compute_units: int  # cores, SMs, compute units
    host_accessible: bool  # device memory is readable by the host
    software: bool  # emulated on the host's CPU (lavapipe); listed after the CPU device
    supports_f16: bool
    supports_f64: bool
    supports_i64: bool
    native_index: int  # the driver's number for it (CUDA ordinal); -1 for the host


def get_device_properties(device: _device_t = None) -> _DeviceProperties:
    return _DeviceProperties(**_C.get_device_properties(_index(device)))


def get_device_name(device: _device_t = None) -> str:
    return _C.get_device_name(_index(device))


def get_device_capability(device: _device_t = None) -> dict:
    """``{"supported_dtypes": {...}}``, as torch.accelerator reports it."""
    return torch.accelerator.get_device_capability(_dev(device))


def synchronize(device: _device_t = None) -> None:
    """Waits for all work on every stream of the device."""
    _C.synchronize(_index(device))


class device:
    """Context manager that makes `device` the current tessera device."""

    def __init__(self, device: _device_t):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = current_device()
        if self.idx != self.prev_idx:
            set_device(self.idx)

    def __exit__(self, *args: Any):
        if self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of a tessera tensor current."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "tessera" else current_device())


# -- Streams and events: torch's generic classes, which reach the runtime
# through the device guard.
class Stream(torch.Stream):
    """A new tessera stream (``torch.Stream`` on a tessera device)."""

    def __new__(cls, device: _device_t = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=_dev(device), priority=priority)


class Event(torch.Event):
    """A tessera event (``torch.Event`` on a tessera device)."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False):
        return super().__new__(cls, device="tessera", enable_timing=enable_timing,
                               blocking=blocking, interprocess=interprocess)


def current_stream(device: _device_t = None) -> torch.Stream:
    return torch.accelerator.current_stream(_dev(device))


def default_stream(device: _device_t = None) -> torch.Stream:
    idx = _index(device)
    return torch.Stream(stream_id=0, device_index=idx,
                        device_type=current_stream(idx).device_type)


def set_stream(stream: torch.Stream) -> None:
    """Makes `stream` current on its device (not the current device)."""
    torch.accelerator.set_stream(stream)


class StreamContext:
    """Makes `stream` and its device current for a block, then restores
    both. ``None`` changes nothing."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self.prev_device = -1
        self.prev_stream: Optional[torch.Stream] = None

    def __enter__(self):
        if self.stream is None:
            return self.stream
        self.prev_device = current_device()
        self.prev_stream = current_stream(self.stream.device_index)
        if self.stream.device_index != self.prev_device:
            set_device(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *args: Any):
        if self.stream is None:
            return False
        set_stream(self.prev_stream)
        if self.stream.device_index != self.prev_device:
            set_device(self.prev_device)
        return False


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    return StreamContext(stream)


# -- Memory: the runtime's caching allocator, through torch.accelerator.
def memory_stats(device: _device_t = None) -> dict:
    return torch.accelerator.memory_stats(_dev(device))


def memory_allocated(device: _device_t = None) -> int:
    return torch.accelerator.memory_allocated(_dev(device))


def max_memory_allocated(device: _device_t = None) -> int:
    return torch.accelerator.max_memory_allocated(_dev(device))


def memory_reserved(device: _device_t = None) -> int:
    return torch.accelerator.memory_reserved(_dev(device))


def max_memory_reserved(device: _device_t = None) -> int:
    return torch.accelerator.max_memory_reserved(_dev(device))


def reset_peak_memory_stats(device: _device_t = None) -> None:
    torch.accelerator.reset_peak_memory_stats(_dev(device))


def reset_accumulated_memory_stats(device: _device_t = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_dev(device))


def empty_cache() -> None:
    """Returns the cached free memory of every tessera device."""
    torch.accelerator.empty_cache()


def mem_get_info(device: _device_t = None) -> tuple:
    """(free, total) bytes of the device, as the runtime reports them."""
    return torch.accelerator.get_memory_info(_dev(device))


def set_per_process_memory_fraction(fraction: float, device: _device_t = None) -> None:
    """Caps the bytes the caching allocator may reserve on the device at
    fraction * total memory (0 < fraction <= 1)."""
    _C.set_memory_fraction(float(fraction), _index(device))


def get_per_process_memory_fraction(device: _device_t = None) -> float:
    return _C.get_memory_fraction(_index(device))


def memory_snapshot(device: _device_t = None) -> list:
    """The caching allocator's segments, each with its blocks, as
    torch.cuda.memory_snapshot() lists them (same keys and block states:
    "active_allocated", "active_pending_free", "inactive"). Addresses are
    device addresses, not host pointers on every device. None: every
    tessera device, as torch.cuda's; otherwise that device only."""
    indices = range(device_count()) if device is None else [_index(device)]
    return [segment for i in indices for segment in _C.memory_snapshot(i)]


def memory_summary(device: _device_t = None, abbreviated: bool = False) -> str:
    """A readable report of the device's caching allocator: its statistics
    (current, peak, totals) and, unless abbreviated, what its segments hold
    now, per segment type."""
    idx = _index(device)
    title = (f"tessera:{idx} ({get_device_name(idx)}, runtime device "
             f"{_C.runtime_device(idx)}): caching allocator memory")
    segments = None if abbreviated else _C.memory_snapshot(idx)
    return _memory_report.summary(title, memory_stats(idx), segments)


# -- Random numbers: Philox generators in the runtime, one per device, so
# one seed gives the same values on every tessera device.
def default_generator(device: _device_t = None) -> torch.Generator:
    return _C.default_generator(_index(device))


def __getattr__(name: str):
    # default_generators, as torch.cuda has it; computed on use, since the
    # device list may be an error (a bad TESSERA_VISIBLE_DEVICES).
    if name == "default_generators":
        return tuple(_C.default_generator(i) for i in range(device_count()))
    # Inductor's code generators for the device (torch.compile), imported
    # on first use: see torch_tessera.inductor.
    from . import inductor

    if name in inductor.CODEGEN_NAMES:
        return inductor.codegen_class(name)
    raise AttributeError(f"module 'torch.tessera' has no attribute '{name}'")


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device's generator (torch.manual_seed calls this)."""
    for i in range(device_count()):
        _C.default_generator(i).manual_seed(int(seed))


def seed() -> None:
    """Seeds the current device's generator with a random number."""
    default_generator().seed()


def seed_all() -> None:
    """Seeds every device's generator with one random number."""
    if device_count() == 0:
        return
    manual_seed_all(_C.default_generator(0).seed())


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_rng_state(device: _device_t = "tessera") -> torch.Tensor:
    """The device generator's state: a uint8 CPU tensor (seed, offset)."""
    return default_generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _device_t = "tessera") -> None:
    default_generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def _is_in_bad_fork() -> bool:
    """No fork tracking: False, so torch.manual_seed always seeds tessera."""
    return False


# -- Autocast: torch.autocast("tessera") checks the dtype against this list.
def get_amp_supported_dtype() -> list:
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True
