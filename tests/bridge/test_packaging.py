"""Packaging: the torch.backends entry point loads tessera on `import torch`,
TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns that off, and `pip install` of the
bridge into a fresh virtual environment gives a working tessera device."""

import os
import pathlib
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = "import torch; x = torch.ones(2, device='tessera'); print(x.device, x.sum().item())"


def run_python(python, code, **env_overrides):
    env = dict(os.environ)
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    env.pop("PYTHONPATH", None)
    env.update(env_overrides)
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                          cwd="/", timeout=300)


def test_import_torch_autoloads_tessera():
    out = run_python(sys.executable, PROBE)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tessera:0", "2.0"]


def test_autoload_switch_off():
    out = run_python(sys.executable, PROBE, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert out.returncode != 0
    assert "tessera" in out.stderr


def test_entry_point_is_registered():
    code = ("from importlib.metadata import entry_points; "
            "print([e.value for e in entry_points(group='torch.backends') if e.name == 'tessera'])")
    out = run_python(sys.executable, code, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert out.returncode == 0, out.stderr
    assert "torch_tessera:_autoload" in out.stdout


@pytest.mark.skipif(os.environ.get("TESSERA_SKIP_PIP_TEST") == "1",
                    reason="TESSERA_SKIP_PIP_TEST=1")
def test_pip_install_into_fresh_venv(tmp_path):
    """A non-editable install: pip runs setup.py, which builds with Bazel
    against the torch this interpreter has (no build isolation)."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The outer .venv's editable install must not leak into the new one.
    before = run_python(python, PROBE)
    assert before.returncode != 0 or "torch_tessera" not in before.stderr
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--no-build-isolation", "--no-deps", str(ROOT / "bridge")],
        # Fast with a warm Bazel disk cache; on a new machine this build
        # races the suite's own `bazel test //...` for the same actions
        # (it took more than 15 minutes on 2 cores).
        capture_output=True, text=True, timeout=2400, cwd=tmp_path,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    out = run_python(python, PROBE)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tessera:0", "2.0"]
    # The installed package is the copy in the venv, not the source tree.
    where = run_python(python, "import torch_tessera; print(torch_tessera.__file__)")
    assert str(env_dir) in where.stdout, where.stdout
