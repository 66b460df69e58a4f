"""A repository for the headers of the Python that builds the bindings.

The tessera module (bindings/) needs Python's headers and pybind11's, not
torch: the repository asks the interpreter (PYTHON_BIN_PATH, otherwise
python3 on PATH) where its headers are. pybind11's headers come from the
system (Debian's pybind11-dev, which ./dev setup installs).
"""

_QUERY = """
import sys, sysconfig
print(sysconfig.get_paths()["include"])
print("%d.%d" % sys.version_info[:2])
"""

def _python_configure_impl(ctx):
    python = ctx.os.environ.get("PYTHON_BIN_PATH") or ctx.which("python3")
    if not python:
        fail("python_configure: no python3 on PATH and PYTHON_BIN_PATH unset")
    result = ctx.execute([python, "-c", _QUERY])
    if result.return_code != 0:
        fail("python_configure: %s failed:\n%s" % (python, result.stderr))
    include, version = result.stdout.strip().split("\n")
    ctx.symlink(include, "python_include")
    ctx.template("BUILD", ctx.attr._build_template, {"%{version}": version})

python_configure = repository_rule(
    implementation = _python_configure_impl,
    environ = ["PYTHON_BIN_PATH", "PATH"],
    local = True,
    attrs = {"_build_template": attr.label(default = "//third_party/python:BUILD.tpl")},
)
