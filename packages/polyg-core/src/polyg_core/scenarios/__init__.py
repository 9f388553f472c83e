"""Scenarios shipped with polyg (seed 000's synthetic test data), and their loader.

A scenario is a YAML file with `entities`, `relations`, `events`, `facts`,
`causal_links`, `queries` (the questions it is meant to answer, with what the
answers should contain) and `probes` (questions its data cannot answer, or answers
only in part: an entity or a time it does not hold, a detail it never recorded; their
expectations name what a right answer would have to say, which the data lacks, so
no answer from it is right and its confidence should be low). `polyg demo` and the
retrieval tests load them; `polyg bench answers` asks both kinds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

from polyg_core.errors import InvalidInput
from polyg_core.transfer.reader import iter_scenario, load_yaml
from polyg_core.transfer.writer import ImportReport, RecordWriter

logger = logging.getLogger(__name__)

__all__ = [
    "PROBE_KINDS",
    "Scenario",
    "ScenarioQuery",
    "available",
    "load_scenario",
    "read_scenario",
    "scenario_path",
]


@dataclass(frozen=True)
class ScenarioQuery:
    """A question of a scenario and what its answer should (not) contain.

    `kind` is "answerable" for a query; for a probe, what the data lacks:
    "unanswerable" (never recorded), "wrong_entity" (an entity memory does not hold),
    "wrong_time" (a time when nothing asked happened) or "partial" (one of two asks).
    """

    input: str
    expected_intents: list[str] = field(default_factory=list[str])
    expected_entities: list[str] = field(default_factory=list[str])
    expected_answer_contains: list[str] = field(default_factory=list[str])
    expected_answer_not_contains: list[str] = field(default_factory=list[str])
    kind: str = "answerable"


PROBE_KINDS = ("unanswerable", "wrong_entity", "wrong_time", "partial")


@dataclass(frozen=True)
class Scenario:
    """A scenario file's name, description, path, queries and probes."""

    name: str
    description: str
    path: Path
    queries: list[ScenarioQuery]
    probes: list[ScenarioQuery] = field(default_factory=list[ScenarioQuery])


def available() -> list[str]:
    """Names of the shipped scenarios (file stems, e.g. "deployment_failure")."""
    root = resources.files(__name__)
    return sorted(p.name[: -len(".yaml")] for p in root.iterdir() if p.name.endswith(".yaml"))


def scenario_path(name_or_path: str | Path) -> Path:
    """The file of a shipped scenario ("deployment_failure" or "deployment-failure") or a path.

    Raises:
        InvalidInput: neither a shipped scenario nor an existing file.
    """
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") and candidate.exists():
        return candidate
    stem = str(name_or_path).replace("-", "_")
    shipped = resources.files(__name__) / f"{stem}.yaml"
    if shipped.is_file():
        return Path(str(shipped))
    raise InvalidInput(
        f"no scenario {str(name_or_path)!r}; use a YAML file path or one of: "
        + ", ".join(available())
    )


def _strings(value: Any) -> list[str]:
    return [str(v) for v in cast(list[Any], value)] if isinstance(value, list) else []


def read_scenario(name_or_path: str | Path) -> Scenario:
    """A scenario's description, queries and probes (its records are read by
    `load_scenario`).

    Raises:
        InvalidInput: unknown scenario, not valid YAML, or a probe of an unknown kind.
    """
    path = scenario_path(name_or_path)
    doc = load_yaml(path)
    return Scenario(
        name=str(doc.get("name") or path.stem),
        description=str(doc.get("description") or ""),
        path=path,
        queries=_questions(doc.get("queries"), path, probes=False),
        probes=_questions(doc.get("probes"), path, probes=True),
    )


def _questions(items: Any, path: Path, *, probes: bool) -> list[ScenarioQuery]:
    out: list[ScenarioQuery] = []
    for item in items or ():
        if not isinstance(item, dict):
            continue
        q = cast(dict[str, Any], item)
        if not q.get("input"):
            continue
        kind = str(q.get("kind") or ("unanswerable" if probes else "answerable"))
        if probes and kind not in PROBE_KINDS:
            raise InvalidInput(
                f"{path.name}: probe {q['input']!r} has kind {kind!r}; use one of "
                + ", ".join(PROBE_KINDS)
            )
        out.append(
            ScenarioQuery(
                input=str(q["input"]),
                expected_intents=_strings(q.get("expected_intents")),
                expected_entities=_strings(q.get("expected_entities")),
                expected_answer_contains=_strings(q.get("expected_answer_contains")),
                expected_answer_not_contains=_strings(q.get("expected_answer_not_contains")),
                kind=kind if probes else "answerable",
            )
        )
    return out


async def load_scenario(
    memory: Any, name_or_path: str | Path, graph: str | None = None, *, strict: bool = True
) -> ImportReport:
    """Write a scenario's entities, relations, events, facts and causal links into memory.

    Args:
        memory: a `polyg_core.memory.Memory`.
        name_or_path: a shipped scenario's name or a YAML file.
        graph: the namespace (default: the memory's).
        strict: validate every record first and write nothing if one is bad.

    Returns:
        The import report (a second load merges everything and creates nothing).

    Raises:
        InvalidInput: unknown scenario or unreadable YAML.
        StorageUnavailable: FalkorDB cannot be reached.
    """
    path = scenario_path(name_or_path)
    doc = load_yaml(path)
    writer = RecordWriter.of(memory)
    namespace = graph or str(memory.namespace)
    return await writer.run(namespace, lambda: iter_scenario(doc), strict=strict)
