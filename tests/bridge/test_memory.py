"""Memory statistics of tessera devices: torch.tessera's and
torch.accelerator's memory functions report the runtime caching allocator
(runtime/alloc/caching_allocator.h), whose rules these tests check: sizes
round up to 512 bytes; requests up to 1 MiB come from 2 MiB segments, up to
10 MiB from 20 MiB segments, larger ones from their own segment rounded to
2 MiB; freed blocks stay reserved until empty_cache."""

import gc
import os

import pytest
import torch

CACHING_OFF = os.environ.get("TESSERA_DISABLE_CACHING_ALLOCATOR", "") not in ("", "0")
# With caching off (sanitizer runs) every request is its own exact-size
# allocation, still counted.
MIN_BLOCK = 1 if CACHING_OFF else 512
SMALL_SEGMENT = 2 << 20
LARGE_SEGMENT = 20 << 20
ROUND_LARGE = 2 << 20


def round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


@pytest.fixture
def clean(tessera):
    """A device with nothing cached and the peaks reset."""
    gc.collect()
    torch.tessera.synchronize()
    torch.tessera.empty_cache()
    torch.tessera.reset_peak_memory_stats()
    yield tessera
    gc.collect()
    torch.tessera.empty_cache()


caching = pytest.mark.skipif(
    CACHING_OFF, reason="the caching allocator is off (TESSERA_DISABLE_CACHING_ALLOCATOR)")


@pytest.mark.parametrize("nbytes", [1, 511, 512, 4000, 100_000, 3 << 20, (30 << 20) + 7])
def test_memory_allocated_grows_by_the_rounded_size(clean, nbytes):
    before = torch.tessera.memory_allocated()
    x = torch.empty(nbytes, dtype=torch.uint8, device=clean)
    assert torch.tessera.memory_allocated() - before == round_up(nbytes, MIN_BLOCK)
    stats = torch.tessera.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.tessera.memory_allocated()
    assert stats["requested_bytes.all.current"] >= nbytes
    del x
    assert torch.tessera.memory_allocated() == before


def test_dtype_and_shape_decide_the_bytes(clean):
    before = torch.tessera.memory_allocated()
    x = torch.empty(3, 5, 7, dtype=torch.float64, device=clean)
    assert torch.tessera.memory_allocated() - before == round_up(3 * 5 * 7 * 8, MIN_BLOCK)
    view = x[1:, ::2]  # views allocate nothing
    assert torch.tessera.memory_allocated() - before == round_up(3 * 5 * 7 * 8, MIN_BLOCK)
    del x, view


@caching
@pytest.mark.parametrize("nbytes, segment", [
    (4000, SMALL_SEGMENT),
    (3 << 20, LARGE_SEGMENT),
    ((30 << 20) + 7, round_up((30 << 20) + 7, ROUND_LARGE)),
])
def test_memory_reserved_grows_by_whole_segments(clean, nbytes, segment):
    reserved = torch.tessera.memory_reserved()
    x = torch.empty(nbytes, dtype=torch.uint8, device=clean)
    assert torch.tessera.memory_reserved() - reserved == segment
    assert torch.tessera.memory_reserved() >= torch.tessera.memory_allocated()
    assert torch.tessera.memory_stats()["segment.all.current"] >= 1
    del x


@caching
def test_freed_memory_stays_reserved_until_empty_cache(clean):
    x = torch.empty(5 << 20, dtype=torch.uint8, device=clean)
    reserved = torch.tessera.memory_reserved()
    del x
    assert torch.tessera.memory_reserved() == reserved
    torch.tessera.empty_cache()
    assert torch.tessera.memory_reserved() < reserved
    assert torch.tessera.memory_reserved() == 0


@caching
def test_a_cached_block_is_reused(clean):
    x = torch.empty(1 << 16, device=clean)
    address = x.data_ptr()
    reserved = torch.tessera.memory_reserved()
    del x
    y = torch.empty(1 << 16, device=clean)
    assert y.data_ptr() == address
    assert torch.tessera.memory_reserved() == reserved


def test_max_memory_allocated_and_reset_peak(clean):
    base = torch.tessera.memory_allocated()
    x = torch.empty(1 << 20, dtype=torch.uint8, device=clean)
    y = torch.empty(2 << 20, dtype=torch.uint8, device=clean)
    peak = torch.tessera.max_memory_allocated()
    assert peak == base + (3 << 20)
    del y
    assert torch.tessera.max_memory_allocated() == peak
    assert torch.tessera.max_memory_reserved() >= torch.tessera.memory_reserved()
    torch.tessera.reset_peak_memory_stats()
    assert torch.tessera.max_memory_allocated() == torch.tessera.memory_allocated()
    assert torch.tessera.max_memory_allocated() == base + (1 << 20)
    assert torch.tessera.max_memory_reserved() == torch.tessera.memory_reserved()
    del x


def test_memory_stats_count_allocations(clean):
    torch.tessera.reset_accumulated_memory_stats()
    start = torch.tessera.memory_stats()
    xs = [torch.empty(100, device=clean) for _ in range(3)]
    stats = torch.tessera.memory_stats()
    assert stats["allocation.all.current"] - start["allocation.all.current"] == 3
    assert stats["allocation.all.allocated"] == 3
    del xs
    stats = torch.tessera.memory_stats()
    assert stats["allocation.all.freed"] == 3
    assert stats["num_ooms"] == start["num_ooms"]


def test_accelerator_functions_report_the_same(clean):
    x = torch.empty(12345, device=clean)
    assert torch.accelerator.memory_allocated() == torch.tessera.memory_allocated()
    assert torch.accelerator.memory_allocated("tessera:0") == torch.tessera.memory_allocated(0)
    assert torch.accelerator.memory_reserved() == torch.tessera.memory_reserved()
    assert torch.accelerator.max_memory_allocated() == torch.tessera.max_memory_allocated()
    assert torch.accelerator.max_memory_reserved() == torch.tessera.max_memory_reserved()
    assert (torch.accelerator.memory_stats()["allocated_bytes.all.current"]
            == torch.tessera.memory_allocated())
    torch.accelerator.reset_peak_memory_stats()
    assert torch.tessera.max_memory_allocated() == torch.tessera.memory_allocated()
    del x
    torch.accelerator.empty_cache()
    assert torch.tessera.memory_reserved() == 0


def test_memory_info_matches_the_device(clean):
    free, total = torch.tessera.mem_get_info()
    assert total == torch.tessera.get_device_properties(0).total_memory
    assert 0 < free <= total
    # Free memory moves with the rest of the machine; the total does not.
    assert torch.accelerator.get_memory_info("tessera:0")[1] == total


def test_results_of_ops_are_counted(clean):
    before = torch.tessera.memory_allocated()
    a = torch.ones(1000, device=clean)
    b = a * 2 + 1
    assert torch.tessera.memory_allocated() - before >= 2 * round_up(4000, MIN_BLOCK)
    torch.testing.assert_close(b.cpu(), torch.full((1000,), 3.0))
    del a, b
    gc.collect()
    assert torch.tessera.memory_allocated() == before


def test_memory_fraction_round_trip_and_validation(tessera):
    old = torch.tessera.get_per_process_memory_fraction()
    try:
        torch.tessera.set_per_process_memory_fraction(0.5)
        assert torch.tessera.get_per_process_memory_fraction() == 0.5
        with pytest.raises(RuntimeError, match="fraction must be in \\(0, 1\\], got 2"):
            torch.tessera.set_per_process_memory_fraction(2.0)
        with pytest.raises(RuntimeError, match="fraction must be in"):
            torch.tessera.set_per_process_memory_fraction(0.0)
        assert torch.tessera.get_per_process_memory_fraction() == 0.5
    finally:
        torch.tessera.set_per_process_memory_fraction(old)


def test_memory_of_each_device_is_separate():
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")
    torch.tessera.empty_cache()
    before = [torch.tessera.memory_allocated(i) for i in range(2)]
    x = torch.empty(1 << 20, dtype=torch.uint8, device="tessera:1")
    assert torch.tessera.memory_allocated(1) - before[1] == 1 << 20
    assert torch.tessera.memory_allocated(0) == before[0]
    del x
