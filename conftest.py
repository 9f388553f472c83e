"""Test-run settings shared by every package's tests."""

from __future__ import annotations

import os

from hypothesis import settings

# Property tests are derandomized by default so a run is reproducible (CI included);
# HYPOTHESIS_PROFILE=explore searches with fresh random examples on every run.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
