"""./dev new-device (tools/new_device.py), run into a copy of the tree: the
generated device builds, passes its device tests and conformance cases on
its own device type, and the generator refuses bad names and existing
devices. The build uses its own Bazel server in the copy (sharing the disk
cache of .bazelrc, so only the new device compiles) and shuts it down."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "new_device.py"
# The device the test generates: a name free in this tree, so that the test
# also passes in a tree where someone already ran `./dev new-device acme`.
NAME = next(n for n in ("acme", "acme_two", "acme_three", "acme_four")
            if not (ROOT / "devices" / n).exists())


def tracked_tree(dest):
    """A copy of what git tracks (and the untracked files it does not ignore)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    for name in files:
        if not name:
            continue
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def generate(root, name):
    return subprocess.run([sys.executable, str(GENERATOR), name, "--root", str(root)],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tracked_tree(tmp_path_factory.mktemp("tree"))
    result = generate(root, NAME)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_refuses_bad_names_and_existing_devices(generated):
    for bad in ("Acme", "1npu", "template", "cuda", "class", "a", "acme-npu"):
        result = generate(generated, bad)
        assert result.returncode != 0 and "new-device:" in result.stderr, (bad, result.stderr)
    result = generate(generated, NAME)  # already there
    assert result.returncode != 0 and "already exists" in result.stderr


def test_renames_everything_but_the_keyword(generated):
    device = generated / "devices" / NAME
    names = sorted(p.name for p in device.rglob("*") if p.is_file())
    assert f"{NAME}_device.cc" in names and not any("template" in n for n in names), names
    for path in device.rglob("*"):
        if path.is_file():
            text = path.read_text()
            for line in text.splitlines():
                assert "template" not in line or line.lstrip().startswith("template <"), \
                    f"{path.name}: {line}"
    assert f'"{NAME}"}}' in (generated / "tests" / "conformance" / "conformance.cc").read_text()
    assert f'"//devices/{NAME}:libtessera_{NAME}.so"' in \
        (generated / "devices" / "BUILD").read_text()


@pytest.mark.skipif(shutil.which("bazel") is None, reason="needs Bazel")
def test_the_generated_device_builds_and_passes(generated):
    targets = [f"//devices/{NAME}", f"//tests/devices:{NAME}_device_test",
               f"//tests/conformance:conformance_{NAME}_test"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEST_")}
    try:
        build = subprocess.run(["bazel", "build", "--curses=no", *targets], cwd=generated,
                               env=env, capture_output=True, text=True, timeout=1500)
        assert build.returncode == 0, build.stderr[-4000:]
        bin_dir = generated / "bazel-bin"
        device_test = subprocess.run(
            [bin_dir / f"tests/devices/{NAME}_device_test", f"[{NAME}]"], capture_output=True,
            text=True, timeout=300,
            env={**env, f"TESSERA_{NAME.upper()}_DEVICE_COUNT": "3",
                 f"TESSERA_{NAME.upper()}_DEVICES": "2,0",
                 f"TESSERA_{NAME.upper()}_MEMORY_MIB": "64"})
        assert device_test.returncode == 0, device_test.stdout[-4000:]
        assert "skipped=0" in device_test.stdout and "failed=0" in device_test.stdout
        cases = ",".join(f"{NAME}: {op}" for op in ("add", "mm", "sum", "softmax", "index_select",
                                                     "where"))
        conformance = subprocess.run([bin_dir / f"tests/conformance/conformance_{NAME}_test", cases],
                                     capture_output=True, text=True, timeout=600, env=env)
        assert conformance.returncode == 0, conformance.stdout[-4000:]
        assert "tessera-test-summary: passed=6 failed=0 skipped=0" in conformance.stdout
        assert f"native coverage on {NAME}:0" in conformance.stdout
    finally:
        subprocess.run(["bazel", "shutdown"], cwd=generated, env=env, capture_output=True,
                       timeout=120)
