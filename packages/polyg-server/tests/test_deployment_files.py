"""The shipped docker-compose.yml, Dockerfile and .dockerignore: pinned, keyed, lean.

Before: the compose file ran `falkordb/falkordb:latest` and polyg on 0.0.0.0 with an
empty API key by default, the Dockerfile installed whatever uv was newest, and with no
.dockerignore the build context carried .git, .venv and any local .env.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"


def test_compose_images_are_pinned_to_a_release() -> None:
    images = re.findall(r"^\s*image:\s*(\S+)", COMPOSE.read_text(), flags=re.MULTILINE)
    assert images, "no image in docker-compose.yml"
    for image in images:
        assert re.fullmatch(r"falkordb/falkordb:v\d+\.\d+\.\d+", image), image


def test_compose_requires_an_api_key_from_the_environment() -> None:
    text = COMPOSE.read_text()
    keys = re.findall(r"^\s*POLYG_API_KEY:\s*(.+)$", text, flags=re.MULTILINE)
    assert len(keys) == 1 and keys[0].startswith("${POLYG_API_KEY:?"), keys
    assert re.search(r"^\s*POLYG_HOST:\s*0\.0\.0\.0\s*$", text, flags=re.MULTILINE)
    assert "POLYG_ALLOW_UNAUTHENTICATED" not in text
    assert re.search(r'^\s*- "127\.0\.0\.1:3000:3000"', text, flags=re.MULTILINE)


def test_dockerfile_pins_its_base_image_and_uv() -> None:
    text = (ROOT / "Dockerfile").read_text()
    bases = re.findall(r"^FROM\s+(\S+)", text, flags=re.MULTILINE)
    assert bases and all(re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", b) for b in bases), bases
    assert re.search(r"pip install [^\n]*\buv==\d+\.\d+\.\d+\b", text)


def test_dockerignore_keeps_secrets_and_local_state_out_of_the_build() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for entry in (".git", ".env", "**/.venv", "**/node_modules", "**/__pycache__", ".polyg-data"):
        assert entry in ignored, entry
    # What the Dockerfile copies must stay in the context.
    for needed in ("pyproject.toml", "uv.lock", "README.md", "src", "packages"):
        assert needed not in ignored, needed


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run(
            [docker, "compose", "version"], capture_output=True, check=False
        ).returncode
        == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config_fails_without_a_key_and_passes_with_one() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("no docker compose CLI here (`docker compose` or `docker-compose`)")
    env = {k: v for k, v in os.environ.items() if k != "POLYG_API_KEY"}
    args = [*command, "-f", str(COMPOSE), "config", "-q"]
    without = subprocess.run(args, env=env, capture_output=True, text=True, check=False, timeout=60)
    with_key = subprocess.run(
        args,
        env={**env, "POLYG_API_KEY": "a-test-key"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert without.returncode != 0
    assert "set POLYG_API_KEY" in without.stderr
    assert with_key.returncode == 0, with_key.stderr
