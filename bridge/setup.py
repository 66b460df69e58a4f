"""Builds torch_tessera's C++ extension with Bazel, against installed torch.

The extension (//bridge:_C.so) links the Tessera runtime and its devices;
Bazel finds torch and Python through the interpreter running this build
(PYTHON_BIN_PATH), so the build never fetches another torch.
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
        subprocess.check_call(
            ["bazel", "build", "--noshow_progress", f"--repo_env=PYTHON_BIN_PATH={sys.executable}",
             "//bridge:_C.so"],
            cwd=ROOT,
        )
        built = os.path.join(ROOT, "bazel-bin", "bridge", "_C.so")
        target = os.path.join(HERE, "torch_tessera", "_C.so")
        if os.path.exists(target):
            os.remove(target)
        shutil.copyfile(built, target)
        super().run()


setup(cmdclass={"build_py": BuildExtensionWithBazel})
