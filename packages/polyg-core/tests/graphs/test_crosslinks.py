"""Cross-links between the graphs, clearing and orphan handling, on the real FalkorDB."""

from __future__ import annotations

import uuid

import pytest
from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.crosslinks import CrossLinker
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.storage.store import FalkorStore
from polyg_shared import CrossLink, CrossLinkType

pytestmark = pytest.mark.anyio


@pytest.fixture
def linker(store: FalkorStore) -> CrossLinker:
    return CrossLinker(store)


async def make(store: FalkorStore, namespace: str, label: str, **props: object) -> str:
    """A bare node of the temporal or causal graph (those graphs have their own tests)."""
    uid = uuid.uuid4().hex
    allowed = {"T_Event", "T_Fact", "C_Node"}
    assert label in allowed
    await store.query(
        namespace, f"CREATE (n:{label}) SET n = $p, n.uuid = $u", {"p": props, "u": uid}
    )
    return uid


async def count(store: FalkorStore, namespace: str, cypher: str) -> int:
    return int((await store.query(namespace, cypher)).scalar(0))


async def test_link_is_idempotent_and_listed_from_both_ends(
    linker: CrossLinker, entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    alice, _ = await entities.add(namespace, "alice", "person")
    event = await make(store, namespace, "T_Event", description="alice deployed")
    cause = await make(store, namespace, "C_Node", description="bad config")
    assert await linker.link(namespace, CrossLinkType.INVOLVES, event, alice.uuid)
    assert not await linker.link(namespace, "X_INVOLVES", event, alice.uuid)
    assert await linker.link(namespace, CrossLinkType.REFERS_TO, cause, event)
    assert await linker.link(namespace, CrossLinkType.AFFECTS, cause, alice.uuid)
    assert await count(store, namespace, "MATCH ()-[r:X_INVOLVES]->() RETURN count(r)") == 1
    assert await linker.links_of(namespace, event) == [
        CrossLink(type=CrossLinkType.INVOLVES, source=event, target=alice.uuid),
        CrossLink(type=CrossLinkType.REFERS_TO, source=cause, target=event),
    ]
    assert {link.source for link in await linker.links_of(namespace, alice.uuid)} == {
        event,
        cause,
    }


async def test_every_allowed_pair_links(
    linker: CrossLinker,
    semantic: SemanticGraph,
    entities: EntityGraph,
    store: FalkorStore,
    namespace: str,
) -> None:
    entity, _ = await entities.add(namespace, "db", "service")
    concept, _ = await semantic.add_concept(namespace, "storage")
    fact = await make(store, namespace, "T_Fact", subject="db", predicate="is", object="up")
    assert await linker.link(namespace, CrossLinkType.REPRESENTS, concept.uuid, entity.uuid)
    assert await linker.link(namespace, CrossLinkType.INVOLVES, fact, entity.uuid)


@pytest.mark.parametrize(
    ("link_type", "source", "target"),
    [
        (CrossLinkType.REPRESENTS, "entity", "concept"),
        (CrossLinkType.INVOLVES, "entity", "event"),
        (CrossLinkType.AFFECTS, "cause", "event"),
        (CrossLinkType.REFERS_TO, "cause", "entity"),
        (CrossLinkType.REFERS_TO, "event", "event2"),
    ],
)
async def test_wrong_label_pair_is_refused(
    linker: CrossLinker,
    semantic: SemanticGraph,
    entities: EntityGraph,
    store: FalkorStore,
    namespace: str,
    link_type: CrossLinkType,
    source: str,
    target: str,
) -> None:
    entity, _ = await entities.add(namespace, "svc", "service")
    concept, _ = await semantic.add_concept(namespace, "topic")
    ids = {
        "entity": entity.uuid,
        "concept": concept.uuid,
        "event": await make(store, namespace, "T_Event", description="e1"),
        "event2": await make(store, namespace, "T_Event", description="e2"),
        "cause": await make(store, namespace, "C_Node", description="c"),
    }
    with pytest.raises(InvalidInput, match=link_type.value):
        await linker.link(namespace, link_type, ids[source], ids[target])
    assert await count(store, namespace, "MATCH ()-[r]->() RETURN count(r)") == 0


async def test_unknown_type_or_node_is_refused(
    linker: CrossLinker, entities: EntityGraph, namespace: str
) -> None:
    entity, _ = await entities.add(namespace, "svc", "service")
    with pytest.raises(InvalidInput, match="X_REPRESENTS"):
        await linker.link(namespace, "X_OWNS", entity.uuid, entity.uuid)
    with pytest.raises(NodeNotFound, match="missing-uuid"):
        await linker.link(namespace, CrossLinkType.INVOLVES, "missing-uuid", entity.uuid)
    with pytest.raises(NodeNotFound):
        await linker.links_of(namespace, "missing-uuid")


async def test_clearing_one_graph_removes_its_nodes_and_links_only(
    linker: CrossLinker,
    semantic: SemanticGraph,
    entities: EntityGraph,
    store: FalkorStore,
    namespace: str,
) -> None:
    await entities.add(namespace, "auth service", "service")
    await entities.add(namespace, "alice", "person")
    await entities.link(namespace, "alice", "auth service", "owns")
    concept, _ = await semantic.add_concept(namespace, "authentication", entities=["auth service"])
    await semantic.add_memory(namespace, "auth broke on monday", concepts=["authentication"])
    event = await make(store, namespace, "T_Event", description="auth outage")
    auth = await entities.get(namespace, "auth service")
    await linker.link(namespace, CrossLinkType.INVOLVES, event, auth.uuid)

    result = await linker.clear(namespace, "semantic")

    assert result.nodes_deleted == {"S_Concept": 1, "S_Memory": 1}
    assert result.relationships_deleted == 2  # S_ABOUT and X_REPRESENTS
    assert await count(store, namespace, "MATCH (n:S_Concept) RETURN count(n)") == 0
    assert await count(store, namespace, "MATCH ()-[r:X_REPRESENTS]->() RETURN count(r)") == 0
    assert await count(store, namespace, "MATCH (n:E_Entity) RETURN count(n)") == 2
    assert await count(store, namespace, "MATCH ()-[r:E_RELATES]->() RETURN count(r)") == 1
    assert await linker.links_of(namespace, event) == [
        CrossLink(type=CrossLinkType.INVOLVES, source=event, target=auth.uuid)
    ]
    assert await linker.delete_node(namespace, concept.uuid) is False


async def test_clearing_entities_drops_links_into_them_and_keeps_metadata(
    linker: CrossLinker, entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    entity, _ = await entities.add(namespace, "svc", "service")
    event = await make(store, namespace, "T_Event", description="deploy")
    await linker.link(namespace, CrossLinkType.INVOLVES, event, entity.uuid)
    result = await linker.clear(namespace, "entity")
    assert result.nodes_deleted == {"E_Entity": 1}
    assert await linker.links_of(namespace, event) == []
    everything = await linker.clear(namespace, "all")
    assert everything.nodes_deleted["T_Event"] == 1
    assert (await store.metadata(namespace))["embedding_model"] == "local/minilm"
    with pytest.raises(InvalidInput, match="unknown graph"):
        await linker.clear(namespace, "scratch")  # type: ignore[arg-type]


async def test_orphans_lists_lonely_nodes_and_dangling_references(
    linker: CrossLinker, entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    await entities.add(namespace, "alice", "person")
    await entities.add(namespace, "bob", "person")
    loner, _ = await entities.add(namespace, "carol", "person")
    await entities.link(namespace, "alice", "bob", "knows")
    dangling = await make(
        store,
        namespace,
        "T_Fact",
        subject="db",
        predicate="is",
        object="up",
        invalidated_by="deleted-fact",
    )
    event = await make(store, namespace, "T_Event", description="x")
    await linker.link(namespace, CrossLinkType.INVOLVES, dangling, loner.uuid)
    found = {(ref.uuid, ref.label) for ref in await linker.orphans(namespace)}
    assert found == {(dangling, "T_Fact"), (event, "T_Event")}
    names = {ref.name for ref in await linker.orphans(namespace)}
    assert names == {"db is up", "x"}


async def test_cleanup_removes_only_implicit_nodes_that_lost_every_link(
    linker: CrossLinker,
    semantic: SemanticGraph,
    entities: EntityGraph,
    store: FalkorStore,
    namespace: str,
) -> None:
    explicit, _ = await entities.add(namespace, "lonely but explicit", "person")
    concept, _ = await semantic.add_concept(namespace, "topic", entities=["implicit target"])
    memory, _ = await semantic.add_memory(namespace, "note", concepts=["implicit concept"])
    assert await linker.cleanup_orphans(namespace) == 0
    assert await linker.delete_node(namespace, concept.uuid)
    assert await linker.delete_node(namespace, memory.uuid)
    # Every delete already removed the implicit nodes it left without links.
    assert await linker.cleanup_orphans(namespace) == 0
    remaining = await store.query(
        namespace, "MATCH (n) WHERE n:E_Entity OR n:S_Concept RETURN n.name ORDER BY n.name"
    )
    assert [r[0] for r in remaining.rows] == [explicit.name]


async def test_an_implicit_entity_named_explicitly_is_kept(
    linker: CrossLinker, semantic: SemanticGraph, entities: EntityGraph, namespace: str
) -> None:
    concept, _ = await semantic.add_concept(namespace, "topic", entities=["Dana"])
    _, created = await entities.add(namespace, "dana", "entity", {"role": "sre"})
    assert not created
    await linker.delete_node(namespace, concept.uuid)
    assert await linker.cleanup_orphans(namespace) == 0
    assert (await entities.get(namespace, "Dana")).properties == {"role": "sre"}


async def test_delete_node_works_for_any_label(
    linker: CrossLinker, store: FalkorStore, namespace: str
) -> None:
    cause = await make(store, namespace, "C_Node", description="c")
    assert await linker.label_of(namespace, cause) == "C_Node"
    assert await linker.delete_node(namespace, cause)
    assert not await linker.delete_node(namespace, cause)
    assert await linker.label_of(namespace, cause) is None
