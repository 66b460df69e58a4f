"""No shipped object needs AVX-512: the libraries and extensions that the
Python packages carry (and every program links) are built for x86-64-v3,
so that they load and run on a CPU without this machine's extensions.
tools/check_isa.py scans their disassembly for AVX-512 instructions."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "bindings" / "tessera", ROOT / "bridge" / "torch_tessera"]


def shipped_objects():
    return sorted(so for pkg in PACKAGES if pkg.is_dir() for so in pkg.glob("*.so"))


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) not installed")
def test_no_shipped_object_needs_avx512():
    objects = shipped_objects()
    if not objects:
        pytest.skip("no built package here (run ./dev test, which builds them)")
    names = {so.name for so in objects}
    assert "libtessera.so" in names and "libtessera_cpu.so" in names, names
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "check_isa.py"),
                             *map(str, objects)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_checker_finds_avx512(tmp_path):
    """The check can fail: an object with AVX-512 code is reported."""
    if shutil.which("gcc") is None or shutil.which("objdump") is None:
        pytest.skip("gcc and objdump are needed")
    source = tmp_path / "wide.c"
    source.write_text("void scale(float* x, int n) { for (int i = 0; i < n; ++i) x[i] *= 3.0f; }\n")
    wide = tmp_path / "libwide.so"
    subprocess.run(["gcc", "-O3", "-mavx512f", "-mprefer-vector-width=512", "-shared", "-fPIC",
                    "-o", str(wide), str(source)], check=True)
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "check_isa.py"), str(wide)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "scale" in result.stdout, result.stdout
    dispatched = tmp_path / "libdispatched.so"
    source.write_text("void scale_avx512(float* x, int n) "
                      "{ for (int i = 0; i < n; ++i) x[i] *= 3.0f; }\n")
    subprocess.run(["gcc", "-O3", "-mavx512f", "-mprefer-vector-width=512", "-shared", "-fPIC",
                    "-o", str(dispatched), str(source)], check=True)
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "check_isa.py"),
                             str(dispatched)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
