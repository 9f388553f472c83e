"""Tools answer what they say: k hits, each edge once, the documented defaults, and the
CLI's export formats."""

from __future__ import annotations

import pytest
from mcp import Client
from polyg_core.config import Settings
from polyg_server.testing import call
from polyg_shared.tools import SemanticSearchInput

pytestmark = pytest.mark.anyio


async def _garden(client: Client) -> None:
    for name in ("greenhouse heater", "greenhouse vent", "greenhouse sensor", "soil probe"):
        await call(client, "add_entity", {"name": name, "entity_type": "device"})
        await call(
            client,
            "add_concept",
            {"name": f"{name} upkeep", "description": f"keeping the {name} working"},
        )


@pytest.mark.parametrize("k", [1, 3, 5])
async def test_semantic_search_answers_at_most_k_hits(memory_client: Client, k: int) -> None:
    await _garden(memory_client)
    out = await call(
        memory_client, "semantic_search", {"query": "greenhouse equipment", "k": k, "min_score": 0}
    )
    assert len(out["hits"]) == k
    scores = [h["score"] for h in out["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert {n["uuid"] for n in out["view"]["nodes"]} == {h["uuid"] for h in out["hits"]}


def test_min_score_is_documented_with_its_real_default() -> None:
    description = SemanticSearchInput.model_fields["min_score"].description or ""
    assert str(Settings().magma_min_semantic_score) in description
    assert "0.5" not in description


async def test_entity_lookup_lists_each_edge_once(memory_client: Client) -> None:
    for name in ("Orla Benn", "Tavi Moss", "Kester Lane", "Wren Ashby"):
        await call(memory_client, "add_entity", {"name": name, "entity_type": "person"})
    pairs = [
        ("Orla Benn", "Tavi Moss"),
        ("Tavi Moss", "Kester Lane"),
        ("Orla Benn", "Kester Lane"),
        ("Kester Lane", "Wren Ashby"),
    ]
    for a, b in pairs:
        await call(
            memory_client,
            "link_entities",
            {"source": a, "target": b, "relationship_type": "works_with"},
        )
    out = await call(memory_client, "entity_lookup", {"entities": ["Orla Benn"], "depth": 3})
    edges = [(e["source"], e["target"], e["type"], e["label"]) for e in out["view"]["edges"]]
    assert len(edges) == len(set(edges)) == len(pairs)


async def test_export_graph_writes_the_cypher_dump_over_mcp(memory_client: Client) -> None:
    await call(memory_client, "add_entity", {"name": "Ines Varga", "entity_type": "person"})
    await call(memory_client, "add_entity", {"name": "Harbor Lab", "entity_type": "org"})
    await call(
        memory_client,
        "link_entities",
        {"source": "Ines Varga", "target": "Harbor Lab", "relationship_type": "works_at"},
    )
    out = await call(memory_client, "export_graph", {"format": "cypher"})
    assert out["format"] == "cypher" and out["truncated"] is False
    statements = [line for line in out["text"].splitlines() if line and not line.startswith("//")]
    assert out["records"] == 3
    assert sum("Ines Varga" in s for s in statements) >= 1
    assert all(s.endswith(";") for s in statements)
    cut = await call(memory_client, "export_graph", {"format": "cypher", "max_records": 1})
    assert cut["records"] == 1 and cut["truncated"] is True
