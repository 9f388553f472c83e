"""Test-run settings shared by every package's tests."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests are derandomized by default so a run is reproducible (CI included);
# HYPOTHESIS_PROFILE=explore searches with fresh random examples on every run. No
# deadline in either: on a busy machine one example can take longer than any fixed
# budget, and a test fails on its behaviour, never on its timing.
settings.register_profile("repeatable", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# The polyg processes tests start (CLI, servers) stop the embedded FalkorDB with their
# last one, as each test expects, instead of leaving it up for the next session; the
# tests of the linger set it themselves.
os.environ["POLYG_EMBEDDED_LINGER_S"] = "0"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `heavy` tests (many minutes each) unless POLYG_HEAVY_TESTS=1."""
    if os.environ.get("POLYG_HEAVY_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="a long run; set POLYG_HEAVY_TESTS=1 to run it")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)
