"""torch.cuda's memory tools for tessera, on every tessera device:
memory_summary (the caching allocator's statistics as a report),
memory_snapshot (its segments and blocks, in torch.cuda's format) and the
peak statistics (reset_peak_memory_stats makes every peak the current
value, as torch.cuda does)."""

import gc
import os

import pytest
import torch
from torch_tessera import memory_report

CACHING_OFF = os.environ.get("TESSERA_DISABLE_CACHING_ALLOCATOR", "") not in ("", "0")
caching = pytest.mark.skipif(
    CACHING_OFF, reason="the caching allocator is off (TESSERA_DISABLE_CACHING_ALLOCATOR)")
SMALL_SEGMENT = 2 << 20


def round_up(n, multiple=512):
    return (n + multiple - 1) // multiple * multiple


@pytest.fixture(params=range(torch.tessera.device_count()), ids=lambda i: f"tessera:{i}")
def dev(request):
    """Each tessera device, with nothing cached and its peaks reset."""
    device = torch.device("tessera", request.param)
    gc.collect()
    torch.tessera.synchronize(device)
    torch.tessera.empty_cache()
    torch.tessera.reset_peak_memory_stats(device)
    yield device
    gc.collect()
    torch.tessera.empty_cache()


def segments_of(device):
    return torch.tessera.memory_snapshot(device)


def segment_holding(device, address):
    for seg in segments_of(device):
        if seg["address"] <= address < seg["address"] + seg["total_size"]:
            return seg
    raise AssertionError(f"no segment of {device} holds address {address:#x}")


# -- Peaks.
def test_reset_peak_memory_stats_makes_the_peak_the_current_value(dev):
    base = torch.tessera.memory_allocated(dev)
    kept = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
    freed = torch.empty(3 << 20, dtype=torch.uint8, device=dev)
    assert torch.tessera.max_memory_allocated(dev) == base + (4 << 20)
    del freed
    assert torch.tessera.max_memory_allocated(dev) == base + (4 << 20)  # peaks stay
    torch.tessera.reset_peak_memory_stats(dev)
    assert torch.tessera.max_memory_allocated(dev) == torch.tessera.memory_allocated(dev)
    assert torch.tessera.max_memory_allocated(dev) == base + (1 << 20)
    assert torch.tessera.max_memory_reserved(dev) == torch.tessera.memory_reserved(dev)
    stats = torch.tessera.memory_stats(dev)
    for key in ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes",
                "allocation", "segment"):
        assert stats[f"{key}.all.peak"] == stats[f"{key}.all.current"], key
    # A new high after the reset is a new peak; freeing it keeps that peak.
    again = torch.empty(2 << 20, dtype=torch.uint8, device=dev)
    del again
    assert torch.tessera.max_memory_allocated(dev) == base + (3 << 20)
    del kept


def test_peaks_are_per_device(dev):
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")
    other = torch.device("tessera", 1 - dev.index if dev.index < 2 else 0)
    torch.tessera.reset_peak_memory_stats(other)
    other_peak = torch.tessera.max_memory_allocated(other)
    x = torch.empty(2 << 20, dtype=torch.uint8, device=dev)
    assert torch.tessera.max_memory_allocated(other) == other_peak
    del x


# -- memory_snapshot.
def test_snapshot_agrees_with_the_statistics(dev):
    xs = [torch.empty(n, dtype=torch.uint8, device=dev) for n in (1000, 300_000, 5 << 20)]
    segments = segments_of(dev)
    assert all(seg["device"] == dev.index for seg in segments)
    assert sum(s["total_size"] for s in segments) == torch.tessera.memory_reserved(dev)
    assert sum(s["allocated_size"] for s in segments) == torch.tessera.memory_allocated(dev)
    assert len(segments) == torch.tessera.memory_stats(dev)["segment.all.current"]
    for seg in segments:
        blocks = seg["blocks"]
        assert sum(b["size"] for b in blocks) == seg["total_size"]
        # Blocks tile the segment in address order.
        assert blocks[0]["address"] == seg["address"]
        for a, b in zip(blocks, blocks[1:]):
            assert a["address"] + a["size"] == b["address"]
    addresses = [s["address"] for s in segments]
    assert addresses == sorted(addresses)
    del xs


@pytest.mark.parametrize("nbytes", [1, 4000, 300_000, (3 << 20) + 5])
def test_snapshot_lists_a_tensor_as_an_allocated_block(dev, nbytes):
    x = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    seg = segment_holding(dev, x.data_ptr())
    (block,) = [b for b in seg["blocks"] if b["address"] == x.data_ptr()]
    assert block["state"] == "active_allocated"
    assert block["requested_size"] == nbytes
    assert block["size"] == (nbytes if CACHING_OFF else round_up(nbytes))
    if not CACHING_OFF:
        assert seg["segment_type"] == ("small" if nbytes <= 1 << 20 else "large")
    del x


@caching
def test_freed_blocks_merge_back_into_one_cached_block(dev):
    # On a new stream, whose pool is empty: one new segment, cut in order.
    with torch.tessera.stream(torch.tessera.Stream(dev)):
        a, b, c = (torch.empty(100_000, dtype=torch.uint8, device=dev) for _ in range(3))
    address = a.data_ptr()
    seg = segment_holding(dev, address)
    assert seg["total_size"] == SMALL_SEGMENT
    assert [blk["state"] for blk in seg["blocks"]] == ["active_allocated"] * 3 + ["inactive"]
    # Free the middle block, then its left neighbour (which absorbs it),
    # then the right one (which joins them and the free rest).
    del b
    assert [blk["state"] for blk in segment_holding(dev, address)["blocks"]] == [
        "active_allocated", "inactive", "active_allocated", "inactive"]
    del a
    blocks = segment_holding(dev, address)["blocks"]
    assert [blk["state"] for blk in blocks] == ["inactive", "active_allocated", "inactive"]
    assert blocks[0]["size"] == 2 * round_up(100_000)
    del c
    (whole,) = segment_holding(dev, address)["blocks"]
    assert whole == {"address": address, "size": SMALL_SEGMENT, "requested_size": 0,
                     "state": "inactive"}
    torch.tessera.empty_cache()
    assert all(not (s["address"] <= address < s["address"] + s["total_size"])
               for s in segments_of(dev))


@caching
def test_a_block_another_stream_used_is_pending_free_until_that_stream_is_done(dev):
    side = torch.tessera.Stream(dev)
    x = torch.ones(1000, device=dev)
    address = x.data_ptr()
    with torch.tessera.stream(side):
        y = x * 2
    x.record_stream(side)
    del x  # waits for `side`'s event before it can be reused
    (block,) = [b for b in segment_holding(dev, address)["blocks"] if b["address"] == address]
    assert block["state"] == "active_pending_free"
    torch.tessera.synchronize(dev)
    torch.tessera.empty_cache()  # waits for the events, returns what is free
    assert all(b["address"] != address or b["state"] != "active_pending_free"
               for s in segments_of(dev) for b in s["blocks"])
    del y


def test_snapshot_without_a_device_covers_every_device(dev):
    x = torch.empty(1000, device=dev)
    everything = torch.tessera.memory_snapshot()
    assert {s["device"] for s in everything} <= set(range(torch.tessera.device_count()))
    assert any(s["device"] == dev.index and
               s["address"] <= x.data_ptr() < s["address"] + s["total_size"]
               for s in everything)
    del x


def test_snapshot_of_a_device_that_is_not_tessera_is_an_error():
    with pytest.raises(ValueError, match="expected a tessera device, got cpu"):
        torch.tessera.memory_snapshot("cpu")


# -- memory_summary.
def stat_row(summary, label):
    """The values of the report's row `label`: current, peak, total
    allocated, total freed."""
    for line in summary.splitlines():
        if line.startswith(label + "  "):
            cells = [c for c in line[len(label):].split("  ") if c.strip()]
            return [c.strip() for c in cells]
    raise AssertionError(f"no row {label!r} in:\n{summary}")


def test_summary_reports_the_statistics(dev):
    x = torch.empty(300_000, dtype=torch.uint8, device=dev)
    stats = torch.tessera.memory_stats(dev)
    summary = torch.tessera.memory_summary(dev)
    assert summary.startswith(f"tessera:{dev.index} ({torch.tessera.get_device_name(dev)}")
    fmt = memory_report.format_bytes
    for label, key in (("allocated memory", "allocated_bytes"),
                       ("reserved memory", "reserved_bytes"),
                       ("requested memory", "requested_bytes")):
        assert stat_row(summary, label) == [
            fmt(stats[f"{key}.all.{c}"]) for c in ("current", "peak", "allocated", "freed")]
    assert stat_row(summary, "allocations") == [
        str(stats[f"allocation.all.{c}"]) for c in ("current", "peak", "allocated", "freed")]
    assert f"out of memory {stats['num_ooms']}" in summary
    del x


def test_unabbreviated_summary_adds_the_segments_now(dev):
    x = torch.empty(300_000, dtype=torch.uint8, device=dev)
    full = torch.tessera.memory_summary(dev)
    short = torch.tessera.memory_summary(dev, abbreviated=True)
    assert "segments now" in full and "segments now" not in short
    segments = segments_of(dev)
    for pool in {s["segment_type"] for s in segments}:
        mine = [s for s in segments if s["segment_type"] == pool]
        row = stat_row(full, pool)
        assert row[0] == str(len(mine))
        assert row[1] == memory_report.format_bytes(sum(s["total_size"] for s in mine))
    del x


def test_summary_of_the_current_device_by_default(dev):
    with torch.tessera.device(dev):
        assert torch.tessera.memory_summary().startswith(f"tessera:{dev.index} ")


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (1023, "1023 B"), (1024, "1.00 KiB"), (1536, "1.50 KiB"),
    (5 << 20, "5.00 MiB"), (3 << 30, "3.00 GiB"), (-2048, "-2.00 KiB"),
])
def test_format_bytes(n, text):
    assert memory_report.format_bytes(n) == text
