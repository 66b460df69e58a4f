"""``torch.compile`` with Inductor (the default backend) on tessera devices.

PyTorch finds a PrivateUse1 device's compiler pieces in two registries,
both inside modules that take over a second to import; ``import torch``
must not pay for them, so this module (imported with the package) only
arranges for them to be filled when they are first needed:

- TorchDynamo's device interface registry
  (``torch._dynamo.device_interface``), read while tracing (streams,
  events) and by Inductor (devices, properties, synchronize): the tessera
  interface (``_dynamo_interface.py``) is registered right after that
  module has been imported, by an import hook (``_after_import``).
- Inductor's code generators: when Inductor first lowers a graph it asks
  the PrivateUse1 device module (``torch.tessera``) for ``Scheduling``,
  ``PythonWrapperCodegen``, ``CppWrapperCodegen`` and ``WrapperFxCodegen``
  (``torch._inductor.codegen.common.init_backend_registration``); the
  device module answers through ``codegen_class``, which imports
  ``_inductor_codegen.py`` (which also registers the device's op
  overrides).

How the generated kernels run on each device, and what is counted, is in
``host_kernels.py``.
"""

import importlib.abc
import sys

from .host_kernels import compile_stats, reset_compile_stats  # noqa: F401

_DEVICE_INTERFACE_MODULE = "torch._dynamo.device_interface"

# The names Inductor looks up on the device module, in
# torch._inductor.codegen.common.init_backend_registration.
CODEGEN_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def codegen_class(name: str):
    """The Inductor code generator `name` (one of CODEGEN_NAMES) for tessera."""
    from ._inductor_codegen import CODEGEN

    return CODEGEN[name]


def _register_device_interface(_module=None) -> None:
    from . import _dynamo_interface

    _dynamo_interface.register()


class _LoaderThenCallback(importlib.abc.Loader):
    """Runs the module's own loader, then a callback on the module."""

    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # The module keeps its own loader (source lookups, reloads).
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._callback(module)


class _after_import(importlib.abc.MetaPathFinder):
    """An import hook that calls `callback(module)` right after the module
    `fullname` is first imported, then removes itself. The module is found
    and loaded by the finders and loader that would have handled it."""

    def __init__(self, fullname: str, callback):
        self._fullname = fullname
        self._callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self._fullname:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        sys.meta_path.remove(self)
        if spec.loader is not None:
            spec.loader = _LoaderThenCallback(spec.loader, self._callback)
        return spec


def _install() -> None:
    if _DEVICE_INTERFACE_MODULE in sys.modules:  # dynamo came first
        _register_device_interface()
    else:
        sys.meta_path.insert(0, _after_import(_DEVICE_INTERFACE_MODULE,
                                              _register_device_interface))


_install()
