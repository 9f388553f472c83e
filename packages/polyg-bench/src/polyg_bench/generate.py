"""A seeded generator of benchmark namespaces, written straight to FalkorDB in UNWIND batches.

Per entity the namespace gets, on average: 2 relations (`E_RELATES`), 3 events
(`T_Event`, each involving 1-2 entities, `T_BEFORE` chains per entity, spread over
one year), 1 fact (`T_Fact`), 0.5 causal nodes (`C_Node`, 2 `C_CAUSES` links per
node, mostly forward with 2% back-links so cycles exist, each affecting one entity),
0.1 concepts (`S_Concept`, each representing 3 entities) and 0.5 memories
(`S_Memory`, each about one concept). The layout is the one the graph classes
write (keys, epoch-ms times, cross-links), so the public read API works on it.

Entities, causal nodes, concepts and memories carry an embedding; events and facts do
not (they are found through their memory, their entities and full-text search, as the
write path stores them). Embeddings are random unit vectors (`dimension`, default
384), not model output:
k-NN timings through the HNSW index are real, similarities are meaningless. Going
through the per-record write path would measure the embedding model instead.
"""

from __future__ import annotations

import logging
import random
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_description, normalize_name

logger = logging.getLogger(__name__)

START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
YEAR_MS = 365 * 24 * 3600 * 1000
DAY_MS = 24 * 3600 * 1000
BATCH = 1000
WORDS = [
    "auth",
    "billing",
    "cache",
    "search",
    "gateway",
    "ledger",
    "queue",
    "index",
    "payment",
    "report",
    "user",
    "session",
    "token",
    "audit",
    "deploy",
    "metrics",
    "alert",
    "backup",
    "storage",
    "router",
    "config",
    "profile",
    "invoice",
    "catalog",
    "order",
    "stock",
    "shipping",
    "email",
    "notify",
    "scheduler",
    "worker",
    "crawler",
]
TYPES = ("service", "team", "person", "database", "project")
RELATIONS = ("calls", "owns", "depends on", "uses")
EMBED_MODEL = "local/minilm"


@dataclass
class Generated:
    """What a generated namespace holds, for the runners to pick query targets from."""

    namespace: str
    seed: int
    entity_names: list[str] = field(default_factory=lambda: [])
    entity_uuids: list[str] = field(default_factory=lambda: [])
    causal_uuids: list[str] = field(default_factory=lambda: [])
    counts: dict[str, int] = field(default_factory=lambda: {})
    seconds: float = 0.0

    @property
    def nodes(self) -> int:
        keys = ("entities", "events", "facts", "causal_nodes", "concepts", "memories")
        return sum(self.counts.get(k, 0) for k in keys)

    @property
    def edges(self) -> int:
        keys = ("e_relates", "x_involves", "t_before", "c_causes", "x_affects")
        return sum(self.counts.get(k, 0) for k in (*keys, "x_represents", "s_about"))


def entity_name(rng: random.Random, i: int) -> str:
    """The i-th generated entity name, e.g. `billing queue 42`."""
    return f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}"


class _Writer:
    def __init__(self, store: FalkorStore, namespace: str, seed: int, dimension: int) -> None:
        self.store = store
        self.ns = namespace
        self.np_rng = np.random.default_rng(seed)
        self.rng = random.Random(seed)
        self.dim = dimension

    def uid(self) -> str:
        return uuidlib.UUID(int=self.rng.getrandbits(128), version=4).hex

    def vectors(self, n: int) -> list[list[float]]:
        v = self.np_rng.standard_normal((n, self.dim)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v.tolist()

    async def write(self, cypher: str, rows: list[dict[str, Any]]) -> None:
        for i in range(0, len(rows), BATCH):
            await self.store.query(self.ns, cypher, {"rows": rows[i : i + BATCH]})

    async def write_vectors(self, cypher: str, rows: list[dict[str, Any]]) -> None:
        """Like write, but draws each batch's vectors only when it is sent (bounded memory)."""
        for i in range(0, len(rows), BATCH):
            chunk = rows[i : i + BATCH]
            for row, vec in zip(chunk, self.vectors(len(chunk)), strict=True):
                row["vec"] = vec
            await self.store.query(self.ns, cypher, {"rows": chunk})
            for row in chunk:
                del row["vec"]


async def generate(
    store: FalkorStore,
    namespace: str,
    entities: int,
    *,
    seed: int = 7,
    dimension: int = 384,
) -> Generated:
    """Replace `namespace` with a generated one of `entities` entities (see module doc).

    Args:
        store: a connected store.
        namespace: the graph to (re)create; an existing graph of that name is deleted.
        entities: how many entities; every other count is proportional.
        seed: the same seed gives the same names, uuids, times, links and vectors.
        dimension: the vector dimension (384 = local MiniLM).

    Raises:
        InvalidInput: entities < 2 (nothing to link).
    """
    from polyg_core.errors import InvalidInput

    if entities < 2:
        raise InvalidInput(f"entities must be at least 2 to generate links, got {entities}")
    t0 = time.perf_counter()
    await store.delete_graph(namespace)
    await store.ensure_schema(namespace)
    await store.ensure_vectors(namespace, EMBED_MODEL, dimension)
    w = _Writer(store, namespace, seed, dimension)
    rng = w.rng
    now = START_MS + YEAR_MS
    out = Generated(namespace=namespace, seed=seed)
    names = [entity_name(rng, i) for i in range(entities)]
    ents = [
        {"uuid": w.uid(), "name": n, "key": normalize_name(n), "type": rng.choice(TYPES)}
        for n in names
    ]
    await w.write_vectors(
        "UNWIND $rows AS r CREATE (:E_Entity {uuid: r.uuid, name: r.name, name_key: r.key, "
        f"entity_type: r.type, properties: '{{}}', created_at: {now}, updated_at: {now}, "
        "embedding: vecf32(r.vec)})",
        ents,
    )
    out.entity_names = names
    out.entity_uuids = [e["uuid"] for e in ents]
    out.counts["entities"] = entities

    pairs: set[tuple[int, int, str]] = set()
    while len(pairs) < 2 * entities:
        a, b = rng.randrange(entities), rng.randrange(entities)
        if a != b:
            pairs.add((a, b, rng.choice(RELATIONS)))
    await w.write(
        "UNWIND $rows AS r MATCH (a:E_Entity {uuid: r.a}), (b:E_Entity {uuid: r.b}) "
        "CREATE (a)-[:E_RELATES {relationship_type: r.rt, rel_key: r.rk, properties: '{}', "
        f"created_at: {now}}}]->(b)",
        [
            {"a": ents[a]["uuid"], "b": ents[b]["uuid"], "rt": rt, "rk": normalize_name(rt)}
            for a, b, rt in sorted(pairs)
        ],
    )
    out.counts["e_relates"] = len(pairs)

    events: list[dict[str, Any]] = []
    involves: list[dict[str, str]] = []
    timeline: dict[str, list[tuple[int, str]]] = {}
    for i in range(3 * entities):
        t = START_MS + rng.randrange(YEAR_MS)
        eid = w.uid()
        who = {rng.randrange(entities) for _ in range(rng.choice((1, 2)))}
        desc = f"{names[min(who)]} {rng.choice(('deployed', 'failed', 'scaled', 'paged'))} {i}"
        events.append({"uuid": eid, "desc": desc, "t": t})
        for x in who:
            involves.append({"e": eid, "x": ents[x]["uuid"]})
            timeline.setdefault(ents[x]["uuid"], []).append((t, eid))
    await w.write(
        "UNWIND $rows AS r CREATE (:T_Event {uuid: r.uuid, description: r.desc, "
        "occurred_at: r.t, recorded_at: r.t})",
        events,
    )
    await w.write(
        "UNWIND $rows AS r MATCH (e:T_Event {uuid: r.e}), (x:E_Entity {uuid: r.x}) "
        "CREATE (e)-[:X_INVOLVES]->(x)",
        involves,
    )
    before: list[dict[str, str]] = []
    for x, items in timeline.items():
        items.sort()
        before += [{"a": a, "b": b, "x": x} for (_, a), (_, b) in pairwise(items)]
    await w.write(
        "UNWIND $rows AS r MATCH (a:T_Event {uuid: r.a}), (b:T_Event {uuid: r.b}) "
        "CREATE (a)-[:T_BEFORE {entity: r.x}]->(b)",
        before,
    )
    out.counts |= {"events": len(events), "t_before": len(before)}
    del events, timeline, before

    facts = [
        {
            "uuid": w.uid(),
            "x": e["uuid"],
            "s": e["name"],
            "sk": e["key"],
            "o": f"team-{i % 50}",
            "vf": START_MS + rng.randrange(YEAR_MS),
        }
        for i, e in enumerate(ents)
    ]
    await w.write(
        "UNWIND $rows AS r MATCH (x:E_Entity {uuid: r.x}) "
        "CREATE (f:T_Fact {uuid: r.uuid, subject: r.s, subject_key: r.sk, predicate: 'owned_by', "
        "predicate_key: 'ownedby', object: r.o, object_key: r.o, valid_from: r.vf, "
        "recorded_at: r.vf})-[:X_INVOLVES]->(x)",
        facts,
    )
    out.counts |= {"facts": len(facts), "x_involves": len(involves) + len(facts)}
    del facts, involves

    n_causal = max(2, entities // 2)
    causal: list[dict[str, Any]] = []
    for i in range(n_causal):
        desc = f"{rng.choice(WORDS)} {rng.choice(('outage', 'latency', 'error', 'leak'))} {i}"
        causal.append({"uuid": w.uid(), "desc": desc, "key": normalize_description(desc)})
    await w.write_vectors(
        "UNWIND $rows AS r CREATE (:C_Node {uuid: r.uuid, description: r.desc, key: r.key, "
        f"node_type: 'event', created_at: {now}, embedding: vecf32(r.vec)}})",
        causal,
    )
    links: set[tuple[int, int]] = set()
    while len(links) < 2 * n_causal:
        a = rng.randrange(n_causal)
        b = (
            rng.randrange(n_causal)
            if rng.random() < 0.02
            else min(n_causal - 1, a + 1 + int(rng.expovariate(1 / 20)))
        )
        if a != b:
            links.add((a, b))
    await w.write(
        "UNWIND $rows AS r MATCH (a:C_Node {uuid: r.a}), (b:C_Node {uuid: r.b}) "
        f"CREATE (a)-[:C_CAUSES {{confidence: r.c, created_at: {now}}}]->(b)",
        [
            {"a": causal[a]["uuid"], "b": causal[b]["uuid"], "c": round(rng.uniform(0.3, 1), 2)}
            for a, b in sorted(links)
        ],
    )
    await w.write(
        "UNWIND $rows AS r MATCH (c:C_Node {uuid: r.c}), (x:E_Entity {uuid: r.x}) "
        "CREATE (c)-[:X_AFFECTS]->(x)",
        [{"c": c["uuid"], "x": ents[rng.randrange(entities)]["uuid"]} for c in causal],
    )
    out.causal_uuids = [c["uuid"] for c in causal]
    out.counts |= {"causal_nodes": n_causal, "c_causes": len(links), "x_affects": n_causal}
    del causal

    n_concepts = max(1, entities // 10)
    concepts: list[dict[str, Any]] = []
    for i in range(n_concepts):
        cname = f"{rng.choice(WORDS)} concept {i}"
        concepts.append(
            {
                "uuid": w.uid(),
                "name": cname,
                "key": normalize_name(cname),
                "desc": f"how {rng.choice(WORDS)} works",
            }
        )
    await w.write_vectors(
        "UNWIND $rows AS r CREATE (:S_Concept {uuid: r.uuid, name: r.name, name_key: r.key, "
        f"description: r.desc, created_at: {now}, updated_at: {now}, embedding: vecf32(r.vec)}})",
        concepts,
    )
    reps = [
        {"c": c["uuid"], "x": ents[rng.randrange(entities)]["uuid"]}
        for c in concepts
        for _ in range(3)
    ]
    await w.write(
        "UNWIND $rows AS r MATCH (c:S_Concept {uuid: r.c}), (x:E_Entity {uuid: r.x}) "
        "MERGE (c)-[:X_REPRESENTS]->(x)",
        reps,
    )
    n_memories = max(1, entities // 2)
    memories: list[dict[str, Any]] = []
    for i in range(n_memories):
        t = START_MS + rng.randrange(YEAR_MS)
        text = f"note {i}: {names[rng.randrange(entities)]} {rng.choice(WORDS)} review"
        memories.append(
            {
                "uuid": w.uid(),
                "content": text,
                "h": uuidlib.UUID(int=rng.getrandbits(128)).hex,
                "t": t,
                "c": concepts[rng.randrange(n_concepts)]["uuid"],
            }
        )
    await w.write_vectors(
        "UNWIND $rows AS r MATCH (c:S_Concept {uuid: r.c}) "
        "CREATE (m:S_Memory {uuid: r.uuid, content: r.content, content_hash: r.h, "
        "category: 'episodic', tags: [], created_at: r.t, last_accessed: r.t, recorded_at: r.t, "
        "embedding: vecf32(r.vec)})-[:S_ABOUT]->(c)",
        memories,
    )
    out.counts |= {
        "concepts": n_concepts,
        "x_represents": len(reps),
        "memories": n_memories,
        "s_about": n_memories,
    }
    out.seconds = time.perf_counter() - t0
    logger.info("generated %s in %.1f s: %s", namespace, out.seconds, out.counts)
    return out
