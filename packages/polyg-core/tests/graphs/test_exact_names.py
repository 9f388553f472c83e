"""Names on write are exact: uuid, exact or normalised name, else a new node.

Each case is one a new user hit, where a write merged a new name into a
different stored one by embedding similarity, or refused it as ambiguous.
"""

from __future__ import annotations

import anyio
import pytest
from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound
from polyg_core.graphs.bulk import RelationItem, add_relations
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.scratch import ScratchGraphs
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def names(store: FalkorStore, namespace: str) -> list[str]:
    res = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name ORDER BY e.name")
    return [str(r[0]) for r in res.rows]


async def test_causal_link_entities_are_not_merged_into_a_similar_name(
    store: FalkorStore, resolver: NameResolver, causal: CausalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await causal.add_link(
            namespace, "replica lag", "stale reads", 0.8, entities=["payments-db-primary"]
        )
        result = await causal.add_link(
            namespace, "disk full", "replica stopped", 0.9, entities=["payments-db-secondary"]
        )
    assert await names(store, namespace) == ["payments-db-primary", "payments-db-secondary"]
    secondary = await resolver.resolve(namespace, ENTITY_NAMES, "payments-db-secondary")
    assert result.entities == [secondary.uuid]


async def test_bulk_relation_target_is_created_not_merged_into_a_similar_one(
    entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "ghost-source")
        await entities.add(namespace, "ghost-target-y")
        out = await add_relations(
            entities,
            namespace,
            [RelationItem(("ghost-source", None), ("ghost-target-z", None), "x")],
        )
    assert out.outcomes == [True]
    rels = await entities.relationships(namespace, "ghost-source", "out")
    assert [r.target_name for r in rels] == ["ghost-target-z"]


async def test_event_entity_is_created_not_merged_into_a_similar_one(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    temporal = TemporalGraph(store, embedder, resolver)
    with anyio.fail_after(60):
        await temporal.add_event(namespace, "first", "2026-01-01", entities=["Race Entity 0"])
        event = await temporal.add_event(
            namespace, "second", "2026-01-02", entities=["Implicit Race Entity 0"]
        )
    assert event.entities == ["Implicit Race Entity 0"]
    assert await names(store, namespace) == ["Implicit Race Entity 0", "Race Entity 0"]


async def test_a_new_name_next_to_similar_ones_is_not_ambiguous(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    temporal = TemporalGraph(store, embedder, resolver)
    with anyio.fail_after(90):
        for i in range(1, 6):
            await temporal.add_event(namespace, f"boot {i}", "2026-01-01", entities=[f"host-0{i}"])
        event = await temporal.add_event(namespace, "boot 6", "2026-01-01", entities=["host-06"])
    assert event.entities == ["host-06"]
    assert len(await names(store, namespace)) == 6


async def test_normalised_spellings_still_reuse_the_entity_on_a_write(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    temporal = TemporalGraph(store, embedder, resolver)
    with anyio.fail_after(60):
        await temporal.add_event(namespace, "a", "2026-01-01", entities=["auth service"])
        event = await temporal.add_event(namespace, "b", "2026-01-02", entities=["AuthService"])
    assert event.entities == ["auth service"]
    assert await names(store, namespace) == ["auth service"]


async def test_concept_entities_are_named_exactly(
    store: FalkorStore, entities: EntityGraph, semantic: SemanticGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "payments-db-primary")
        await semantic.add_concept(namespace, "replication", entities=["payments-db-secondary"])
    assert await names(store, namespace) == ["payments-db-primary", "payments-db-secondary"]


async def test_linking_refuses_a_typo_with_the_closest_names(
    entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "auth service")
        await entities.add(namespace, "user db")
        with pytest.raises(NodeNotFound) as info:
            await entities.link(namespace, "auth servce", "user db", "reads")
    assert "auth service" in [c.name for c in info.value.candidates]
    assert await names(store, namespace) == ["auth service", "user db"]


async def test_a_new_entity_reports_similar_existing_names(
    entities: EntityGraph, resolver: NameResolver, namespace: str
) -> None:
    with anyio.fail_after(60):
        original, _ = await entities.add(namespace, "auth service")
        typo, created = await entities.add(namespace, "auth servce")
        near = await resolver.similar_existing(
            namespace, ENTITY_NAMES, typo.name, exclude=typo.uuid
        )
    assert created and typo.uuid != original.uuid
    assert [c.uuid for c in near] == [original.uuid]


async def test_causal_nodes_differing_by_subject_stay_apart(
    store: FalkorStore, causal: CausalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        a = await causal.add_link(namespace, "romeo service latency spike", "romeo timeouts", 0.5)
        b = await causal.add_link(namespace, "juliet service latency spike", "juliet timeouts", 0.9)
    assert b.cause_created and b.cause.uuid != a.cause.uuid
    count = await store.query(namespace, "MATCH (c:C_Node) RETURN count(c)")
    assert count.scalar(0) == 4


async def test_scratch_labels_differing_by_a_word_stay_two_nodes(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    scratch = ScratchGraphs(store, embedder)
    with anyio.fail_after(60):
        await scratch.add_node("romeo service latency spike", graph=namespace)
        other = await scratch.add_node("juliet service latency spike", graph=namespace)
        await scratch.add_node("AuthService", graph=namespace)
        controller = await scratch.add_node("AuthController", graph=namespace)
    assert other.created and controller.created
    assert len((await scratch.list_nodes(graph=namespace)).nodes) == 4


async def test_a_typed_bulk_relation_end_must_match_exactly(
    entities: EntityGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "ghost-source", "host")
        await entities.add(namespace, "ghost-target-y", "host")
        out = await add_relations(
            entities,
            namespace,
            [RelationItem(("ghost-source", "host"), ("ghost-target-z", "host"), "x")],
        )
    assert isinstance(out.outcomes[0], NodeNotFound)
    assert await entities.relationships(namespace, "ghost-source") == []


async def test_every_writer_refuses_a_name_shared_by_two_types_the_same_way(
    entities: EntityGraph,
    temporal: TemporalGraph,
    namespace: str,
    causal: CausalGraph,
) -> None:
    with anyio.fail_after(60):
        service, _ = await entities.add(namespace, "atlas", "service")
        await entities.add(namespace, "atlas", "project")
        for write in (
            entities.link(namespace, "atlas", "billing", "calls"),
            temporal.add_event(namespace, "atlas down", "2026-01-01", entities=["atlas"]),
            causal.add_link(namespace, "disk full", "atlas down", 0.9, entities=["atlas"]),
        ):
            with pytest.raises(AmbiguousName) as info:
                await write
            assert service.uuid in {c.uuid for c in info.value.candidates}
        # the uuid names one of them
        event = await temporal.add_event(
            namespace, "atlas up", "2026-01-02", entities=[service.uuid]
        )
    assert event.entities == ["atlas"]


async def test_entities_created_as_link_targets_go_when_their_last_link_goes(
    store: FalkorStore, entities: EntityGraph, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        event = await temporal.add_event(namespace, "boot", "2026-01-01", entities=["host-09"])
        await entities.add(namespace, "host-10")  # added on purpose: stays
        await temporal.delete_event(namespace, event.uuid)
        assert await names(store, namespace) == ["host-09", "host-10"]
        await entities.delete(namespace, "host-10")  # a delete runs orphan cleanup
    assert await names(store, namespace) == []


async def test_update_never_picks_another_entity_by_meaning(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    graph = EntityGraph(store, embedder, resolver)
    with anyio.fail_after(60):
        await graph.add(namespace, "payments-db-primary", "database", {"role": "primary"})
        with pytest.raises(NodeNotFound) as caught:
            await graph.update(namespace, "payments-db-secondary", properties={"role": "replica"})
        assert "payments-db-primary" in [c.name for c in caught.value.candidates]
        primary = await graph.get(namespace, "payments-db-primary")
    assert primary.properties == {"role": "primary"}


async def test_a_rename_onto_an_existing_name_of_another_type_is_refused(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    graph = EntityGraph(store, embedder, resolver)
    with anyio.fail_after(60):
        await graph.add(namespace, "Platform Team", "team")
        await graph.add(namespace, "Infra Group", "organization")
        with pytest.raises(InvalidInput, match=r"already exists.*merge_entities"):
            await graph.update(namespace, "Infra Group", new_name="Platform Team")
        assert await names(store, namespace) == ["Infra Group", "Platform Team"]
        # A new type alone still works, and so does a rename to a free name.
        moved = await graph.update(namespace, "Infra Group", entity_type="team")
        assert moved.entity_type == "team"
        renamed = await graph.update(namespace, "Infra Group", new_name="Infra Guild")
    assert renamed.name == "Infra Guild"
