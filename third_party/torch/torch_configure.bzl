"""A repository for the installed PyTorch and the Python it belongs to.

The bridge builds against the torch that is installed (never one that a
build would download), so the repository asks that Python where torch and
its own headers live and links them in. PYTHON_BIN_PATH picks the Python;
otherwise python3 on PATH.
"""

_QUERY = """
import os, sys, sysconfig
import torch
print(os.path.dirname(torch.__file__))
print(sysconfig.get_paths()["include"])
print(torch.__version__)
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
"""

def _torch_configure_impl(ctx):
    python = ctx.os.environ.get("PYTHON_BIN_PATH") or ctx.which("python3")
    if not python:
        fail("torch_configure: no python3 on PATH and PYTHON_BIN_PATH unset")
    result = ctx.execute([python, "-c", _QUERY], environment = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    if result.return_code != 0:
        fail("torch_configure: %s cannot import torch (run ./dev setup):\n%s" % (python, result.stderr))
    torch_dir, python_include, version, cxx11_abi = result.stdout.strip().split("\n")
    ctx.symlink(torch_dir + "/include", "torch_include")
    ctx.symlink(torch_dir + "/lib", "torch_lib")
    ctx.symlink(python_include, "python_include")
    ctx.template("BUILD", ctx.attr._build_template, {
        "%{torch_lib_dir}": torch_dir + "/lib",
        "%{cxx11_abi}": cxx11_abi,
        "%{version}": version,
    })

torch_configure = repository_rule(
    implementation = _torch_configure_impl,
    environ = ["PYTHON_BIN_PATH", "PATH"],
    local = True,
    attrs = {"_build_template": attr.label(default = "//third_party/torch:BUILD.tpl")},
)
