"""The Python examples (examples/python/) run as a user would run them."""

import os
import subprocess
import sys

import pytest

import tessera

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


def run(script, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(tessera.__file__)), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_numpy_style_fit_converges(device):
    result = run("numpy_style.py", str(device))
    assert result.returncode == 0, result.stderr
    assert f"{device}: loss" in result.stdout


def test_kernel_benchmark_times_every_device():
    result = run("kernel_benchmark.py", "add", "64")
    assert result.returncode == 0, result.stderr
    for device in tessera.devices():
        if device.type != "template":
            assert str(device) in result.stdout
    bad = run("kernel_benchmark.py", "no-such-op")
    assert bad.returncode != 0 and "unknown op" in bad.stderr
