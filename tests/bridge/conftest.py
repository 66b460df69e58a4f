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
