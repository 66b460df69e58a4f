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

Inductor caches compiled graphs on disk (FX graph and AOT autograd caches)
under a key that knows torch's sources but not tessera's code generators,
so after an upgrade of the bridge a process would get the old kernels
back. Tessera's registration therefore carries a graph pass that changes
nothing (``CodegenVersionPass``) and whose ``uuid``, a hash of the code
generators' sources, Inductor puts in those keys: an import hook on
``torch._inductor.codegen.common`` wraps ``register_backend_for_device``
so that Inductor's own registration of the PrivateUse1 device passes it.
"""

import hashlib
import importlib.abc
import os
import sys

from .host_kernels import compile_stats, reset_compile_stats  # noqa: F401

_DEVICE_INTERFACE_MODULE = "torch._dynamo.device_interface"
_CODEGEN_COMMON_MODULE = "torch._inductor.codegen.common"
_DEVICE_TYPE = "tessera"

# The sources that decide what Inductor generates for tessera.
CODEGEN_SOURCES = ("_inductor_codegen.py", "_inductor_kernels.py", "_inductor_cpp_device.py")

# The names Inductor looks up on the device module, in
# torch._inductor.codegen.common.init_backend_registration.
CODEGEN_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def codegen_class(name: str):
    """The Inductor code generator `name` (one of CODEGEN_NAMES) for tessera."""
    from ._inductor_codegen import CODEGEN

    return CODEGEN[name]


def codegen_version() -> str:
    """A hash of CODEGEN_SOURCES: what keys Inductor's caches to this
    version of tessera's code generators."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in CODEGEN_SOURCES:
        with open(os.path.join(here, name), "rb") as source:
            digest.update(name.encode() + b"\0" + source.read() + b"\0")
    return digest.hexdigest()


def _codegen_version_pass():
    """A CustomGraphModulePass that leaves the graph as it is; its uuid is
    codegen_version()."""
    from torch._inductor.custom_graph_pass import CustomGraphModulePass

    class CodegenVersionPass(CustomGraphModulePass):
        def __init__(self):
            self._uuid = codegen_version()

        def __call__(self, gm) -> None:
            pass

        def uuid(self) -> str:
            return self._uuid

    return CodegenVersionPass()


def _key_caches_to_codegen(common) -> None:
    """Makes every registration of tessera's code generators in Inductor
    (`common`, its torch._inductor.codegen.common) carry the version pass,
    and gives it to one already made."""
    register = common.register_backend_for_device
    if getattr(register, "_tessera_keyed", False):
        return
    version_pass = _codegen_version_pass()

    def register_keyed(device, *args, **kwargs):
        # The pass is the 6th parameter: (device, scheduling, wrapper,
        # cpp_wrapper, fx_wrapper, device_custom_pass, ...).
        if device == _DEVICE_TYPE and len(args) < 5 and kwargs.get("device_custom_pass") is None:
            kwargs["device_custom_pass"] = version_pass
        return register(device, *args, **kwargs)

    register_keyed._tessera_keyed = True
    common.register_backend_for_device = register_keyed
    if _DEVICE_TYPE in common.custom_backend_passes and \
            common.custom_backend_passes[_DEVICE_TYPE] is None:
        common.custom_backend_passes[_DEVICE_TYPE] = version_pass


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
    if _CODEGEN_COMMON_MODULE in sys.modules:  # Inductor came first
        _key_caches_to_codegen(sys.modules[_CODEGEN_COMMON_MODULE])
    else:
        sys.meta_path.insert(0, _after_import(_CODEGEN_COMMON_MODULE, _key_caches_to_codegen))


_install()
