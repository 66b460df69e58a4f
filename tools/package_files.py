"""Builds a Python package's shared objects with Bazel and copies them into
the package: what bridge/setup.py and bindings/setup.py both do (./dev does
the same in bash, copy_package_files).

build_package_files(root, package_target, files, package_dir, setting)
builds
//<package_target>:<files> (package_files, or package_files_quick without
CUDA) with this Python as PYTHON_BIN_PATH, then copies every file its
listing names into package_dir, and removes device libraries that the
listing no longer names: one from an earlier build would load against this
build's runtime.
"""

import os
import shutil
import subprocess
import sys

FILE_LISTS = ("package_files", "package_files_quick")


def build_package_files(root: str, package_target: str, files: str, package_dir: str,
                        setting: str) -> None:
    """setting names the environment variable that chose `files`, for the
    error when it names neither list."""
    if files not in FILE_LISTS:
        raise SystemExit(f"{setting}={files!r}: expected package_files or package_files_quick")
    subprocess.check_call(
        ["bazel", "build", f"--repo_env=PYTHON_BIN_PATH={sys.executable}",
         f"//{package_target}:{files}"],
        cwd=root,
    )
    with open(os.path.join(root, "bazel-bin", package_target, f"{files}.txt")) as listing:
        built = [line.strip() for line in listing if line.strip()]
    names = {os.path.basename(path) for path in built}
    for name in os.listdir(package_dir):
        if name.startswith("libtessera_") and name.endswith(".so") and name not in names:
            os.remove(os.path.join(package_dir, name))
    for path in built:
        target = os.path.join(package_dir, os.path.basename(path))
        if os.path.exists(target):
            os.remove(target)  # never overwrite a library a process has loaded
        shutil.copyfile(os.path.join(root, path), target)
