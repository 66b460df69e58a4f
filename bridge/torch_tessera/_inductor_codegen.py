"""Inductor code generation for tessera devices.

- Kernels: Inductor's C++ scheduling (``CppScheduling``), as for ``cpu``,
  with the parallel loops on oneTBB instead of OpenMP and bool masks
  loaded and stored by vector code (``TesseraScheduling`` in
  ``_inductor_kernels``).
  Its kernels run on the host; ``host_kernels.run_host_kernel`` hands them
  the tensors themselves on host-addressable devices and host copies on
  the others.
- Wrapper: Python wrapper code (``PythonWrapperCodegen``) that allocates
  buffers on the graph's own ``tessera:N`` (Inductor's generic allocation
  names only the device type, which would put them on the current device)
  and calls each generated kernel through ``run_host_kernel``. Ops Inductor
  does not generate code for (mm, convolution, ...) stay aten calls, which
  run natively through the bridge.
- The C++ wrapper (``torch._inductor.config.cpp_wrapper``) and AOTInductor
  are not supported: asking for them is an error naming the device.

Importing this module imports Inductor's code generators (about a second):
``torch_tessera.inductor`` imports it only when Inductor asks the device
module ``torch.tessera`` for them.
"""

import torch
from torch._inductor.codegen.common import DeviceOpOverrides, register_device_op_overrides
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen
from torch._inductor.virtualized import V

from . import _inductor_cpp_device
from ._inductor_kernels import TesseraScheduling

_RUN_HOST_KERNEL = "tessera_run_host_kernel"


class TesseraDeviceOpOverrides(DeviceOpOverrides):
    """The device calls Inductor writes into generated Python code."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_tessera._dynamo_interface import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.tessera.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.tessera.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.tessera.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.tessera.current_stream()"

    def cpp_kernel_type(self) -> str:
        return "void*"


def _written_positions(arg_types, count: int) -> tuple:
    """Positions of the arguments a C++ kernel may write: its pointer
    parameters without const (``float*``, not ``const float*``). Without
    types, all `count` of them: the staged path then copies every one back."""
    if arg_types is None:
        return tuple(range(count))
    return tuple(i for i, t in enumerate(arg_types)
                 if isinstance(t, str) and t.rstrip().endswith("*")
                 and not t.lstrip().startswith("const "))


class _TesseraWrapperLines:
    """What the tessera wrappers (graph and subgraph) write differently."""

    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None, triton=True,
                                     arg_types=None, **kwargs):
        device = device or V.graph.get_current_device_or_throw()
        if device.type != "tessera":
            return super()._generate_kernel_call_helper(
                kernel_name, call_args, device=device, triton=triton, arg_types=arg_types,
                **kwargs)
        if triton:
            raise RuntimeError(
                f"Inductor asked for a Triton kernel ({kernel_name}) on {device}: tessera "
                "devices take C++ kernels only")
        written = _written_positions(arg_types, len(call_args))
        args = "".join(f"{arg}, " for arg in call_args)
        self.writeline(
            f"{_RUN_HOST_KERNEL}({kernel_name}, {device.index}, ({args}), {written!r})")

    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None,
                        is_pinned=False):
        if device.type != "tessera":
            return super().make_allocation(name, device, dtype, shape, stride,
                                           allocation_shape, is_pinned)
        if allocation_shape is None:
            allocation_shape = shape
        shape_code = self.codegen_python_shape_tuple(shape)
        allocation_shape_code = self.codegen_python_shape_tuple(allocation_shape)
        stride_code = self.codegen_python_shape_tuple(stride)
        line = (f"{name} = empty_strided({allocation_shape_code}, {stride_code}, "
                f"device='{device}', dtype={dtype})")
        if shape_code != allocation_shape_code:
            line += f".as_strided({shape_code}, {stride_code})"
        return line


class TesseraSubgraphWrapperCodegen(_TesseraWrapperLines, SubgraphPythonWrapperCodegen):
    """Wrapper code of a subgraph (torch.cond branches, loop bodies)."""


def _reject_stream_ops(graph_module) -> None:
    """Stream calls traced into the graph (``s.synchronize()``,
    ``wait_stream``, events on a stream passed in): torch 2.13's Inductor
    fuses the kernels around them out of order for C++ kernels and the
    generated code fails (a freed input), so they are an error here."""
    modules = graph_module.modules() if graph_module is not None else ()
    for module in modules:
        graph = getattr(module, "graph", None)
        for node in graph.nodes if isinstance(graph, torch.fx.Graph) else ():
            if getattr(node.target, "namespace", None) == "streams":
                raise NotImplementedError(
                    f"torch.compile on tessera: the stream operation {node.target} inside "
                    "the compiled function is not supported; make stream and event calls "
                    "outside it")


class TesseraWrapperCodegen(_TesseraWrapperLines, PythonWrapperCodegen):
    """Python wrapper code for a graph on a tessera device."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        _reject_stream_ops(V.graph.module)
        if is_subgraph:
            return TesseraSubgraphWrapperCodegen(subgraph_name, parent_wrapper,
                                                 partition_signatures)
        return TesseraWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline(
            f"from torch_tessera.host_kernels import run_host_kernel as {_RUN_HOST_KERNEL}")


class TesseraCppWrapperCodegen(CppWrapperCpu):
    """Stands in for a C++ wrapper, which tessera lacks: Inductor registers a
    device's backends only with one, and asks for it only when
    ``torch._inductor.config.cpp_wrapper`` (or AOTInductor) is on."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        raise NotImplementedError(
            "torch.compile on tessera devices generates a Python wrapper only: "
            "torch._inductor.config.cpp_wrapper and AOTInductor are not supported "
            "for device type 'tessera'")


CODEGEN = {
    "Scheduling": TesseraScheduling,
    "PythonWrapperCodegen": TesseraWrapperCodegen,
    "CppWrapperCodegen": TesseraCppWrapperCodegen,
    "WrapperFxCodegen": WrapperFxCodegen,
}

register_device_op_overrides("tessera", TesseraDeviceOpOverrides())
_inductor_cpp_device.install()
