"""``torch.tessera``: the device module, in the style of ``torch.cuda``."""

import contextlib
from typing import Any, Optional, Union

import torch

from . import _C

_device_t = Union[torch.device, str, int, None]


def _index(device: _device_t = None, optional: bool = True) -> int:
    """The tessera index of device (None: the current device)."""
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
    raise TypeError(f"expected a device, str or int, got {type(device).__name__}")


def is_available() -> bool:
    return _C.device_count() > 0


def is_initialized() -> bool:
    return True


def _lazy_init():
    """Nothing is lazy: loading the extension initializes the runtime."""


def device_count() -> int:
    return _C.device_count()


def current_device() -> int:
    return _C.current_device()


def set_device(device: _device_t) -> None:
    _C.set_device(_index(device))


def get_device_name(device: _device_t = None) -> str:
    return _C.get_device_name(_index(device))


def get_device_properties(device: _device_t = None) -> dict:
    return _C.get_device_properties(_index(device))


def get_device_capability(device: _device_t = None) -> dict:
    return torch.accelerator.get_device_capability(torch.device("tessera", _index(device)))


def synchronize(device: _device_t = None) -> None:
    _C.synchronize(_index(device))


class device:
    """Context manager that changes the current tessera device."""

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
    """Context manager that makes the device of a tensor current."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "tessera" else current_device())


# -- Streams and events: torch's generic classes, which reach the runtime
# through the device guard.
class Stream(torch.Stream):
    """A tessera stream (``torch.Stream`` on a tessera device)."""

    def __new__(cls, device: _device_t = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=torch.device("tessera", _index(device)), priority=priority)


class Event(torch.Event):
    """A tessera event (``torch.Event`` on a tessera device)."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        return super().__new__(cls, device="tessera", enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)


def current_stream(device: _device_t = None) -> torch.Stream:
    return torch.accelerator.current_stream(torch.device("tessera", _index(device)))


def default_stream(device: _device_t = None) -> torch.Stream:
    idx = _index(device)
    device_type = current_stream(idx).device_type
    return torch.Stream(stream_id=0, device_index=idx, device_type=device_type)


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(stream: Optional[torch.Stream]):
    """Makes `stream` current for the block (None: no change)."""
    if stream is None:
        yield
        return
    previous = current_stream(stream.device)
    set_stream(stream)
    try:
        yield
    finally:
        set_stream(previous)


# -- Memory: the runtime's caching allocator through torch.accelerator.
def _dev(device: _device_t) -> torch.device:
    return torch.device("tessera", _index(device))


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
    torch.accelerator.empty_cache()


def mem_get_info(device: _device_t = None) -> tuple:
    return torch.accelerator.get_memory_info(_dev(device))


def set_per_process_memory_fraction(fraction: float, device: _device_t = None) -> None:
    _C.set_memory_fraction(float(fraction), _index(device))


# -- Random numbers: Philox generators in the runtime, one per device.
def default_generator(device: _device_t = None) -> torch.Generator:
    return _C.default_generator(_index(device))


def manual_seed(seed: int) -> None:
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        _C.default_generator(i).manual_seed(int(seed))


def seed() -> None:
    default_generator().seed()


def seed_all() -> None:
    for i in range(device_count()):
        _C.default_generator(i).seed()


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_rng_state(device: _device_t = None) -> torch.Tensor:
    return default_generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _device_t = None) -> None:
    default_generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def _is_in_bad_fork() -> bool:
    return False


# -- Autocast.
def get_amp_supported_dtype() -> list:
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True
