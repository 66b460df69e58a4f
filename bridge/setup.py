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
        files = os.environ.get("TESSERA_BRIDGE_FILES") or "package_files"
        if files not in ("package_files", "package_files_quick"):
            raise SystemExit(f"TESSERA_BRIDGE_FILES={files!r}: expected package_files "
                             "or package_files_quick")
        subprocess.check_call(
            ["bazel", "build", f"--repo_env=PYTHON_BIN_PATH={sys.executable}",
             f"//bridge:{files}"],
            cwd=ROOT,
        )
        with open(os.path.join(ROOT, "bazel-bin", "bridge", f"{files}.txt")) as listing:
            built = [line.strip() for line in listing if line.strip()]
        package = os.path.join(HERE, "torch_tessera")
        # A device library from an earlier build would load against this
        # build's runtime: only the listed ones stay.
        names = {os.path.basename(path) for path in built}
        for name in os.listdir(package):
            if name.startswith("libtessera_") and name.endswith(".so") and name not in names:
                os.remove(os.path.join(package, name))
        for path in built:
            target = os.path.join(package, os.path.basename(path))
            if os.path.exists(target):
                os.remove(target)
            shutil.copyfile(os.path.join(ROOT, path), target)
        super().run()


setup(cmdclass={"build_py": BuildExtensionWithBazel})
