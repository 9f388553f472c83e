"""The entity graph against the real embedded FalkorDB and the local embedder."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_core.config import StorageSettings
from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound
from polyg_core.graphs.base import name_key
from polyg_core.graphs.entity import EntityGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.storage.store import FalkorStore, QueryResult
from polyg_core.testing.counting import CountingStore

pytestmark = pytest.mark.anyio

HOSTILE = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'quote " and \\ backslash',
    "})-[:X]->(m) RETURN m",
    "MATCH (n) RETURN n",
    "})",
]


@pytest.fixture
def graph(store: FalkorStore, embedder: Embedder) -> EntityGraph:
    return EntityGraph(store, embedder, NameResolver(store, embedder))


async def test_create_entity_returns_it_with_timestamps(graph: EntityGraph, namespace: str) -> None:
    with anyio.fail_after(30):
        entity, created = await graph.add(
            namespace, "Auth Service", "Service", {"owner": "alice", "port": 443}
        )
    assert created
    assert entity.name == "Auth Service"
    assert entity.entity_type == "service"
    assert entity.properties == {"owner": "alice", "port": 443}
    assert entity.created_at == entity.updated_at
    assert len(entity.uuid) == 32


async def test_spellings_of_one_name_and_type_are_one_entity(
    graph: EntityGraph, namespace: str
) -> None:
    first, created = await graph.add(namespace, "auth service", "service")
    assert created
    for spelling in ("AuthService", "auth-service", "AUTH_SERVICE"):
        again, created = await graph.add(namespace, spelling, "service")
        assert not created
        assert again.uuid == first.uuid
        assert again.name == "auth service"
    other_type, created = await graph.add(namespace, "AuthService", "team")
    assert created
    assert other_type.uuid != first.uuid


async def test_get_by_name_normalised_name_and_uuid(graph: EntityGraph, namespace: str) -> None:
    entity, _ = await graph.add(namespace, "Billing Database", "database")
    assert (await graph.get(namespace, "Billing Database")).uuid == entity.uuid
    assert (await graph.get(namespace, "billing-database")).uuid == entity.uuid
    assert (await graph.get(namespace, entity.uuid)).uuid == entity.uuid
    assert (await graph.get(namespace, "billing database", "Database")).uuid == entity.uuid


async def test_get_unknown_name_raises_with_candidates(graph: EntityGraph, namespace: str) -> None:
    await graph.add(namespace, "payment gateway", "service")
    with pytest.raises(NodeNotFound) as info:
        await graph.get(namespace, "kubernetes cluster")
    assert "No entity named 'kubernetes cluster'" in str(info.value)
    assert [c.name for c in info.value.candidates] == ["payment gateway"]


async def test_same_name_of_two_types_is_ambiguous_until_type_given(
    graph: EntityGraph, namespace: str
) -> None:
    service, _ = await graph.add(namespace, "Atlas", "service")
    team, _ = await graph.add(namespace, "Atlas", "team")
    with pytest.raises(AmbiguousName) as info:
        await graph.get(namespace, "Atlas")
    assert {c.uuid for c in info.value.candidates} == {service.uuid, team.uuid}
    assert (await graph.get(namespace, "Atlas", "team")).uuid == team.uuid


async def test_adding_again_merges_properties_or_replaces_them(
    graph: EntityGraph, namespace: str
) -> None:
    await graph.add(namespace, "alice", "person", {"role": "dev", "team": "core"})
    merged, created = await graph.add(namespace, "Alice", "person", {"role": "lead"})
    assert not created
    assert merged.properties == {"role": "lead", "team": "core"}
    replaced, _ = await graph.add(namespace, "alice", "person", {"city": "Oslo"}, mode="replace")
    assert replaced.properties == {"city": "Oslo"}
    untouched, _ = await graph.add(namespace, "alice", "person")
    assert untouched.properties == {"city": "Oslo"}


async def test_update_merges_or_replaces_properties(graph: EntityGraph, namespace: str) -> None:
    entity, _ = await graph.add(namespace, "bob", "person", {"a": 1, "b": 2})
    merged = await graph.update(namespace, "bob", properties={"b": 3, "c": 4})
    assert merged.properties == {"a": 1, "b": 3, "c": 4}
    assert merged.updated_at >= entity.updated_at
    replaced = await graph.update(namespace, entity.uuid, properties={"z": 0}, mode="replace")
    assert replaced.properties == {"z": 0}
    assert (await graph.get(namespace, "bob")).properties == {"z": 0}


async def test_update_renames_and_retypes(graph: EntityGraph, namespace: str) -> None:
    entity, _ = await graph.add(namespace, "old api", "service")
    renamed = await graph.update(namespace, "old api", new_name="Public API", entity_type="system")
    assert (renamed.uuid, renamed.name, renamed.entity_type) == (
        entity.uuid,
        "Public API",
        "system",
    )
    assert (await graph.get(namespace, "public-api")).uuid == entity.uuid
    assert await graph.known_names(namespace) == [("Public API", "publicapi")]


async def test_rename_onto_an_existing_entity_is_refused(
    graph: EntityGraph, namespace: str
) -> None:
    await graph.add(namespace, "frontend", "service")
    await graph.add(namespace, "backend", "service")
    with pytest.raises(InvalidInput, match="already exists"):
        await graph.update(namespace, "frontend", new_name="Backend")
    assert (await graph.get(namespace, "frontend")).name == "frontend"


async def test_delete_removes_entity_and_its_relations(graph: EntityGraph, namespace: str) -> None:
    await graph.add(namespace, "cache", "service")
    await graph.add(namespace, "redis", "database")
    await graph.link(namespace, "cache", "redis", "uses")
    assert await graph.delete(namespace, "Redis")
    with pytest.raises(NodeNotFound):
        await graph.get(namespace, "redis", "database")
    assert await graph.relationships(namespace, "cache") == []
    assert not await graph.delete(namespace, "redis")


async def test_link_is_idempotent_and_listed_by_direction(
    graph: EntityGraph, namespace: str
) -> None:
    alice, _ = await graph.add(namespace, "alice", "person")
    auth, _ = await graph.add(namespace, "auth service", "service")
    team, _ = await graph.add(namespace, "platform team", "team")
    rel = await graph.link(namespace, "alice", "AuthService", "owns", {"since": 2021})
    again = await graph.link(namespace, alice.uuid, auth.uuid, "OWNS")
    await graph.link(namespace, "alice", "platform team", "member of")
    await graph.link(namespace, "platform team", "auth service", "maintains")
    assert (rel.source, rel.target, rel.relationship_type) == (alice.uuid, auth.uuid, "owns")
    assert rel.properties == {"since": 2021}
    assert again.properties == {"since": 2021}
    assert (rel.source_name, rel.target_name) == ("alice", "auth service")
    out = await graph.relationships(namespace, "alice", "out")
    assert sorted(r.relationship_type for r in out) == ["member of", "owns"]
    incoming = await graph.relationships(namespace, "auth service", "in")
    assert {(r.source, r.relationship_type) for r in incoming} == {
        (alice.uuid, "owns"),
        (team.uuid, "maintains"),
    }
    assert len(await graph.relationships(namespace, "platform team", "both")) == 2


async def test_self_link_is_refused_even_through_another_spelling(
    graph: EntityGraph, namespace: str
) -> None:
    await graph.add(namespace, "auth service", "service")
    with pytest.raises(InvalidInput, match="itself"):
        await graph.link(namespace, "auth service", "AuthService", "depends on")
    assert await graph.relationships(namespace, "auth service") == []


async def test_link_to_unknown_entity_names_candidates(graph: EntityGraph, namespace: str) -> None:
    await graph.add(namespace, "alice", "person")
    with pytest.raises(NodeNotFound, match="No entity named 'zeta quasar'"):
        await graph.link(namespace, "alice", "zeta quasar", "knows")


async def test_unlink_removes_only_that_relation(graph: EntityGraph, namespace: str) -> None:
    await graph.add_many(namespace, [("a1", "x", None), ("b1", "x", None)])
    await graph.link(namespace, "a1", "b1", "calls")
    await graph.link(namespace, "a1", "b1", "owns")
    assert await graph.unlink(namespace, "a1", "b1", "Calls") == 1
    assert [r.relationship_type for r in await graph.relationships(namespace, "a1")] == ["owns"]


async def test_add_many_is_one_batch_with_duplicates_collapsed(
    graph: EntityGraph, namespace: str
) -> None:
    existing, _ = await graph.add(namespace, "Gateway", "service", {"v": 1})
    results = await graph.add_many(
        namespace,
        [
            ("gateway", "service", {"w": 2}),
            ("Queue", "service", None),
            ("queue", "Service", {"q": True}),
            ("Queue", "team", None),
        ],
    )
    assert [created for _, created in results] == [False, True, False, True]
    assert results[0][0].uuid == existing.uuid
    assert results[0][0].properties == {"v": 1, "w": 2}
    assert results[1][0].uuid == results[2][0].uuid
    assert results[2][0].properties == {"q": True}
    assert len(await graph.list_entities(namespace)) == 3


@pytest.mark.parametrize("name", HOSTILE)
async def test_hostile_names_are_stored_literally(
    graph: EntityGraph, namespace: str, name: str
) -> None:
    entity, created = await graph.add(namespace, name, "thing", {"k": name})
    assert created
    got = await graph.get(namespace, name)
    assert (got.uuid, got.name, got.properties) == (entity.uuid, name, {"k": name})
    other, _ = await graph.add(namespace, "plain", "thing")
    rel = await graph.link(namespace, name, "plain", name)
    assert rel.relationship_type == name
    assert (await graph.get(namespace, other.uuid)).name == "plain"


async def test_bfs_walks_depth_levels_and_survives_cycles(
    graph: EntityGraph, namespace: str
) -> None:
    names = ["n0", "n1", "n2", "n3", "n4"]
    made = await graph.add_many(namespace, [(n, "node", None) for n in names])
    ids = {e.name: e.uuid for e, _ in made}
    for a, b in [("n0", "n1"), ("n1", "n2"), ("n2", "n0"), ("n2", "n3"), ("n3", "n4")]:
        await graph.link(namespace, a, b, "next")
    with anyio.fail_after(10):
        result = await graph.bfs(namespace, [ids["n0"]], depth=2)
    dist = {n.entity.name: n.distance for n in result.nodes}
    assert dist == {"n0": 0, "n1": 1, "n2": 1, "n3": 2}
    assert not result.truncated
    walked = {(e.source_name, e.target_name) for e in result.edges}
    assert walked == {("n0", "n1"), ("n1", "n2"), ("n2", "n0"), ("n2", "n3")}
    full = await graph.bfs(namespace, [ids["n0"]], depth=10)
    assert len(full.nodes) == 5
    assert (await graph.bfs(namespace, [ids["n0"]], depth=0)).nodes[0].entity.name == "n0"


async def test_bfs_stops_at_the_node_limit(graph: EntityGraph, namespace: str) -> None:
    made = await graph.add_many(namespace, [(f"leaf {i}", "n", None) for i in range(8)])
    hub, _ = await graph.add(namespace, "hub", "n")
    for entity, _ in made:
        await graph.link(namespace, hub.uuid, entity.uuid, "has")
    result = await graph.bfs(namespace, [hub.uuid, "no-such-uuid"], depth=1, limit=4)
    assert len(result.nodes) == 4
    assert result.truncated
    assert result.starts == [hub.uuid]
    with pytest.raises(InvalidInput, match="depth"):
        await graph.bfs(namespace, [hub.uuid], depth=11)


async def test_ensure_reuses_known_entities_and_creates_the_rest(
    graph: EntityGraph, namespace: str
) -> None:
    auth, _ = await graph.add(namespace, "auth service", "service")
    mapping = await graph.ensure(namespace, ["AuthService", "Carol", "carol"])
    assert mapping["AuthService"] == auth.uuid
    assert mapping["Carol"] == mapping["carol"]
    carol = await graph.get(namespace, "Carol")
    assert (carol.uuid, carol.entity_type) == (mapping["Carol"], "entity")
    assert await graph.ensure(namespace, ["carol"]) == {"carol": carol.uuid}


async def test_known_names_lists_names_and_keys(graph: EntityGraph, namespace: str) -> None:
    await graph.add_many(namespace, [("Auth Service", "s", None), ("Bob", "p", None)])
    assert sorted(await graph.known_names(namespace)) == [
        ("Auth Service", "authservice"),
        ("Bob", "bob"),
    ]


async def test_invalid_inputs_say_what_to_fix(graph: EntityGraph, namespace: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        await graph.add(namespace, "   ")
    with pytest.raises(InvalidInput, match="limit is 256"):
        await graph.add(namespace, "x" * 300)
    with pytest.raises(InvalidInput, match="at most 64"):
        await graph.add(namespace, "many", properties={str(i): i for i in range(65)})
    with pytest.raises(InvalidInput, match="mode"):
        await graph.add(namespace, "m", mode="upsert")  # type: ignore[arg-type]


@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != ""))
def test_every_non_blank_name_has_a_key(name: str) -> None:
    assert name_key(name)
    assert name_key(name) == name_key(name.upper()) or not name.isascii()


async def test_link_many_creates_relations_in_one_batch(graph: EntityGraph, namespace: str) -> None:
    made = await graph.add_many(namespace, [(n, "svc", None) for n in ("a", "b", "c")])
    a, b, c = (e.uuid for e, _ in made)
    items = [(a, b, "calls", None), (b, c, "calls", {"w": 1}), (a, "missing", "calls", None)]
    assert await graph.link_many(namespace, items) == 2
    assert await graph.link_many(namespace, items) == 0
    assert [r.target for r in await graph.relationships(namespace, a, "out")] == [b]
    with pytest.raises(InvalidInput, match="itself"):
        await graph.link_many(namespace, [(a, a, "calls", None)])


async def test_get_with_a_type_never_returns_another_type(
    graph: EntityGraph, namespace: str
) -> None:
    await graph.add(namespace, "billing service", "service")
    with pytest.raises(NodeNotFound, match="No team entity named 'billing services'"):
        await graph.get(namespace, "billing services", "team")
    assert (await graph.get(namespace, "billing services", "service")).name == "billing service"


async def test_the_exact_spelling_wins_over_other_names_with_the_same_key(
    graph: EntityGraph, store: FalkorStore, namespace: str
) -> None:

    with anyio.fail_after(30):
        service, _ = await graph.add(namespace, "AuthService", "service")
        team, _ = await graph.add(namespace, "Auth-Service", "team")
        assert name_key("AuthService") == name_key("Auth-Service")
        exact = await graph.resolver.resolve(namespace, ENTITY_NAMES, "Auth-Service")
        other = await graph.resolver.resolve(namespace, ENTITY_NAMES, "AuthService")
        with pytest.raises(AmbiguousName):
            await graph.get(namespace, "authservice")  # same key, neither spelling
    assert (exact.uuid, exact.how) == (team.uuid, "exact")
    assert (other.uuid, other.how) == (service.uuid, "exact")


async def test_get_with_relationships_reads_the_entity_and_its_relations_in_one_query(
    graph: EntityGraph, store: FalkorStore, namespace: str
) -> None:

    alice, _ = await graph.add(namespace, "alice", "person")
    await graph.add(namespace, "auth service", "service")
    await graph.add(namespace, "platform team", "team")
    await graph.add(namespace, "bob", "person")
    await graph.link(namespace, "alice", "auth service", "owns", {"since": 2021})
    await graph.link(namespace, "platform team", "alice", "includes")
    await graph.link(namespace, "alice", "bob", "mentors")
    queries: list[str] = []
    query = store.query

    async def counted(*args: object, **kwargs: object) -> QueryResult:
        queries.append(str(args[1]))
        return await query(*args, **kwargs)  # type: ignore[arg-type]

    store.query = counted  # type: ignore[method-assign]
    try:
        for name in ("alice", "Alice", alice.uuid):
            queries.clear()
            entity, rels = await graph.get_with_relationships(namespace, name)
            assert len(queries) == 1
            assert entity.uuid == alice.uuid
            assert rels == await graph.relationships(namespace, "alice")
            for direction in ("out", "in"):
                _, some = await graph.get_with_relationships(namespace, name, direction)
                assert some == await graph.relationships(namespace, "alice", direction)
    finally:
        del store.query
    assert [r.relationship_type for r in rels] == ["owns", "includes", "mentors"]
    _, first = await graph.get_with_relationships(namespace, "alice", limit=1)
    assert [r.relationship_type for r in first] == ["owns"]


async def test_get_with_relationships_keeps_the_name_rules_of_get(
    graph: EntityGraph, namespace: str
) -> None:
    service, _ = await graph.add(namespace, "Atlas", "service")
    await graph.add(namespace, "Atlas", "team")
    await graph.add(namespace, "payment gateway", "service")
    await graph.link(namespace, "payment gateway", service.uuid, "calls")
    with pytest.raises(AmbiguousName):
        await graph.get_with_relationships(namespace, "Atlas")
    with pytest.raises(NodeNotFound) as info:
        await graph.get_with_relationships(namespace, "kubernetes cluster")
    assert [c.name for c in info.value.candidates][:1] == ["payment gateway"]
    # Matched by meaning: the relations come from their own read.
    found, rels = await graph.get_with_relationships(namespace, "the payment gateway service")
    assert found.name == "payment gateway"
    assert [(r.relationship_type, r.target) for r in rels] == [("calls", service.uuid)]
    with pytest.raises(InvalidInput, match="direction"):
        await graph.get_with_relationships(namespace, "payment gateway", "sideways")  # type: ignore[arg-type]


async def test_near_duplicates_of_a_written_entity_come_from_its_stored_vector(
    graph: EntityGraph, namespace: str
) -> None:

    await graph.add(namespace, "auth service", "service")
    await graph.add(namespace, "kubernetes cluster", "platform")
    new, created = await graph.add(namespace, "auth servce", "component")
    assert created
    calls = 0
    embed = graph.resolver.embedder.embed  # type: ignore[union-attr]

    async def counted(texts: list[str]) -> object:
        nonlocal calls
        calls += 1
        return await embed(texts)

    graph.resolver.embedder.embed = counted  # type: ignore[union-attr, method-assign, assignment]
    try:
        near = await graph.resolver.similar_to_written(namespace, ENTITY_NAMES, new.uuid, new.name)
    finally:
        del graph.resolver.embedder.embed  # type: ignore[union-attr]
    assert calls == 0
    assert near == await graph.resolver.similar_existing(
        namespace, ENTITY_NAMES, new.name, exclude=new.uuid
    )
    assert [c.name for c in near] == ["auth service"]


async def test_adding_an_entity_to_a_used_namespace_takes_two_queries(
    falkordb_settings: StorageSettings, embedder: Embedder, namespace: str
) -> None:
    """What exists, read together with the namespace's metadata check, then the write; a
    namespace deleted behind the store's back is set up again."""
    store = CountingStore(falkordb_settings)
    await store.connect()
    graph = EntityGraph(store, embedder, NameResolver(store, embedder))
    try:
        with anyio.fail_after(60):
            await graph.add(namespace, "auth service", "service")
            store.queries.clear()
            new, created = await graph.add(namespace, "billing", "service", {"owner": "a"})
            sent_new = len(store.queries)
            store.queries.clear()
            same, again = await graph.add(namespace, "Billing", "service", {"port": 1})
            sent_existing = len(store.queries)
            await store.query(namespace, "MATCH (n) DETACH DELETE n")
            store.queries.clear()
            fresh, fresh_created = await graph.add(namespace, "billing", "service")
            sent_after_delete = len(store.queries)
            meta = await store.metadata(namespace)
    finally:
        await store.close()
    assert (sent_new, sent_existing) == (2, 2), store.queries
    assert created and not again and same.uuid == new.uuid
    assert same.properties == {"owner": "a", "port": 1}
    assert fresh_created and fresh.uuid != new.uuid
    assert sent_after_delete > 2  # the metadata node and indexes were written again
    assert meta.get("embedding_model") == embedder.model_name


async def test_a_relation_carries_when_it_held(graph: EntityGraph, namespace: str) -> None:
    for name, etype in (("Nadia Quell", "person"), ("Atlas team", "team"), ("Beacon team", "team")):
        await graph.add(namespace, name, etype)
    await graph.link(
        namespace, "Nadia Quell", "Atlas team", "member_of", valid_from="2024-01-01",
        valid_to="2025-05-31",
    )  # fmt: skip
    await graph.link(namespace, "Nadia Quell", "Beacon team", "member_of", valid_from="2025-06-01")
    rels = {r.target_name: r for r in await graph.relationships(namespace, "Nadia Quell")}
    assert rels["Atlas team"].valid_from is not None
    assert rels["Atlas team"].valid_from.isoformat().startswith("2024-01-01")
    assert rels["Atlas team"].valid_to is not None
    assert rels["Atlas team"].valid_to.isoformat().startswith("2025-06-01")
    assert rels["Beacon team"].valid_to is None
    # A later link that only ends the relation keeps the date it began.
    await graph.link(namespace, "Nadia Quell", "Beacon team", "member_of", valid_to="2025-12-31")
    beacon = {r.target_name: r for r in await graph.relationships(namespace, "Nadia Quell")}
    assert beacon["Beacon team"].valid_from == rels["Beacon team"].valid_from
    assert beacon["Beacon team"].valid_to is not None
    with pytest.raises(InvalidInput, match="must be after valid_from"):
        await graph.link(
            namespace, "Nadia Quell", "Atlas team", "member_of", valid_from="2025-01-01",
            valid_to="2024-01-01",
        )  # fmt: skip
