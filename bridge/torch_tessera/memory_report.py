"""The text of ``torch.tessera.memory_summary()``: the caching allocator's
statistics (``memory_stats``) and, unabbreviated, what its segments hold
now (``memory_snapshot``), laid out as tables."""

from typing import Iterable, Sequence

# (label, memory_stats key prefix): byte statistics, then counts. The
# runtime keeps them for the whole device (".all"); torch's per-pool keys
# stay zero, so the per-pool table comes from the snapshot instead. Keys
# the runtime does not keep (active and inactive-split block counts) are
# left out rather than shown as zeros.
_BYTE_ROWS = (
    ("allocated", "allocated_bytes"),
    ("active", "active_bytes"),
    ("requested", "requested_bytes"),
    ("reserved", "reserved_bytes"),
    ("inactive split", "inactive_split_bytes"),
)
_COUNT_ROWS = (
    ("allocations", "allocation"),
    ("segments", "segment"),
)
_COLUMNS = ("current", "peak", "allocated", "freed")
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(n: int) -> str:
    """1536 -> '1.50 KiB'; whole bytes below 1 KiB."""
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{sign}{int(value)} B" if unit == "B" else f"{sign}{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list:
    """Left-aligned first column, right-aligned others, a rule under the header."""
    rows = [list(header)] + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join([first] + rest).rstrip()

    out = [line(rows[0]), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows[1:])
    return out


def _stat_rows(stats: dict) -> list:
    rows = []
    for label, key in _BYTE_ROWS:
        rows.append([label + " memory"] +
                    [format_bytes(stats.get(f"{key}.all.{c}", 0)) for c in _COLUMNS])
    for label, key in _COUNT_ROWS:
        rows.append([label] + [str(stats.get(f"{key}.all.{c}", 0)) for c in _COLUMNS])
    return rows


def _pool_rows(segments: list) -> list:
    """Per segment type, from the snapshot: what is reserved and what in it
    is allocated, waiting for other streams, or cached."""
    pools = {}
    for seg in segments:
        p = pools.setdefault(seg["segment_type"], [0, 0, 0, 0, 0])
        p[0] += 1
        p[1] += seg["total_size"]
        p[2] += seg["allocated_size"]
        p[3] += seg["active_size"] - seg["allocated_size"]
        p[4] += seg["total_size"] - seg["active_size"]
    return [[name, str(p[0])] + [format_bytes(b) for b in p[1:]]
            for name, p in sorted(pools.items())]


def summary(title: str, stats: dict, segments=None) -> str:
    """The report for one device: `stats` from memory_stats, `segments`
    from memory_snapshot (None: leave the per-pool table out)."""
    lines = [title, ""]
    lines += _table(("statistic", "current", "peak", "total allocated", "total freed"),
                    _stat_rows(stats))
    lines.append("")
    lines.append(
        "device allocations {} / frees {}; allocation retries after freeing the cache {}; "
        "out of memory {}".format(stats.get("num_device_alloc", 0),
                                  stats.get("num_device_free", 0),
                                  stats.get("num_alloc_retries", 0),
                                  stats.get("num_ooms", 0)))
    if segments is not None:
        lines.append("")
        if segments:
            lines += _table(("segments now", "count", "reserved", "allocated",
                             "pending free", "cached"), _pool_rows(segments))
        else:
            lines.append("segments now: none (nothing reserved)")
    return "\n".join(lines) + "\n"
