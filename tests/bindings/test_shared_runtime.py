"""One runtime per process: the tessera module and the PyTorch bridge,
imported together, share one libtessera.so (the dynamic loader matches the
second package's libtessera.so by its SONAME to the one already loaded, and
the device-library loader skips device libraries already in the process),
so both see the same devices, allocators and streams."""

import os
import subprocess
import sys
import textwrap

import pytest

import tessera

SCRIPT = textwrap.dedent("""
    import torch, torch_tessera, tessera
    maps = open("/proc/self/maps").read().splitlines()
    runtimes = {line.split()[-1] for line in maps if line.endswith("/libtessera.so")}
    cpu_libs = {line.split()[-1] for line in maps if line.endswith("/libtessera_cpu.so")}
    assert len(runtimes) == 1, runtimes
    assert len(cpu_libs) == 1, cpu_libs
    # The host device's caching allocator is one object: bytes that torch
    # allocates on tessera:0 (the runtime's cpu:0) show in tessera's stats.
    index = next(i for i in range(torch.tessera.device_count())
                 if torch.tessera.get_device_properties(i).runtime_device == "cpu:0")
    before = tessera.memory_allocated("cpu:0")
    x = torch.empty(1 << 20, device=f"tessera:{index}")
    assert tessera.memory_allocated("cpu:0") >= before + (4 << 20)
    del x
    assert tessera.memory_allocated("cpu:0") == before
    print("ok", runtimes.pop())
""")


def test_the_bridge_and_the_module_share_one_runtime():
    pytest.importorskip("torch_tessera")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(tessera.__file__)), env.get("PYTHONPATH", "")])
    for order in (SCRIPT, SCRIPT.replace("import torch, torch_tessera, tessera",
                                          "import tessera, torch, torch_tessera")):
        result = subprocess.run([sys.executable, "-c", order], env=env, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("ok")
