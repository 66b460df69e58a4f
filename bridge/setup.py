"""Builds torch_tessera's C++ extension with Bazel, against installed torch.

The extension (//bridge:_C.so) links the Tessera runtime (libtessera.so)
and its devices (libtessera_<device>.so), which are copied beside it
(//bridge:package_files lists them); Bazel finds torch and Python through
the interpreter running this build (PYTHON_BIN_PATH), so the build never
fetches another torch.

TESSERA_BRIDGE_FILES picks the list: package_files (every device, the
default) or package_files_quick (all but CUDA, whose kernels take minutes
to compile; ./dev demo uses it on a machine without an NVIDIA GPU).
"""

import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
from package_files import build_package_files  # noqa: E402


class BuildExtensionWithBazel(build_py):
    def run(self):
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise SystemExit(
                "torch_tessera builds against the installed torch, which this Python "
                f"cannot import ({e}). Install torch, then run "
                "`pip install --no-build-isolation ./bridge`."
            )
        if shutil.which("bazel") is None:
            raise SystemExit("torch_tessera needs Bazel to build (./dev setup installs it)")
        files = os.environ.get("TESSERA_BRIDGE_FILES") or "package_files"
        build_package_files(ROOT, "bridge", files, os.path.join(HERE, "torch_tessera"),
                            "TESSERA_BRIDGE_FILES")
        super().run()


setup(cmdclass={"build_py": BuildExtensionWithBazel})
