"""The files a release uploads: scripts/check_dist.py passes on a fresh build, and refuses a
distribution without a license, with relative README links, or carrying the model."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from polyg_core.testing.scripts import load_script

ROOT = Path(__file__).resolve().parents[3]


def _check_dist() -> ModuleType:
    return load_script(ROOT / "scripts" / "check_dist.py")


check_dist = _check_dist()

PKG_INFO = """Metadata-Version: 2.4
Name: polyg-mcp
Version: 0.1.0
Summary: an invented distribution for this test
License-Expression: MIT
Description-Content-Type: text/markdown

# polyg-mcp

See [the docs](docs/index.md).
"""


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


@pytest.mark.slow
def test_a_release_build_passes_every_check(tmp_path: Path) -> None:
    if not (ROOT / "uv.lock").exists():
        pytest.skip("needs the repository checkout (uv build --package)")
    check_dist.build(tmp_path)
    problems = check_dist.check(tmp_path, run_twine=True)
    assert problems == [], "\n".join(problems)
    mcp_sdist = next(tmp_path.glob("polyg_mcp-*.tar.gz"))
    assert mcp_sdist.stat().st_size < 2_000_000
    for wheel in tmp_path.glob("*.whl"):
        with zipfile.ZipFile(wheel) as zf:
            assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist()), wheel


def test_a_bad_sdist_gets_one_problem_per_fault(tmp_path: Path) -> None:
    sdist = tmp_path / "polyg_mcp-0.1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        _add(tf, "polyg_mcp-0.1.0/PKG-INFO", PKG_INFO.encode())
        _add(tf, "polyg_mcp-0.1.0/pyproject.toml", b"[project]\nname = 'polyg-mcp'\n")
        # Random bytes do not compress: the file stays over the 2 MB limit.
        _add(tf, "polyg_mcp-0.1.0/model/model.onnx", os.urandom(2_100_000))
    problems = check_dist.check(tmp_path, run_twine=False)
    text = "\n".join(problems)
    assert "no LICENSE file" in text
    assert "no Author" in text and "no Keywords" in text and "no classifiers" in text
    assert "no Repository URL" in text
    assert "relative links in the README" in text and "docs/index.md" in text
    assert "carries the model's files" in text
    assert "over the 2,000,000-byte limit" in text
    assert "polyg-mcp: no wheel" in text and "polyg-core: no sdist" in text
