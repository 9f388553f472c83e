"""Check the distributions a release would upload: build them (or read them from --dist),
then refuse any that PyPI or a reader would trip on.

For every published package's wheel and sdist:
- the license file is inside (MIT for polyg's packages, Apache-2.0 for polyg-minilm);
- the metadata has authors, keywords, classifiers, project URLs and a markdown README
  whose links are absolute (a relative link is dead on a package page);
- the model's files (model.onnx, model.safetensors) are in polyg-minilm only, and
  polyg-mcp's sdist stays under 2 MB;
- `twine check --strict` passes (twine from this environment, else through `uvx`).

Usage:
    uv run python scripts/check_dist.py                 # build every published package
    uv run python scripts/check_dist.py --dist dist     # check what is already built
"""

from __future__ import annotations

import argparse
import email
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ["polyg-shared", "polyg-minilm", "polyg-core", "polyg-server", "polyg-cli", "polyg-mcp"]
MODEL_FILES = ("model.onnx", "model.safetensors")
MODEL_PACKAGE = "polyg-minilm"
SDIST_LIMITS = {"polyg-mcp": 2_000_000}
"""Largest sdist in bytes, per package."""
LICENSE_FIRST_LINE = {"MIT": "MIT License", "Apache-2.0": "Apache License"}
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Dist:
    """One built file: its package, kind (wheel or sdist), path and the names inside."""

    package: str
    kind: str
    path: Path
    names: list[str]

    def read(self, suffix: str) -> str:
        """The text of the first member whose name ends with `suffix`."""
        name = next(n for n in self.names if n.endswith(suffix))
        if self.kind == "wheel":
            with zipfile.ZipFile(self.path) as zf:
                return zf.read(name).decode("utf-8")
        with tarfile.open(self.path) as tf:
            member = tf.extractfile(name)
            assert member is not None
            return member.read().decode("utf-8")


def build(out: Path) -> None:
    """Build every published package's wheel and sdist into `out`."""
    for package in PUBLISHED:
        subprocess.run(
            ["uv", "build", "--quiet", "--package", package, "--out-dir", str(out)],
            cwd=ROOT,
            check=True,
        )


def find_dists(folder: Path) -> list[Dist]:
    """The wheels and sdists in `folder`, with the names they hold."""
    found: list[Dist] = []
    for path in sorted(folder.iterdir()):
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
            kind = "wheel"
        elif path.name.endswith(".tar.gz"):
            with tarfile.open(path) as tf:
                names = tf.getnames()
            kind = "sdist"
        else:
            continue
        package = path.name.split("-")[0].replace("_", "-")
        found.append(Dist(package, kind, path, names))
    return found


def metadata(dist: Dist) -> Message:
    """The core metadata (METADATA in a wheel, PKG-INFO in an sdist)."""
    text = dist.read(".dist-info/METADATA" if dist.kind == "wheel" else "/PKG-INFO")
    return email.message_from_string(text)


def problems_of(dist: Dist) -> list[str]:
    """What is wrong with one distribution, as sentences naming the fix."""
    where = f"{dist.path.name}:"
    out: list[str] = []
    meta = metadata(dist)
    expression = meta.get("License-Expression", "")
    licenses = [n for n in dist.names if Path(n).name == "LICENSE"]
    if not licenses:
        out.append(f"{where} no LICENSE file (add LICENSE beside its pyproject.toml)")
    elif expression in LICENSE_FIRST_LINE:
        first = dist.read(licenses[0]).strip().splitlines()[0].strip()
        if not first.startswith(LICENSE_FIRST_LINE[expression]):
            out.append(f"{where} LICENSE starts with {first!r}, not the {expression} text")
    else:
        out.append(f"{where} License-Expression is {expression!r}, expected MIT or Apache-2.0")
    for field in ("Author", "Keywords"):
        if not meta.get(field) and not (field == "Author" and meta.get("Author-email")):
            out.append(f"{where} no {field} (set it in [project] of pyproject.toml)")
    if not meta.get_all("Classifier"):
        out.append(f"{where} no classifiers")
    urls = meta.get_all("Project-URL") or []
    if not any(u.startswith("Repository, https://") for u in urls):
        out.append(f"{where} no Repository URL in [project.urls]")
    if meta.get("Description-Content-Type") != "text/markdown":
        out.append(f"{where} the README is not declared as markdown")
    relative = [
        link
        for link in _LINK.findall(meta.get_payload() or "")  # type: ignore[arg-type]
        if not link.startswith(("https://", "http://", "mailto:", "#"))
    ]
    if relative:
        out.append(f"{where} relative links in the README (dead on a package page): {relative}")
    if dist.package != MODEL_PACKAGE:
        model = [n for n in dist.names if n.endswith(MODEL_FILES)]
        if model:
            out.append(f"{where} carries the model's files {model}; they belong in polyg-minilm")
    limit = SDIST_LIMITS.get(dist.package)
    size = dist.path.stat().st_size
    if dist.kind == "sdist" and limit is not None and size > limit:
        out.append(f"{where} {size:,} bytes, over the {limit:,}-byte limit")
    return out


def twine_check(paths: list[Path]) -> tuple[bool, str]:
    """`twine check --strict` on the files: (passed, output)."""
    if importlib.util.find_spec("twine") is not None:
        command = [sys.executable, "-m", "twine"]
    elif shutil.which("uvx"):
        command = ["uvx", "twine"]
    else:
        return False, "twine is not installed and uvx is not on PATH: `pip install twine`"
    done = subprocess.run(
        [*command, "check", "--strict", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0, done.stdout + done.stderr


def check(folder: Path, *, run_twine: bool = True) -> list[str]:
    """Every problem of the distributions in `folder` (empty: ready to upload)."""
    dists = find_dists(folder)
    out: list[str] = []
    for package in PUBLISHED:
        kinds = {d.kind for d in dists if d.package == package}
        for kind in ("wheel", "sdist"):
            if kind not in kinds:
                out.append(f"{package}: no {kind} in {folder}")
    unexpected = sorted({d.package for d in dists} - set(PUBLISHED))
    if unexpected:
        out.append(f"{folder} holds packages that are never published: {unexpected}")
    for dist in dists:
        out.extend(problems_of(dist))
    if run_twine and dists:
        passed, text = twine_check([d.path for d in dists])
        if not passed:
            out.append(f"twine check --strict failed:\n{text}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check the wheels and sdists of a release.")
    parser.add_argument("--dist", type=Path, help="a folder of built files (default: build now)")
    parser.add_argument("--no-twine", action="store_true", help="skip `twine check`")
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = opts.dist
        if folder is None:
            folder = Path(tmp)
            build(folder)
        elif not folder.is_dir():
            parser.error(f"--dist {folder} is not a folder")
        for dist in find_dists(folder):
            print(f"{dist.path.stat().st_size:>12,}  {dist.path.name}")
        found = check(folder, run_twine=not opts.no_twine)
    for problem in found:
        print(f"problem: {problem}")
    print("ok: ready to upload" if not found else f"{len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
