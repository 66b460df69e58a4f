"""The dynamo ``DeviceInterface`` for ``tessera``: how TorchDynamo and
Inductor reach devices, streams, events and memory, mapped onto the device
module ``torch.tessera``.

Importing this module imports ``torch._dynamo``, which costs more than a
second, so ``torch_tessera.inductor`` imports it only once dynamo itself
has been imported (see ``inductor._after_import``).
"""

import dataclasses

import torch
from torch._dynamo.device_interface import (
    DeviceInterface,
    caching_worker_current_devices,
    caching_worker_device_properties,
    register_interface_for_device,
)

from . import device_module as tessera


@dataclasses.dataclass(frozen=True)
class InductorDeviceProperties:
    """What Inductor reads from a device's properties (``name``,
    ``multi_processor_count`` for its split-reduction heuristics) and the
    tessera properties behind them."""

    name: str
    multi_processor_count: int
    host_accessible: bool
    runtime_device: str

    @classmethod
    def of(cls, index: int) -> "InductorDeviceProperties":
        props = tessera.get_device_properties(index)
        return cls(
            name=props.name,
            # A software device (lavapipe) reports no compute units: one
            # keeps Inductor's heuristics, which divide by it, defined.
            multi_processor_count=max(1, props.compute_units),
            host_accessible=props.host_accessible,
            runtime_device=props.runtime_device,
        )


def _index(device: torch.types.Device) -> int:
    if device is None:
        return TesseraInterface.Worker.current_device()
    return tessera._index(device)


def get_raw_stream(device_index: int) -> int:
    """The id of the current stream of tessera:`device_index`: what Inductor's
    generated code calls a raw stream (a ``cudaStream_t`` on CUDA)."""
    return tessera.current_stream(device_index).stream_id


class TesseraInterface(DeviceInterface):
    device = tessera.device  # type: ignore[assignment]
    Event = tessera.Event  # type: ignore[assignment]
    Stream = tessera.Stream  # type: ignore[assignment]

    class Worker:
        """Answers from values cached in the main process, in dynamo's
        dicts (as torch.cuda's Worker does), so that Inductor's forked
        compile workers need not touch the devices."""

        @staticmethod
        def set_device(device: int) -> None:
            caching_worker_current_devices["tessera"] = device

        @staticmethod
        def current_device() -> int:
            if "tessera" in caching_worker_current_devices:
                return caching_worker_current_devices["tessera"]
            return tessera.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> InductorDeviceProperties:
            if "tessera" not in caching_worker_device_properties:
                caching_worker_device_properties["tessera"] = [
                    InductorDeviceProperties.of(i) for i in range(tessera.device_count())]
            properties = caching_worker_device_properties["tessera"]
            index = _index(device)
            if not 0 <= index < len(properties):
                raise ValueError(f"tessera:{index}: no such device (there are "
                                 f"{len(properties)} tessera devices)")
            return properties[index]

    current_device = staticmethod(tessera.current_device)
    set_device = staticmethod(tessera.set_device)
    device_count = staticmethod(tessera.device_count)
    is_available = staticmethod(tessera.is_available)
    stream = staticmethod(tessera.stream)  # type: ignore[assignment]
    current_stream = staticmethod(tessera.current_stream)
    set_stream = staticmethod(tessera.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(tessera.synchronize)
    memory_allocated = staticmethod(tessera.memory_allocated)
    get_raw_stream = staticmethod(get_raw_stream)  # type: ignore[assignment]

    @staticmethod
    def exchange_device(device: int) -> int:
        previous = tessera.current_device()
        if device != previous:
            tessera.set_device(device)
        return previous

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return TesseraInterface.exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        tessera.set_stream(torch.Stream(stream_id=stream_id, device_index=device_index,
                                        device_type=device_type))

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> str:
        # Inductor keys caches on it; tessera's generated kernels are host
        # C++, so there is no device architecture to tell apart (as for cpu).
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return tessera.is_bf16_supported(including_emulation)

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return False

    @staticmethod
    def raise_if_triton_unavailable(device: torch.types.Device = None) -> None:
        raise RuntimeError(
            "tessera devices have no Triton backend: Inductor generates C++ kernels for "
            "them (CppScheduling), which run on the host")


def register() -> None:
    register_interface_for_device("tessera", TesseraInterface)
    try:
        count = tessera.device_count()
    except RuntimeError:
        # A bad TESSERA_VISIBLE_DEVICES: every use of a device reports it;
        # importing dynamo must not.
        count = 0
    for i in range(count):
        register_interface_for_device(f"tessera:{i}", TesseraInterface)

