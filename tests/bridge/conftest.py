"""Shared setup for the bridge tests.

torch_tessera is normally autoloaded by ``import torch``; importing it here
as well makes the tests independent of how the package was installed.
``./dev test`` runs these with the bridge installed in ``.venv``.
"""

import pytest
import torch
import torch_tessera  # noqa: F401


@pytest.fixture
def tessera():
    """The first tessera device."""
    if torch.tessera.device_count() == 0:
        pytest.skip("no tessera device")
    return torch.device("tessera", 0)


@pytest.fixture(autouse=True)
def _reset_fallback_stats():
    torch_tessera.reset_fallback_stats()
    yield


def pytest_terminal_summary(terminalreporter):
    """Totals of the OpInfo comparison (test_opinfo.py), per op and dtype
    case, and the cases that failed or are expected to fail."""
    outcomes = {}
    for outcome in ("passed", "skipped", "failed", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if "test_opinfo.py::" in nodeid and getattr(report, "when", "call") in ("call", "setup"):
                outcomes.setdefault(outcome, []).append(nodeid.rsplit("::", 1)[-1])
    if not outcomes:
        return
    counts = {k: len(v) for k, v in outcomes.items()}
    terminalreporter.write_sep("=", "tessera OpInfo vs CPU")
    terminalreporter.write_line(
        "op/dtype cases: pass=%d skip=%d fail=%d xfail=%d xpass=%d"
        % tuple(counts.get(k, 0) for k in ("passed", "skipped", "failed", "xfailed", "xpassed")))
    for outcome in ("failed", "xfailed", "xpassed"):
        for name in sorted(outcomes.get(outcome, [])):
            terminalreporter.write_line(f"  {outcome}: {name}")
