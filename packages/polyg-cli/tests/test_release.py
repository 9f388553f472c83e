""".github/workflows/release.yml publishes exactly the workspace's public packages, at one version."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
PRIVATE = "Private :: Do Not Upload"


def _projects() -> dict[str, dict[str, Any]]:
    files = [ROOT / "pyproject.toml", *sorted((ROOT / "packages").glob("*/pyproject.toml"))]
    out: dict[str, dict[str, Any]] = {}
    for file in files:
        project = tomllib.loads(file.read_text(encoding="utf-8"))["project"]
        out[project["name"]] = project
    return out


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_the_workflow_publishes_every_public_package_and_no_private_one() -> None:
    projects = _projects()
    public = {name for name, p in projects.items() if PRIVATE not in p.get("classifiers", [])}
    assert "polyg-bench" in projects and "polyg-bench" not in public
    assert set(_workflow()["env"]["PACKAGES"].split()) == public


def test_every_public_package_has_one_version_and_a_readme_and_license() -> None:
    projects = _projects()
    public = [p for p in projects.values() if PRIVATE not in p.get("classifiers", [])]
    assert len({p["version"] for p in public}) == 1
    assert all(p.get("readme") and p.get("license") for p in public)


def test_the_version_check_accepts_the_current_version_and_refuses_another() -> None:
    step = next(
        s
        for s in _workflow()["jobs"]["build"]["steps"]
        if s.get("name", "").startswith("The tag is")
    )
    version = _projects()["polyg-core"]["version"]

    def check(tag: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", step["run"]],
            cwd=ROOT,
            env={"GITHUB_REF_NAME": tag, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
        )

    assert check(f"v{version}").returncode == 0
    refused = check("v99.0.0")
    assert refused.returncode == 1 and "is not at version 99.0.0" in refused.stdout


def test_the_publish_job_uses_trusted_publishing() -> None:
    publish = _workflow()["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert any("pypi-publish" in s.get("uses", "") for s in publish["steps"])
