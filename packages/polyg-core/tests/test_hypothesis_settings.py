"""Property tests never fail on timing: no Hypothesis deadline anywhere."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[3]


def test_the_loaded_hypothesis_profile_has_no_deadline() -> None:
    assert settings.default is not None
    assert settings.default.deadline is None


def test_both_shared_profiles_have_no_deadline() -> None:
    for name in ("repeatable", "explore"):
        assert settings.get_profile(name).deadline is None, name


def test_no_test_sets_its_own_deadline() -> None:
    # A `deadline=` argument inside a `settings(...)` call, over several lines too.
    pattern = re.compile(r"settings\([^()]*\bdeadline\s*=", re.DOTALL)
    offenders = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("packages/*/tests/**/*.py")
        if path != Path(__file__).resolve() and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
