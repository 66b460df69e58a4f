"""The Python half of ./dev demo runs and its losses match the CPU's."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_train_demo(tessera):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "train_demo.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "largest loss difference" in out.stdout
    assert "ops that ran through the CPU fallback: 0 calls" in out.stdout, out.stdout
