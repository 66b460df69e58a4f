"""User errors on tessera raise PyTorch's exception types with messages
that say what is wrong: tensors on different devices, dtypes tessera does
not have, out-of-memory, devices that do not exist, ops without a kernel
when the CPU fallback is off. None of them may crash the process."""

import gc
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_tessera


def raises_or_xfail_if_fallback(exc_type, match, fn):
    """Like pytest.raises, but an op that the CPU fallback ran without
    complaint is an xfail: the fallback moves every argument to the CPU
    without checking where they were."""
    torch_tessera.reset_fallback_stats()
    try:
        fn()
    except exc_type as e:
        assert re.search(match, str(e)), f"{str(e)!r} does not match {match!r}"
        return
    ops = sorted(torch_tessera.fallback_stats())
    if ops:
        pytest.xfail(f"ran through the CPU fallback ({', '.join(ops)}), which does not check "
                     "devices")
    pytest.fail(f"no {exc_type.__name__} raised")


SAME_DEVICE = r"Expected all tensors to be on the same device.*(tessera:0 and cpu|cpu and tessera:0)"

MIXES = {
    "add": lambda d, c: d + c,
    "mul": lambda d, c: d * c,
    "mm": lambda d, c: torch.mm(d.view(2, 2), c.view(2, 2)),
    "matmul": lambda d, c: d.view(2, 2) @ c.view(2, 2),
    "cat": lambda d, c: torch.cat([d, c]),
    "where": lambda d, c: torch.where(d > 0, d, c),
    "add_": lambda d, c: d.add_(c),
}


@pytest.mark.parametrize("name", sorted(MIXES))
def test_tessera_and_a_cpu_tensor_do_not_mix(tessera, name):
    d = torch.ones(4, device=tessera)
    c = torch.ones(4)
    raises_or_xfail_if_fallback(RuntimeError, SAME_DEVICE, lambda: MIXES[name](d, c))


def test_a_cpu_scalar_tensor_mixes_with_tessera(tessera):
    d = torch.arange(4.0, device=tessera)
    out = d * torch.tensor(3.0) + torch.tensor(1)
    assert out.device == torch.device("tessera:0")
    torch.testing.assert_close(out.cpu(), torch.arange(4.0) * 3 + 1)


def test_two_tessera_devices_do_not_mix():
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")
    a = torch.ones(3, device="tessera:0")
    b = torch.ones(3, device="tessera:1")
    raises_or_xfail_if_fallback(RuntimeError, "tessera:0.*tessera:1|tessera:1.*tessera:0",
                                lambda: a + b)


# Complex dtypes are supported (tests/bridge/test_complex.py).
UNSUPPORTED = [
    (torch.uint16, "UInt16"),
    (torch.uint32, "UInt32"),
    (torch.float8_e4m3fn, "Float8_e4m3fn"),
]


@pytest.mark.parametrize("dtype, name", UNSUPPORTED, ids=[n for _, n in UNSUPPORTED])
def test_unsupported_dtypes_are_type_errors_naming_the_dtype(tessera, dtype, name):
    message = f"tessera does not support dtype {name}"
    with pytest.raises(TypeError, match=message):
        torch.zeros(2, dtype=dtype, device=tessera)
    with pytest.raises(TypeError, match=message):
        torch.zeros(2, dtype=dtype).to(tessera)
    with pytest.raises(TypeError, match=message):
        torch.zeros(2, device=tessera).to(dtype)


def test_out_of_memory_under_a_memory_fraction(tessera):
    gc.collect()
    torch.tessera.empty_cache()
    old = torch.tessera.get_per_process_memory_fraction()
    ooms = torch.tessera.memory_stats()["num_ooms"]
    total = torch.tessera.get_device_properties(0).total_memory
    # A cap of about 64 MiB, and a request of twice that.
    fraction = (64 << 20) / total
    request = 128 << 20
    try:
        torch.tessera.set_per_process_memory_fraction(fraction)
        with pytest.raises(torch.OutOfMemoryError) as info:
            torch.empty(request, dtype=torch.uint8, device=tessera)
    finally:
        torch.tessera.set_per_process_memory_fraction(old)
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)  # as CUDA's OOM
    assert f"requested {request} bytes" in message
    assert "free" in message and "reserved" in message
    assert "tessera:0" in message or torch_tessera._C.runtime_device(0) in message
    assert torch.tessera.memory_stats()["num_ooms"] == ooms + 1
    # The device is still usable.
    x = torch.ones(1000, device=tessera)
    assert x.sum().item() == 1000.0


def test_out_of_memory_beyond_the_device(tessera):
    request = 1 << 50  # a petabyte
    with pytest.raises(torch.OutOfMemoryError, match=f"requested {request} bytes"):
        torch.empty(request, dtype=torch.uint8, device=tessera)
    assert torch.ones(3, device=tessera).sum().item() == 3.0


MISSING_DEVICE_USES = {
    "factory": lambda i: torch.ones(2, device=f"tessera:{i}"),
    "to": lambda i: torch.ones(2).to(f"tessera:{i}"),
    "tessera()": lambda i: torch.ones(2).tessera(i),
    "set_device": lambda i: torch.tessera.set_device(i),
    "synchronize": lambda i: torch.tessera.synchronize(i),
    "memory_allocated": lambda i: torch.tessera.memory_allocated(i),
    "get_device_properties": lambda i: torch.tessera.get_device_properties(i),
    "Stream": lambda i: torch.Stream(device=f"tessera:{i}"),
    "Generator": lambda i: torch.Generator(device=f"tessera:{i}"),
}


@pytest.mark.parametrize("use", sorted(MISSING_DEVICE_USES))
def test_a_missing_device_index_is_an_index_error(tessera, use):
    n = torch.tessera.device_count()
    expected = (f"tessera:7 does not exist: there {'is' if n == 1 else 'are'} {n} "
                f"tessera device")
    with pytest.raises(IndexError, match=re.escape(expected)):
        MISSING_DEVICE_USES[use](7)
    assert torch.tessera.current_device() == 0


def test_index_and_shape_errors_come_through(tessera):
    x = torch.ones(2, 3, device=tessera)
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 2"):
        x[10]
    with pytest.raises(RuntimeError, match=r"add: shapes \[2, 3\] and \[4\] cannot be broadcast"):
        x + torch.ones(4, device=tessera)


def test_fallback_switch_makes_missing_kernels_not_implemented(tessera):
    x = torch.rand(4).add(1.5).to(tessera)
    torch_tessera.reset_fallback_stats()
    torch.logcumsumexp(x, 0)
    assert "aten::_logcumsumexp" in torch_tessera.fallback_stats(), (
        "logcumsumexp has a native tessera kernel now: pick another op for this test")
    assert torch_tessera.fallback_enabled()
    try:
        torch_tessera.set_fallback_enabled(False)
        assert not torch_tessera.fallback_enabled()
        with pytest.raises(NotImplementedError,
                           match="tessera has no kernel for aten::_logcumsumexp and the CPU "
                                 "fallback is off"):
            torch.logcumsumexp(x, 0)
    finally:
        torch_tessera.set_fallback_enabled(True)
    torch.logcumsumexp(x, 0)


def test_one_fallback_switch_for_the_bridge_and_the_runtime():
    # TESSERA_DISABLE_CPU_FALLBACK and set_fallback_enabled govern the
    # bridge's aten fallback and the runtime's per-device fallback as one
    # state, which the tessera module (same runtime library) sees too.
    code = textwrap.dedent("""
        import torch, torch_tessera
        print(torch_tessera.fallback_enabled())
        torch_tessera.set_fallback_enabled(True)
        print(torch_tessera.fallback_enabled())
        try:
            import tessera
        except ImportError:
            raise SystemExit
        print(tessera.fallback_enabled())
        tessera.set_fallback_enabled(False)
        print(torch_tessera.fallback_enabled())
    """)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", TESSERA_DISABLE_CPU_FALLBACK="1",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = result.stdout.split()
    assert seen[:2] == ["False", "True"]
    if len(seen) == 2:
        pytest.skip("the tessera module is not installed beside the bridge")
    assert seen[2:] == ["True", "False"]


def test_errors_do_not_crash_a_fresh_process():
    # Every kind of error in one process that must then exit normally.
    code = textwrap.dedent("""
        import torch, torch_tessera
        d = torch.ones(4, device="tessera")
        attempts = [
            lambda: d + torch.ones(4),
            lambda: torch.zeros(2, dtype=torch.uint16, device="tessera"),
            lambda: torch.ones(2, device="tessera:7"),
            lambda: torch.empty(1 << 50, dtype=torch.uint8, device="tessera"),
            lambda: torch.tessera.set_rng_state(torch.zeros(3, dtype=torch.uint8)),
            lambda: torch.Event(device="tessera").elapsed_time(torch.Event(device="tessera")),
            lambda: torch.accelerator.empty_host_cache(),
        ]
        for attempt in attempts:
            try:
                attempt()
            except Exception as e:
                print(type(e).__name__)
        print("alive", d.sum().item())
    """)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["RuntimeError", "TypeError", "IndexError", "OutOfMemoryError",
                                     "ValueError", "ValueError", "alive", "4.0"]
