"""Writes the type stubs of the extension tessera._tessera into tessera/.

    python bindings/generate_stubs.py

Run by ./dev (setup_bindings) and setup.py once the extension and the
runtime libraries are in bindings/tessera/. pybind11-stubgen imports the
built module and writes tessera/_tessera/__init__.pyi with its submodules'
stubs (_nn, special, linalg, return_types) beside it; mypy and editors read
them, and the hand-written modules (tessera/__init__.py, nn/functional.py,
special.py) reach them through their `from ._tessera import *`. Any error
(a signature that names a raw C++ type, a default value with no Python
spelling, a name that cannot be imported) fails the run with a nonzero
exit and leaves no stubs (rather than those of an earlier build).
"""

import builtins
import os
import shutil
import sys
import tempfile
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "tessera")
# Where the stubs of tessera._tessera go: a stub package, since the
# extension has submodules. Python itself imports _tessera.so, which a
# directory without __init__.py does not shadow.
STUBS = os.path.join(PACKAGE, "_tessera")
EXTENSION = "tessera._tessera"
# What the tessera::Shape caster (csrc/casters.h) calls itself.
SHAPE_CASTER_NAME = "Union[int, Sequence[int]]"


def _parser_mixin():
    """The fixes tessera's stubs need, as one pybind11-stubgen parser mixin."""
    import importlib

    from pybind11_stubgen.parser.interface import IParser
    from pybind11_stubgen.structs import Import, QualifiedName, ResolvedType, Value

    builtins_name = QualifiedName.from_str("builtins")
    object_name = QualifiedName.from_str("builtins.object")
    any_name = QualifiedName.from_str("typing.Any")
    optional_name = QualifiedName.from_str("typing.Optional")
    union_name = QualifiedName.from_str("typing.Union")
    none_name = QualifiedName.from_str("None")
    str_name = QualifiedName.from_str("builtins.str")
    device_names = (QualifiedName.from_str("device"),
                    QualifiedName.from_str(f"{EXTENSION}.device"))

    def admits_none(annotation):
        if isinstance(annotation, Value):
            return annotation.repr == "None"
        if not isinstance(annotation, ResolvedType):
            return True  # an invalid expression prints as `...`: leave it
        if annotation.name in (none_name, any_name, object_name, optional_name):
            return True
        return annotation.name == union_name and any(map(admits_none, annotation.parameters or []))

    class TesseraStubFixes(IParser):
        """Takes the place of pybind11-stubgen's FixNumpyDtype, which would
        read tessera's own `dtype` class as numpy.dtype, and fixes what
        pybind11's signatures say for mypy:

        - builtins.bool for bool (likewise int, float, ...): tessera names
          dtypes bool, int and float at module level and Tensor has methods
          of those names, so a bare `bool` in a stub would mean tessera.bool;
        - `X | None` for an argument X whose default is None (a `Tensor*`
          or py::object argument; mypy allows no implicit Optional);
        - tuple[int, ...] for a returned Shape, whose caster's name
          (casters.h) says what it accepts: one int or a sequence of ints;
        - `device | str` for a device argument: a str converts implicitly
          (py::implicitly_convertible in csrc/dtypes_devices.cc); not in
          the device class itself, whose methods have str overloads;
        - typing.Any for a py::object result (an object of a kind the
          signature does not say; `object` would allow no use of it);
        - tessera._tessera.Tensor for a bare `Tensor` (a caster's name, such
          as Sequence[Tensor]) in a submodule, where Tensor is not defined;
        - an import for each module an annotation names (stubgen skips
          `numpy.typing` inside Tensor, which has a method named numpy).
        """

        def __init__(self):
            super().__init__()
            self._modules = []  # the modules being parsed, innermost last
            self._classes = []  # likewise the classes
            self._imports_stack = []  # per module being parsed: the imports noted

        def _qualified(self, name):
            if len(name) != 1:
                return name
            if isinstance(getattr(builtins, name[0], None), type):
                return QualifiedName((*builtins_name, *name))
            extension = sys.modules[EXTENSION]
            if (self._modules and not hasattr(self._modules[-1], name[0])
                    and hasattr(extension, name[0])):
                return QualifiedName.from_str(f"{EXTENSION}.{name[0]}")
            return name

        def _note_module_of(self, name):
            for length in range(len(name) - 1, 0, -1):
                module = QualifiedName(name[:length])
                try:
                    importlib.import_module(str(module))
                except ImportError:
                    continue
                if self._imports_stack:
                    self._imports_stack[-1].add(Import(name=None, origin=module))
                return

        def handle_module(self, path, module):
            self._modules.append(module)
            self._imports_stack.append(set())
            try:
                result = super().handle_module(path, module)
            finally:
                self._modules.pop()
                imports = self._imports_stack.pop()
            if result is not None:
                result.imports |= {i for i in imports if i.origin != path}
            return result

        def _with_implicit_conversions(self, annotation):
            if not isinstance(annotation, ResolvedType):
                return annotation
            if annotation.name[-1] == "device" and annotation.name in device_names:
                return ResolvedType(name=union_name,
                                    parameters=[annotation, ResolvedType(name=str_name)])
            if annotation.parameters:
                annotation.parameters = [self._with_implicit_conversions(p)
                                         for p in annotation.parameters]
            return annotation

        def _shape_argument(self):
            return self.parse_annotation_str(SHAPE_CASTER_NAME)

        def handle_class(self, path, class_):
            self._classes.append(str(path[-1]))
            try:
                return super().handle_class(path, class_)
            finally:
                self._classes.pop()

        def handle_type(self, type_):
            return self._qualified(super().handle_type(type_))

        def parse_annotation_str(self, annotation_str):
            result = super().parse_annotation_str(annotation_str)
            if isinstance(result, ResolvedType):
                result.name = self._qualified(result.name)
                if len(result.name) > 1 and result.name[0] not in ("builtins", "typing"):
                    self._note_module_of(result.name)
            return result

        def handle_function(self, path, func):
            functions = super().handle_function(path, func)
            for function in functions:
                for arg in function.args:
                    if self._classes[-1:] != ["device"]:
                        arg.annotation = self._with_implicit_conversions(arg.annotation)
                    if (isinstance(arg.default, Value) and arg.default.repr == "None"
                            and arg.annotation is not None and not admits_none(arg.annotation)):
                        arg.annotation = ResolvedType(name=optional_name,
                                                      parameters=[arg.annotation])
                returns = function.returns
                if isinstance(returns, ResolvedType) and returns.name == object_name:
                    function.returns = ResolvedType(name=any_name)
                elif returns == self._shape_argument():
                    function.returns = self.parse_annotation_str("tuple[int, ...]")
            return functions

    return TesseraStubFixes


def _printer_class():
    import pybind11_stubgen

    class TesseraStubPrinter(pybind11_stubgen.Printer):
        """Marks Tensor's == and != (which return tensors, as in NumPy) and
        the other classes' (which compare with their own type only) as the
        deliberate overrides of object's that they are."""

        _comparisons = ("__eq__", "__ne__")

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._marked = set()

        def print_class_body(self, class_):
            outer, self._marked = self._marked, set()
            try:
                return super().print_class_body(class_)
            finally:
                self._marked = outer

        def print_method(self, method):
            lines = super().print_method(method)
            function = method.function
            name = str(function.name)
            if name in self._comparisons and name not in self._marked:
                self._marked.add(name)  # mypy reports an overload group once
                if not self._overrides_cleanly(function):
                    # On the first line: the first @overload of a group, or the def.
                    lines[0] += "  # type: ignore[override]"
            return lines

        @staticmethod
        def _overrides_cleanly(function):
            other = function.args[1].annotation if len(function.args) == 2 else None
            return ("typing.overload" not in map(str, function.decorators)
                    and str(other) in ("typing.Any", "builtins.object")
                    and str(function.returns) == "builtins.bool")

    return TesseraStubPrinter


def generate(output_root):
    """Writes the stubs of tessera._tessera under output_root/tessera/."""
    import pybind11_stubgen

    mixin = _parser_mixin()
    argv = ["--exit-code", "-o", output_root, EXTENSION]
    args = pybind11_stubgen.arg_parser().parse_args(argv, namespace=pybind11_stubgen.CLIArgs())
    with mock.patch.object(pybind11_stubgen, "FixNumpyDtype", mixin):
        parser = pybind11_stubgen.stub_parser_from_args(args)
    mro = type(parser).__mro__
    if mixin not in mro or any(c.__name__ == "FixNumpyDtype" for c in mro):
        raise SystemExit("generate_stubs.py: this pybind11-stubgen composes its parser "
                         "differently than 3.0 did; find TesseraStubFixes a place in it")
    printer = _printer_class()(invalid_expr_as_ellipses=True)
    pybind11_stubgen.run(parser, printer, args.module_names, output_root, root_suffix=None,
                         dry_run=False, writer=pybind11_stubgen.Writer())


def main():
    try:
        import pybind11_stubgen  # noqa: F401
    except ImportError:
        raise SystemExit("generate_stubs.py: pybind11-stubgen is not installed "
                         "(./dev setup installs it; or pip install pybind11-stubgen)")
    if not os.path.exists(os.path.join(PACKAGE, "_tessera.so")):
        raise SystemExit(f"generate_stubs.py: no {PACKAGE}/_tessera.so; build the module first")
    # This tree's tessera, never an installed copy.
    sys.path.insert(0, HERE)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(name)s - [%(levelname)7s] %(message)s")
    shutil.rmtree(STUBS, ignore_errors=True)  # also those of submodules that went
    with tempfile.TemporaryDirectory(prefix="tessera-stubs-") as scratch:
        try:
            generate(scratch)  # exits nonzero on any error, before writing
        except SystemExit as failure:
            if failure.code:
                raise SystemExit(f"generate_stubs.py: pybind11-stubgen failed on {EXTENSION} "
                                 "(errors above); no stubs written") from None
            raise
        produced = os.path.join(scratch, "tessera", "_tessera")
        if not os.path.exists(os.path.join(produced, "__init__.pyi")):
            raise SystemExit("generate_stubs.py: pybind11-stubgen wrote no "
                             "tessera/_tessera/__init__.pyi")
        shutil.copytree(produced, STUBS)
    count = sum(name.endswith(".pyi") for name in os.listdir(STUBS))
    print(f"generate_stubs.py: wrote {count} stubs to {os.path.relpath(STUBS, os.getcwd())}/")


if __name__ == "__main__":
    main()
