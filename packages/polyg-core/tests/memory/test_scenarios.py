"""Seed 000's scenarios, loaded through the public API, answer their own queries.

Every shipped scenario is loaded once into a fresh namespace (module-scoped: the
load embeds every text, recall only reads), its node counts are checked against
seed 000's table, and each of its queries runs through `recall` on the rule-based
path and on the LLM path (a scripted OpenAI-compatible loopback model).
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.litellm import LiteLLMProvider
from polyg_core.scenarios import (
    PROBE_KINDS,
    Scenario,
    ScenarioQuery,
    available,
    load_scenario,
    read_scenario,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import ScriptedLLMServer, chain_synthesis
from polyg_shared.retrieval import RecallResult
from polyg_shared.timeutil import parse_timestamp

pytestmark = pytest.mark.anyio

REF = "2026-01-14T12:00:00Z"
"""Every scenario's data lies before this instant; "now" for the queries."""

SEED_TABLE = {
    # seed 000, "Scenarios to Generate": entities, events, causal links
    "deployment_failure": (5, 10, 4),
    "project_timeline": (8, 50, 2),
    "team_structure": (20, 5, 0),
    "knowledge_evolution": (10, 30, 10),
    "incident_response": (15, 100, 20),
}
CURATED = ("software_engineering", "personal_knowledge")  # seed 000's two YAML examples
ALL = (*SEED_TABLE, *CURATED)

LOAD_TIMEOUT_S = 120
RECALL_TIMEOUT_S = 30


# -- scripted model -----------------------------------------------------------------------------


def _known_names(user: str) -> list[str]:
    block = user.split("Known entity names:", 1)[-1].split("\n\n", 1)[0]
    return [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]


def _classify(user: str) -> dict[str, Any]:
    question = user.split("<<<\n", 1)[-1].split("\n>>>", 1)[0]
    first = question.strip().split()[0].lower() if question.strip() else ""
    kind = {"why": "WHY", "when": "WHEN", "who": "WHO", "what": "WHAT", "which": "WHAT"}.get(
        first, "EXPLORE"
    )
    return {
        "type": kind,
        "entities": _known_names(user),
        "timeframe_phrase": None,
        "timeframe_start": None,
        "timeframe_end": None,
        "causal_direction": "upstream" if kind == "WHY" else "both",
        "depth_hints": None,
        "semantic_query": question[:120],
        "confidence": 0.9,
        "multi_hop": False,
    }


def scenario_responder(messages: list[dict[str, Any]]) -> str:
    """A model that classifies by the question's first word and answers from the context."""
    system = str(messages[0]["content"])
    user = str(messages[-1]["content"])
    if system.startswith("You classify"):
        return json.dumps(_classify(user))
    if system.startswith("You answer questions"):
        lines = user.split("\nNode ids:", 1)[0].splitlines()
        return json.dumps(chain_synthesis(user, [line for line in lines if line.startswith("- ")]))
    return json.dumps({"entities": [], "relations": [], "events": [], "facts": []})


# -- fixtures -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """A scenario loaded into its own namespace."""

    name: str
    scenario: Scenario
    namespace: str
    store: FalkorStore
    embedder: Embedder


@pytest.fixture(scope="module")
async def scenarios(
    module_store: FalkorStore, embedder: Embedder
) -> AsyncIterator[dict[str, Loaded]]:
    """Every shipped scenario, each loaded once into its own namespace for the module."""
    loaded: dict[str, Loaded] = {}
    try:
        for name in ALL:
            namespace = f"t_scn_{uuid.uuid4().hex[:10]}"
            loaded[name] = Loaded(name, read_scenario(name), namespace, module_store, embedder)
            memory = Memory(store=module_store, embedder=embedder, namespace=namespace)
            with anyio.fail_after(LOAD_TIMEOUT_S):
                report = await load_scenario(memory, name)
            assert report.failed == 0, report.errors
        yield loaded
    finally:
        for item in loaded.values():
            with contextlib.suppress(Exception):
                await module_store.delete_graph(item.namespace)


@pytest.fixture(scope="module")
async def scripted_llm(anyio_backend: str) -> AsyncIterator[LiteLLMProvider]:
    async with ScriptedLLMServer(responder=scenario_responder) as server:
        yield server.provider(timeout_s=10, max_retries=1)


# -- checks -------------------------------------------------------------------------------------

VIEW_OF = {"causal": "causal", "temporal": "temporal", "entity": "entity", "semantic": "semantic"}
"""A scenario's expected intents name the views that must contribute nodes."""

RULE_XFAIL: dict[tuple[str, str], str] = {}
LLM_XFAIL: dict[tuple[str, str], str] = {}


def _cases(xfail: dict[tuple[str, str], str]) -> Iterator[Any]:
    for name in ALL:
        for i, q in enumerate(read_scenario(name).queries):
            reason = xfail.get((name, q.input))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, i, marks=marks, id=f"{name}: {q.input}")


def _lower(text: str) -> str:
    # The context writes times as ISO 8601, answers as "2026-01-05 09:15": compare both ways.
    return re.sub(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})", r"\1 \2", text).lower()


def _missing(text: str, wanted: list[str]) -> list[str]:
    low = _lower(text)
    return [w for w in wanted if w.lower() not in low]


def _present(texts: list[str], unwanted: list[str]) -> list[str]:
    low = [_lower(t) for t in texts]
    return [w for w in unwanted if any(w.lower() in t for t in low)]


def _current_facts(result: RecallResult) -> list[str]:
    return [
        n.text for n in result.nodes if n.label == "T_Fact" and n.attributes.get("valid_to") is None
    ]


def _check_retrieval(result: RecallResult, query: ScenarioQuery) -> None:
    """What both paths share: the named entities, the contributing views, the time window."""
    names = {n.text.lower() for n in result.nodes if n.label == "E_Entity"}
    assert [e for e in query.expected_entities if e.lower() not in names] == [], names
    views = {v.view: v for v in result.views}
    for intent in query.expected_intents:
        view = views[VIEW_OF[intent]]
        assert view.status == "ok" and view.nodes > 0, (intent, view)
    frame: dict[str, Any] = result.intent.get("timeframe") or {}
    if frame.get("start") and frame.get("end"):
        start, end = parse_timestamp(frame["start"]), parse_timestamp(frame["end"])
        outside = [
            n.text
            for n in result.nodes
            if n.label == "T_Event"
            and not start <= parse_timestamp(str(n.attributes["occurred_at_iso"])) <= end
        ]
        assert outside == [], f"events outside {frame}"


async def _recall(memory: Memory, query: ScenarioQuery) -> RecallResult:
    with anyio.fail_after(RECALL_TIMEOUT_S):
        return await memory.recall(query.input, reference_time=REF)


# -- tests --------------------------------------------------------------------------------------


def test_all_shipped_scenarios_are_covered() -> None:
    assert sorted(available()) == sorted(ALL)
    for name in ALL:
        assert read_scenario(name).queries, f"{name} declares no queries"


def test_every_scenario_carries_probes_its_data_cannot_answer() -> None:
    # A probe expects a text the scenario's data does not hold (or holds only in part):
    # no answer from memory can be right, which is what lets calibration be measured.
    for name in ALL:
        scenario = read_scenario(name)
        assert scenario.probes, f"{name} declares no probes"
        data = _lower(scenario.path.read_text(encoding="utf-8").split("\nprobes:")[0])
        for probe in scenario.probes:
            assert probe.kind in PROBE_KINDS
            assert all(q.kind == "answerable" for q in scenario.queries)
            absent = [w for w in probe.expected_answer_contains if w.lower() not in data]
            assert absent, (name, probe.input)


def test_a_probe_of_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nprobes:\n  - input: Who?\n    kind: tricky\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="tricky"):
        read_scenario(bad)


@pytest.mark.parametrize("name", ALL)
async def test_scenario_loads_with_its_declared_sizes(
    scenarios: dict[str, Loaded], name: str
) -> None:
    loaded = scenarios[name]
    memory = Memory(store=loaded.store, embedder=loaded.embedder, namespace=loaded.namespace)
    stats = await memory.statistics()
    counts = (
        stats.graphs["entity"].by_label["E_Entity"],
        stats.graphs["temporal"].by_label["T_Event"],
        stats.graphs["causal"].by_relationship["C_CAUSES"],
    )
    doc: dict[str, Any] = yaml.safe_load(loaded.scenario.path.read_text(encoding="utf-8"))
    declared = tuple(len(doc.get(k) or []) for k in ("entities", "events", "causal_links"))
    assert counts == declared
    if loaded.name in SEED_TABLE:
        assert counts == SEED_TABLE[loaded.name]


@pytest.mark.parametrize(("name", "index"), list(_cases(RULE_XFAIL)))
async def test_rule_path_answers_the_scenario_query(
    scenarios: dict[str, Loaded], name: str, index: int
) -> None:
    loaded = scenarios[name]
    query = loaded.scenario.queries[index]
    memory = Memory(store=loaded.store, embedder=loaded.embedder, namespace=loaded.namespace)
    result = await _recall(memory, query)
    assert result.degraded
    assert _missing(result.answer, query.expected_answer_contains) == [], result.answer
    assert _present([result.answer], query.expected_answer_not_contains) == [], result.answer
    _check_retrieval(result, query)


@pytest.mark.parametrize(("name", "index"), list(_cases(LLM_XFAIL)))
async def test_llm_path_gives_the_model_what_the_answer_needs(
    scenarios: dict[str, Loaded], name: str, index: int, scripted_llm: LiteLLMProvider
) -> None:
    loaded = scenarios[name]
    # The scripted model writes its answer from the causal edges or node lines it is given,
    # so the checks look at that context: what the answer must contain is in it, and no
    # current fact in it carries what the answer must not say.
    query = loaded.scenario.queries[index]
    memory = Memory(
        store=loaded.store, embedder=loaded.embedder, llm=scripted_llm, namespace=loaded.namespace
    )
    result = await _recall(memory, query)
    assert not result.degraded, result.degraded_reasons
    assert result.usage.llm_calls == 2
    assert result.answer
    assert _missing(result.context.text, query.expected_answer_contains) == [], result.context.text
    assert _present(_current_facts(result), query.expected_answer_not_contains) == []
    _check_retrieval(result, query)


@pytest.mark.parametrize("name", ALL)
async def test_every_fact_holds_in_its_window_and_superseded_ones_are_not_current(
    scenarios: dict[str, Loaded], name: str
) -> None:
    # The not_contains checks above are only meaningful if the superseded values are in
    # memory: each fact of the file answers at its valid_from, and at REF only if still valid.
    loaded = scenarios[name]
    memory = Memory(store=loaded.store, embedder=loaded.embedder, namespace=loaded.namespace)
    doc: dict[str, Any] = yaml.safe_load(loaded.scenario.path.read_text(encoding="utf-8"))
    facts: list[dict[str, Any]] = doc.get("facts") or []
    for fact in facts:
        subject, predicate, obj = str(fact["subject"]), str(fact["predicate"]), str(fact["object"])
        then = await memory.temporal.facts(
            loaded.namespace, subject, predicate, as_of=str(fact["valid_from"])
        )
        assert [f.object for f in then] == [obj], fact
        now = await memory.temporal.facts(loaded.namespace, subject, predicate, as_of=REF)
        end = fact.get("valid_to")
        current = end is None or parse_timestamp(REF) < parse_timestamp(str(end))
        assert (obj in [f.object for f in now]) is current, fact
