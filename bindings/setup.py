"""Builds the tessera module's extension with Bazel.

The extension (//bindings:_tessera.so) links the Tessera runtime
(libtessera.so) and loads the device libraries (libtessera_<device>.so)
copied beside it (//bindings:package_files lists them). Bazel finds Python's
headers through the interpreter running this build (PYTHON_BIN_PATH); no
PyTorch is involved. generate_stubs.py then writes the extension's type
stubs (tessera/_tessera/*.pyi).

TESSERA_BINDINGS_FILES picks the list: package_files (every device, the
default) or package_files_quick (all but CUDA, whose kernels take minutes
to compile).
"""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildExtensionWithBazel(build_py):
    def run(self):
        if shutil.which("bazel") is None:
            raise SystemExit("tessera needs Bazel to build (./dev setup installs it)")
        files = os.environ.get("TESSERA_BINDINGS_FILES") or "package_files"
        if files not in ("package_files", "package_files_quick"):
            raise SystemExit(f"TESSERA_BINDINGS_FILES={files!r}: expected package_files "
                             "or package_files_quick")
        subprocess.check_call(
            ["bazel", "build", f"--repo_env=PYTHON_BIN_PATH={sys.executable}",
             f"//bindings:{files}"],
            cwd=ROOT,
        )
        with open(os.path.join(ROOT, "bazel-bin", "bindings", f"{files}.txt")) as listing:
            built = [line.strip() for line in listing if line.strip()]
        package = os.path.join(HERE, "tessera")
        # A device library from an earlier build would load against this
        # build's runtime: only the listed ones stay.
        names = {os.path.basename(path) for path in built}
        for name in os.listdir(package):
            if name.startswith("libtessera_") and name.endswith(".so") and name not in names:
                os.remove(os.path.join(package, name))
        for path in built:
            target = os.path.join(package, os.path.basename(path))
            if os.path.exists(target):
                os.remove(target)  # never overwrite a library a process has loaded
            shutil.copyfile(os.path.join(ROOT, path), target)
        # The extension's type stubs, installed with it (package-data).
        subprocess.check_call([sys.executable, os.path.join(HERE, "generate_stubs.py")])
        super().run()


setup(cmdclass={"build_py": BuildExtensionWithBazel})
