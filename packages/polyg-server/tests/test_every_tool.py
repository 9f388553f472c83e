"""Seed 000's "Tool Invocation" E2E row: every tool is called through the SDK client with
valid input, and its structured output is validated against its declared outputSchema."""

from __future__ import annotations

from typing import Any, cast

import anyio
import jsonschema
import pytest
from mcp import Client
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.testing import text_of
from polyg_server.tools.jobs import job_queue

pytestmark = pytest.mark.anyio


def keys_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        out: set[str] = set()
        for k, v in cast(dict[Any, Any], value).items():
            out.add(str(k))
            out |= keys_in(v)
        return out
    if isinstance(value, list):
        items = cast(list[Any], value)
        return set[str]().union(*(keys_in(v) for v in items)) if items else set()
    return set()


async def seed(ctx: ServerContext, ns: str) -> None:
    """A small part of seed 000's deployment-failure scenario."""
    mem = ctx.require_memory()
    await mem.entities.add_many(
        ns,
        [
            ("auth-service", "Service", None),
            ("deploy-v2.3.1", "Deployment", None),
            ("Alice", "Person", {"role": "Tech Lead"}),
        ],
    )
    await mem.entities.link(ns, "Alice", "auth-service", "owns")
    await mem.temporal.add_event(
        ns, "Auth service crashed on startup", "2026-01-07T14:05:00Z", entities=["auth-service"]
    )
    await mem.causal.add_link(
        ns, "deploy-v2.3.1", "missing AUTH_SECRET", 0.88, entities=["deploy-v2.3.1"]
    )
    await mem.causal.add_link(
        ns, "missing AUTH_SECRET", "auth service crash", 0.95, entities=["auth-service"]
    )


def calls(scratch: str, other: str) -> list[tuple[str, dict[str, Any] | None]]:
    """Valid calls of every tool, in an order where each finds what it needs.

    An argument dict of None means "built from earlier results" (see the test).
    """
    return [
        # memory writes
        (
            "add_entity",
            {"name": "billing-service", "entity_type": "Service", "properties": {"tier": 2}},
        ),
        ("update_entity", {"entity": "billing-service", "properties": {"owner": "Alice"}}),
        (
            "link_entities",
            {"source": "Alice", "target": "billing-service", "relationship_type": "owns"},
        ),
        (
            "add_event",
            {
                "description": "Billing deploy finished",
                "occurred_at": "2026-01-09T10:00:00Z",
                "entities": ["billing-service"],
            },
        ),
        (
            "add_fact",
            {
                "subject": "billing-service",
                "predicate": "runs_version",
                "object": "1.4",
                "valid_from": "2026-01-09",
            },
        ),
        (
            "invalidate_fact",
            {"subject": "billing-service", "predicate": "runs_version", "at": "2026-01-10"},
        ),
        (
            "add_concept",
            {
                "name": "authentication",
                "description": "login and secrets of the auth-service",
                "entities": ["auth-service"],
            },
        ),
        (
            "add_causal_link",
            {
                "cause": "billing deploy",
                "effect": "billing latency",
                "confidence": 0.7,
                "entities": ["billing-service"],
                "events": ["Billing deploy finished"],
            },
        ),
        (
            "remember",
            {
                "content": "The billing-service was rolled back on 2026-01-10 because invoices failed.",
                "reference_time": "2026-01-10T12:00:00Z",
                "tags": ["WHO:alice"],
            },
        ),
        # reads
        (
            "recall",
            {
                "question": "Why did the auth service crash?",
                "reference_time": "2026-01-14T12:00:00Z",
            },
        ),
        ("get_entity", {"entity": "auth-service"}),
        ("query_timeline", {"start": "2026-01-07", "end": "2026-01-08", "entity": "auth-service"}),
        ("query_facts", {"subject": "billing-service", "as_of": "2026-01-09"}),
        ("fact_history", {"subject": "billing-service", "predicate": "runs_version"}),
        ("get_causal_chain", {"node": "auth service crash", "direction": "both"}),
        ("explain_why", {"effect": "auth service crash"}),
        ("causal_probability", {"cause": "missing AUTH_SECRET", "effect": "auth service crash"}),
        # MAGMA steps
        ("semantic_search", {"query": "auth service crash", "k": 5}),
        ("search_semantic", {"query": "auth service crash", "limit": 5}),
        ("entity_lookup", None),
        ("temporal_expand", None),
        ("causal_expand", None),
        ("subgraph_merge", None),
        ("linearize_context", None),
        # admin
        ("get_statistics", {}),
        ("list_graphs", {}),
        ("get_graph_info", {}),
        ("export_graph", {"max_records": 500}),
        ("import_graph", None),
        # thinking tool on a scratch graph
        ("add_node", {"graph": scratch, "label": "AuthService", "type": "class"}),
        ("add_nodes", {"graph": scratch, "nodes": [{"label": "TokenStore"}, {"label": "Config"}]}),
        (
            "add_edge",
            {"graph": scratch, "source": "AuthService", "target": "TokenStore", "relation": "uses"},
        ),
        (
            "add_edges",
            {
                "graph": scratch,
                "edges": [{"source": "TokenStore", "target": "Config", "relation": "reads"}],
            },
        ),
        ("find_node", {"graph": scratch, "query": "auth service"}),
        ("list_nodes", {"graph": scratch}),
        ("find_edges", {"graph": scratch, "source": "AuthService"}),
        ("get_neighbors", {"graph": scratch, "node": "TokenStore"}),
        ("describe_graph", {"graph": scratch}),
        ("shortest_path", {"graph": scratch, "source": "AuthService", "target": "Config"}),
        ("all_paths", {"graph": scratch, "source": "AuthService", "target": "Config"}),
        ("pagerank", {"graph": scratch}),
        ("betweenness", {"graph": scratch}),
        ("degree_centrality", {"graph": scratch}),
        ("connected_components", {"graph": scratch}),
        ("find_cycles", {"graph": scratch}),
        ("transitive_reduction", {"graph": scratch}),
        ("subgraph", {"graph": scratch, "nodes": ["TokenStore"]}),
        ("export_graph_text", {"graph": scratch, "format": "json"}),
        ("import_graph_text", {"graph": other, "format": "dot", "content": "digraph { a -> b }"}),
        ("remove_edge", {"graph": scratch, "source": "AuthService", "target": "TokenStore"}),
        ("remove_node", {"graph": scratch, "label": "Config"}),
        # destructive
        (
            "update_event",
            {"event": "Auth service crashed on startup", "duration_ms": 60000},
        ),
        ("add_entity", {"name": "auth svc", "entity_type": "Service"}),
        (
            "merge_entities",
            {"source": "auth svc", "target": "auth-service", "confirm": True},
        ),
        (
            "delete_relation",
            {
                "source": "Alice",
                "target": "auth-service",
                "relationship_type": "owns",
                "confirm": True,
            },
        ),
        (
            "delete_causal_link",
            {"cause": "missing AUTH_SECRET", "effect": "auth service crash", "confirm": True},
        ),
        ("delete_node", {"node": "billing-service", "confirm": True}),
        ("clear_graph", {"which": "semantic", "confirm": True}),
        ("delete_graph", {"graph": other, "confirm": True}),
    ]


async def test_every_tool_answers_valid_input_with_output_matching_its_schema(
    memory_ctx: ServerContext, store: FalkorStore, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    scratch, other = namespace + "_scratch", namespace + "_other"
    # A queued job for the job tools (no worker runs here, so it stays queued).
    queued = await (await job_queue(memory_ctx)).enqueue_remember(
        "A queued note about the cache flush.", graph=namespace
    )
    plan: list[tuple[str, dict[str, Any] | None]] = [
        *calls(scratch, other),
        ("list_jobs", {}),
        ("get_job", {"job_id": queued.job_id}),
        ("cancel_job", {"job_id": queued.job_id}),
        ("retry_job", {"job_id": queued.job_id}),
    ]
    results: dict[str, dict[str, Any]] = {}
    try:
        async with Client(create_server(memory_ctx)) as client:
            with anyio.fail_after(20):
                listed = {t.name: t for t in (await client.list_tools()).tools}
            assert {name for name, _ in plan} == set(listed), "every tool needs a call here"
            for name, args in plan:
                if args is None:
                    args = derived_args(name, results)
                with anyio.fail_after(30):
                    result = await client.call_tool(name, args)
                assert not result.is_error, f"{name}: {text_of(result)}"
                data = result.structured_content
                assert data is not None, name
                schema = listed[name].output_schema
                assert schema is not None, name
                jsonschema.validate(data, schema)
                assert "embedding" not in keys_in(data), name
                results[name] = data
    finally:
        for graph in (scratch, other):
            await store.delete_graph(graph)
    # what a user sees from a few of them
    assert results["semantic_search"]["seed_entity_ids"]
    assert next(iter(results["semantic_search"])) == "seed_entity_ids"
    assert "AUTH_SECRET" in results["explain_why"]["answer"]
    assert results["import_graph"]["failed"] == 0
    assert results["import_graph"]["merged"] > 0
    assert results["delete_node"]["deleted"] is True
    assert results["delete_relation"]["deleted"] == 1
    assert results["delete_causal_link"]["deleted"] is True
    assert results["linearize_context"]["text"].startswith("Nodes:")


def derived_args(name: str, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    seeds = results["semantic_search"]["seed_entity_ids"]
    if name == "entity_lookup":
        return {"entities": seeds[:3], "depth": 2}
    if name == "temporal_expand":
        return {"entities": seeds[:3], "start": "2026-01-01", "end": "2026-01-31"}
    if name == "causal_expand":
        return {"nodes": [*seeds[:3], "auth service crash"], "direction": "both"}
    if name == "subgraph_merge":
        views = [results["semantic_search"]["view"]] + [
            results[step]["view"] for step in ("entity_lookup", "temporal_expand", "causal_expand")
        ]
        return {"views": views}
    if name == "linearize_context":
        return {"subgraph": results["subgraph_merge"], "intent_type": "WHY", "max_tokens": 800}
    if name == "import_graph":
        lines = results["export_graph"]["text"].splitlines()
        return {"text": "\n".join(line for line in lines if '"kind":"entity"' in line)}
    raise AssertionError(name)
