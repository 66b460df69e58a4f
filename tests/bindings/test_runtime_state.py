"""Streams, events, the allocator's statistics, the CPU-fallback counters,
errors, and ops from several Python threads at once."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tessera


def test_streams_and_the_stream_context(device):
    default = tessera.current_stream(device)
    assert default == tessera.default_stream(device) and default.id == 0
    s = tessera.Stream(device)
    assert s.device == device and s != default
    with tessera.stream(s) as entered:
        assert entered is s and tessera.current_stream(device) == s
        x = tessera.ones(1000, device=device) * 2
    assert tessera.current_stream(device) == default
    s.synchronize()
    assert s.query()
    assert x.cpu().tolist()[:2] == [2.0, 2.0]
    other = tessera.Stream(device)
    other.wait_stream(s)
    event = s.record_event()
    other.wait_event(event)
    event.synchronize()
    assert event.query()
    tessera.synchronize(device)


def test_events_time_work(device):
    start, end = tessera.Event(device), tessera.Event(device)
    start.record()
    y = tessera.ones(256, 256, device=device)
    for _ in range(3):
        y = y + 1
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    assert y.cpu().tolist()[0][0] == 4.0


def test_memory_statistics(device):
    tessera.synchronize(device)
    tessera.empty_cache(device)
    tessera.reset_peak_memory_stats(device)
    before = tessera.memory_allocated(device)
    x = tessera.empty(1 << 20, device=device)  # 4 MiB
    assert tessera.memory_allocated(device) >= before + (4 << 20)
    assert tessera.memory_reserved(device) >= tessera.memory_allocated(device)
    stats = tessera.memory_stats(device)
    assert stats["allocated_bytes.current"] == tessera.memory_allocated(device)
    assert stats["allocation.current"] >= 1
    del x
    assert tessera.memory_allocated(device) == before
    assert tessera.max_memory_allocated(device) >= before + (4 << 20)
    tessera.empty_cache(device)
    assert tessera.memory_reserved(device) <= tessera.max_memory_reserved(device)
    with pytest.raises(ValueError):
        tessera.set_per_process_memory_fraction(1.5, device)


def test_out_of_memory_is_a_memory_error(device):
    total = tessera.get_device_properties(device)["total_memory"]
    with pytest.raises(MemoryError, match="out of memory|Tried to allocate|allocate"):
        tessera.empty(total // 4 * 8, dtype=tessera.float32, device=device)


def test_fallback_counters_and_switch():
    tessera.reset_fallback_stats()
    assert tessera.fallback_stats() == {}
    assert tessera.fallback_enabled()
    tessera.set_fallback_enabled(False)
    try:
        assert not tessera.fallback_enabled()
    finally:
        tessera.set_fallback_enabled(True)


def test_errors_have_python_types():
    x = tessera.ones(2, 3)
    with pytest.raises(ValueError, match=r"\[2, 3\]"):
        x.view(4)
    with pytest.raises(IndexError):
        x.size(5)
    with pytest.raises(TypeError):
        x.to("cpu", "not a dtype")


def test_threads_run_ops_concurrently(device):
    # Each thread runs its own chain of ops; with the GIL released inside
    # every op they interleave. Results must be exactly each thread's own.
    results, errors = {}, []

    def work(seed):
        try:
            g = tessera.Generator(seed)
            x = tessera.rand(64, 64, generator=g, device=device)
            acc = tessera.zeros(64, 64, device=device)
            for _ in range(20):
                acc = acc + x
            results[seed] = (np.array(acc.cpu().tolist()), np.array(x.cpu().tolist()) * 20)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert sorted(results) == [0, 1, 2, 3]
    for acc, expected in results.values():
        np.testing.assert_allclose(acc, expected, rtol=1e-5)


def _import_with_env(**env_vars):
    """Runs `import tessera`, a matmul and an exp in a fresh process with
    env_vars set; returns (returncode, stdout, stderr)."""
    env = dict(os.environ, **env_vars)
    code = ("import tessera; x = tessera.ones(64, 64); (x @ x).cpu(); "
            "print(tessera.exp(x).tolist()[0][0])")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("name, value, message", [
    ("TESSERA_CPU_ISA", "avx1024", "ignoring TESSERA_CPU_ISA='avx1024' (expected avx2 or avx512)"),
    ("TESSERA_NUM_THREADS", "two", "ignoring TESSERA_NUM_THREADS='two'"),
])
def test_a_bad_setting_in_the_environment_is_reported_and_ignored(name, value, message):
    # These are read while the CPU device registers, inside a static
    # initializer, so they warn on stderr instead of raising; the runtime
    # must still work with its default.
    rc, out, err = _import_with_env(**{name: value})
    assert rc == 0, err
    assert abs(float(out) - 2.718281828) < 1e-5
    assert message in err


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_a_valid_cpu_isa_is_accepted_quietly(isa):
    rc, out, err = _import_with_env(TESSERA_CPU_ISA=isa)
    assert rc == 0, err
    assert abs(float(out) - 2.718281828) < 1e-5
    assert "TESSERA_CPU_ISA" not in err or "lacks AVX-512" in err
