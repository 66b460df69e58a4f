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
sys.path.insert(0, os.path.join(ROOT, "tools"))
from package_files import build_package_files  # noqa: E402


class BuildExtensionWithBazel(build_py):
    def run(self):
        if shutil.which("bazel") is None:
            raise SystemExit("tessera needs Bazel to build (./dev setup installs it)")
        files = os.environ.get("TESSERA_BINDINGS_FILES") or "package_files"
        build_package_files(ROOT, "bindings", files, os.path.join(HERE, "tessera"),
                            "TESSERA_BINDINGS_FILES")
        # The extension's type stubs, installed with it (package-data).
        subprocess.check_call([sys.executable, os.path.join(HERE, "generate_stubs.py")])
        super().run()


setup(cmdclass={"build_py": BuildExtensionWithBazel})
