"""A repository for the installed PyTorch and the Python it belongs to.

The bridge builds against the torch that is installed (never one that a
build would download), so the repository asks that Python where torch and
its own headers live and links them in. PYTHON_BIN_PATH picks the Python;
otherwise python3 on PATH.

TESSERA_TORCH_DIR names a torch package folder to build against instead of
the one that Python imports: an unpacked wheel for another machine's torch
(tools/gpu_check builds the bridge for the GPU machine's torch this way).
Nothing imports it then, so a CUDA build of torch serves without the CUDA
libraries it loads; PYTHON_BIN_PATH must be the Python it was built for.
"""

_QUERY = """
import os, sys, sysconfig
import torch
print(os.path.dirname(torch.__file__))
print(sysconfig.get_paths()["include"])
print(torch.__version__)
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
"""

# The same four lines for TESSERA_TORCH_DIR (argv[1]), without importing it:
# the version from its version.py, the C++ ABI from the std::string symbols
# of libc10.so.
_QUERY_TORCH_DIR = """
import os, sys, sysconfig
torch_dir = os.path.abspath(sys.argv[1])
extension = "_C" + sysconfig.get_config_var("EXT_SUFFIX")
if not os.path.isfile(os.path.join(torch_dir, extension)):
    sys.exit("TESSERA_TORCH_DIR=%s has no %s: it is not a torch package for Python %s" %
             (torch_dir, extension, sys.version.split()[0]))
scope = {}
with open(os.path.join(torch_dir, "version.py")) as f:
    exec(f.read(), scope)
with open(os.path.join(torch_dir, "lib", "libc10.so"), "rb") as f:
    cxx11_abi = int(b"St7__cxx11" in f.read())
print(torch_dir)
print(sysconfig.get_paths()["include"])
print(scope["__version__"])
print(cxx11_abi)
"""

def _torch_configure_impl(ctx):
    python = ctx.os.environ.get("PYTHON_BIN_PATH") or ctx.which("python3")
    if not python:
        fail("torch_configure: no python3 on PATH and PYTHON_BIN_PATH unset")
    torch_dir = ctx.os.environ.get("TESSERA_TORCH_DIR")
    if torch_dir:
        result = ctx.execute([python, "-c", _QUERY_TORCH_DIR, torch_dir])
        if result.return_code != 0:
            fail("torch_configure: %s with TESSERA_TORCH_DIR:\n%s" % (python, result.stderr))
    else:
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
    environ = ["PYTHON_BIN_PATH", "TESSERA_TORCH_DIR", "PATH"],
    local = True,
    attrs = {"_build_template": attr.label(default = "//third_party/torch:BUILD.tpl")},
)
