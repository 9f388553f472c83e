"""Build the wheels, install them into fresh venvs with pip and with uv, and print the sizes.

    uv run python scripts/install_size.py                       # polyg-core[local] and polyg-mcp
    uv run python scripts/install_size.py "polyg-core[embedded]"

polyg's packages come from the freshly built wheels (`--find-links`), every other
dependency from the package index. Also lists the polyg-core wheel's files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["polyg-core[local]", "polyg-mcp"]


def size_mb(path: Path) -> float:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            file = Path(dirpath) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total / 1e6


def run(args: list[str], **kwargs: object) -> None:
    subprocess.run(args, check=True, **kwargs)  # type: ignore[call-overload]


def main(targets: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp) / "wheels"
        run(["uv", "build", "--all-packages", "--wheel", "-q", "-o", str(wheels)], cwd=ROOT)
        (core,) = wheels.glob("polyg_core-*.whl")
        with zipfile.ZipFile(core) as wheel:
            infos = wheel.infolist()
        folders: dict[str, int] = {}
        for info in infos:
            parts = info.filename.split("/")
            key = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
            folders[key] = folders.get(key, 0) + 1
        print(f"{core.name}: {core.stat().st_size / 1e6:.2f} MB, {len(infos)} files")
        for key, count in sorted(folders.items()):
            print(f"  {key}{'/' if count > 1 or key.count('/') else ''} ({count} files)")
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        for target in targets:
            pip_env = Path(tmp) / "pip"
            venv.create(pip_env, with_pip=True, clear=True)
            python = str(pip_env / "bin" / "python")
            run(
                [python, "-m", "pip", "install", "-q", "--find-links", str(wheels), target],
                env=env,
            )
            listed = subprocess.run(
                [python, "-m", "pip", "list"], env=env, capture_output=True, text=True, check=True
            ).stdout.lower()
            torch = "torch " in listed
            print(f"pip  {target}: {size_mb(pip_env):.0f} MB (torch installed: {torch})")
            uv_env = Path(tmp) / "uv"
            run(["uv", "venv", "-q", "--clear", str(uv_env)], env=env)
            run(
                [
                    "uv",
                    "pip",
                    "install",
                    "-q",
                    "--python",
                    str(uv_env / "bin" / "python"),
                    "--find-links",
                    str(wheels),
                    target,
                ],
                env=env,
            )
            print(f"uv   {target}: {size_mb(uv_env):.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or TARGETS))
