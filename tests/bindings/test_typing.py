"""The tessera module's type stubs (bindings/generate_stubs.py) as mypy
reads them: the Python examples and typing_snippets.py type-check clean,
and code with type errors is rejected at the lines that have them."""

import importlib.util
import inspect
import os
import re
import site
import subprocess
import sys

import pytest

import tessera

pytest.importorskip("mypy", reason="mypy is not installed (./dev setup installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = sorted(os.path.join(ROOT, "examples", "python", name)
                  for name in os.listdir(os.path.join(ROOT, "examples", "python"))
                  if name.endswith(".py"))
SNIPPETS = os.path.join(HERE, "typing_snippets.py")
# Where the imported tessera package lies (bindings/ in a source tree).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
STUBS = os.path.join(PACKAGE_ROOT, "tessera", "_tessera")

# mypy's default mode, plus: no calls from typed code into untyped code,
# the bodies of unannotated functions checked too, and no `type: ignore`
# (in the stubs or in tessera/__init__.py) that hides nothing.
MYPY_FLAGS = ["--disallow-untyped-calls", "--check-untyped-defs", "--warn-unused-ignores"]

# Mistakes mypy must report: (line, error code) of each.
TYPE_ERRORS = '''\
import tessera
import tessera.nn.functional as F

x = tessera.ones(2, 3)
n = x.shape + 1
y = tessera.zeros(2, dtype="float32")
z = x.sum(dim=1.5)
w = F.conv2d(x, x, padding=[1.5])
s = x.size(0) + "rows"
ok = x + 1
'''
EXPECTED_ERRORS = {(5, "operator"), (6, "arg-type"), (7, "arg-type"), (8, "list-item"),
                   (9, "operator")}

ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: (?P<message>.*?)"
                        r"(?:  \[(?P<code>[a-z-]+)\])?$")


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory):
    """Runs mypy once over the examples, the snippets and TYPE_ERRORS;
    returns {file: [(line, code, message), ...]} and mypy's output."""
    work = tmp_path_factory.mktemp("mypy")
    mistakes = work / "type_errors.py"
    mistakes.write_text(TYPE_ERRORS)
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    # An installed tessera is found through its py.typed; a source tree's
    # (which ./dev installs as an editable import hook that mypy does not
    # follow) through MYPYPATH. mypy refuses site-packages in MYPYPATH.
    if PACKAGE_ROOT not in site.getsitepackages() + [site.getusersitepackages()]:
        env["MYPYPATH"] = PACKAGE_ROOT
    files = [*EXAMPLES, SNIPPETS, str(mistakes)]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *MYPY_FLAGS, "--cache-dir", str(work / "cache"),
         "--python-executable", sys.executable, *files],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1), f"mypy failed to run:\n{output}"
    errors = {}
    for line in result.stdout.splitlines():
        match = ERROR_LINE.match(line)
        if match:
            path = os.path.realpath(os.path.join(str(work), match["path"]))
            errors.setdefault(path, []).append(
                (int(match["line"]), match["code"], match["message"]))
    return errors, os.path.realpath(str(mistakes)), output


def test_stubs_cover_the_extension():
    assert os.path.exists(os.path.join(STUBS, "__init__.pyi")), (
        f"no type stubs in {STUBS}: run python bindings/generate_stubs.py (./dev setup does)")
    assert os.path.exists(os.path.join(PACKAGE_ROOT, "tessera", "py.typed"))
    submodules = [name for name, value in vars(tessera._tessera).items()
                  if inspect.ismodule(value) and value.__name__.startswith("tessera._tessera.")]
    assert submodules, "tessera._tessera has no submodules?"
    for name in submodules:
        assert os.path.exists(os.path.join(STUBS, f"{name}.pyi")), f"no stub for {name}"


def test_examples_and_snippets_type_check(mypy_errors):
    errors, mistakes, output = mypy_errors
    unexpected = {path: found for path, found in errors.items() if path != mistakes}
    assert not unexpected, f"mypy reports errors:\n{output}"


def test_type_errors_are_reported(mypy_errors):
    errors, mistakes, output = mypy_errors
    found = {(line, code) for line, code, _ in errors.get(mistakes, [])}
    assert found == EXPECTED_ERRORS, f"mypy's verdict on the mistakes:\n{output}"


def test_snippets_run(device):
    # The snippets are calls the module accepts, not only ones mypy does.
    spec = importlib.util.spec_from_file_location("typing_snippets", SNIPPETS)
    snippets = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(snippets)
    snippets.run_all(str(device))
