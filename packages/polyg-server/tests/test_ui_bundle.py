"""The explorer's bundle under `ui/static/` is a build output of `ui-src/` (committed so that
the wheel needs no Node.js): it must be what the sources build to, never edited by hand.

The bundle check needs Node.js and the explorer's npm packages (`npm ci` in
packages/polyg-server/ui-src); it is skipped with the install line when one is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
UI_SRC = PACKAGE / "ui-src"
STATIC = PACKAGE / "src" / "polyg_server" / "ui" / "static"


def test_the_served_stylesheet_is_the_source_stylesheet() -> None:
    # build.mjs copies it as is: a difference means one of the two was edited alone.
    assert (STATIC / "app.css").read_bytes() == (UI_SRC / "src" / "app.css").read_bytes()


def test_the_served_bundle_is_what_the_sources_build_to(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node.js: install Node.js >= 18 to rebuild the explorer's bundle")
    if not (UI_SRC / "node_modules" / "esbuild").is_dir():
        pytest.skip("the explorer's npm packages are missing: npm ci --prefix " + str(UI_SRC))
    subprocess.run(
        [node, str(UI_SRC / "build.mjs"), str(tmp_path)],
        cwd=UI_SRC,
        check=True,
        capture_output=True,
        timeout=120,
    )
    for name in ("app.js", "app.css"):
        assert (tmp_path / name).read_bytes() == (STATIC / name).read_bytes(), (
            f"ui/static/{name} is not what ui-src builds to: run scripts/build_ui.sh"
        )
