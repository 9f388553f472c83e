"""A seeded generator of benchmark namespaces, written through the graphs' batch writers.

Per entity the namespace gets, on average: 2 relations (`E_RELATES`), 3 events
(`T_Event`, each involving 1-2 entities, `T_BEFORE` chains per entity, spread over
one year), 1 fact (`T_Fact`), 0.5 causal nodes (`C_Node`, 2 `C_CAUSES` links per
node, mostly forward with 2% back-links so cycles exist, each affecting one entity),
0.1 concepts (`S_Concept`, each representing up to 3 entities) and 0.5 memories
(`S_Memory`, each about one concept). Every record goes through the query the graph
classes write it with (`graphs/entity.py` `MERGE_ENTITIES` and `WRITE_RELATIONS`,
`graphs/bulk.py` `write_event_rows`, `graphs/temporal.py` `write_fact`,
`graphs/causal.py` `WRITE_NODES` and `LinkBatch`, `graphs/semantic.py`
`WRITE_CONCEPTS` and `WRITE_MEMORIES`), so the scale benchmarks measure the graph
shape the graphs write.

Entities, causal nodes, concepts and memories carry an embedding; events and facts do
not (as the write path stores them). Embeddings are random unit vectors (`dimension`,
default 384), given to the writers in the rows instead of model output: k-NN timings
through the HNSW index are real, similarities are meaningless. Embedding with the
model would measure the model instead.
"""

from __future__ import annotations

import logging
import random
import time
import uuid as uuidlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import numpy as np
from polyg_core.errors import InvalidInput
from polyg_core.graphs.base import now_ms
from polyg_core.graphs.bulk import event_row, write_event_rows
from polyg_core.graphs.causal import LinkBatch, Match, node_row, write_node_rows
from polyg_core.graphs.entity import entity_row, merge_entity_rows, relation_row, write_relations
from polyg_core.graphs.entity_refs import from_ms
from polyg_core.graphs.semantic import concept_row, memory_row, write_concepts, write_memories
from polyg_core.graphs.temporal import fact_params, write_fact
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_description
from polyg_shared import MemoryCategory
from polyg_shared.nodes import CausalNodeType
from polyg_shared.timeutil import iso

logger = logging.getLogger(__name__)

START_MS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
YEAR_MS = 365 * 24 * 3600 * 1000
DAY_MS = 24 * 3600 * 1000
BATCH = 1000
FACTS_IN_FLIGHT = 8
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
EVENT_NODE = CausalNodeType.EVENT


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


Rows = list[dict[str, Any]]


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

    async def write(
        self, writer: Callable[[FalkorStore, str, Rows], Awaitable[object]], rows: Rows
    ) -> None:
        """Write `rows` in batches of `BATCH` through a graph batch writer."""
        for i in range(0, len(rows), BATCH):
            await writer(self.store, self.ns, rows[i : i + BATCH])

    async def write_vectors(
        self, writer: Callable[[FalkorStore, str, Rows], Awaitable[object]], rows: Rows
    ) -> None:
        """Like write, with each row's `vec` drawn only when its batch is sent (bounded
        memory)."""
        for i in range(0, len(rows), BATCH):
            chunk = rows[i : i + BATCH]
            for row, vec in zip(chunk, self.vectors(len(chunk)), strict=True):
                row["vec"] = vec
            await writer(self.store, self.ns, chunk)
            for row in chunk:
                row["vec"] = None


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
    if entities < 2:
        raise InvalidInput(f"entities must be at least 2 to generate links, got {entities}")
    t0 = time.perf_counter()
    await store.delete_graph(namespace)
    await store.ensure_schema(namespace)
    await store.ensure_vectors(namespace, EMBED_MODEL, dimension)
    w = _Writer(store, namespace, seed, dimension)
    out = Generated(namespace=namespace, seed=seed)
    await _entities(w, entities, out)
    await _relations(w, out)
    await _events(w, out)
    await _facts(w, out)
    await _causal(w, out)
    await _semantic(w, out)
    out.seconds = time.perf_counter() - t0
    logger.info("generated %s in %.1f s: %s", namespace, out.seconds, out.counts)
    return out


async def _entities(w: _Writer, n: int, out: Generated) -> None:
    names = [entity_name(w.rng, i) for i in range(n)]
    rows = [
        entity_row(i, name, w.rng.choice(TYPES), None, exists=False) | {"uuid": w.uid()}
        for i, name in enumerate(names)
    ]
    await w.write_vectors(merge_entity_rows, rows)
    out.entity_names = names
    out.entity_uuids = [r["uuid"] for r in rows]
    out.counts["entities"] = n


async def _relations(w: _Writer, out: Generated) -> None:
    n, uuids = len(out.entity_uuids), out.entity_uuids
    pairs: set[tuple[int, int, str]] = set()
    while len(pairs) < 2 * n:
        a, b = w.rng.randrange(n), w.rng.randrange(n)
        if a != b:
            pairs.add((a, b, w.rng.choice(RELATIONS)))
    rows = [relation_row(uuids[a], uuids[b], rt, None) for a, b, rt in sorted(pairs)]
    await w.write(write_relations, rows)
    out.counts["e_relates"] = len(pairs)


async def _events(w: _Writer, out: Generated) -> None:
    n, names, uuids = len(out.entity_uuids), out.entity_names, out.entity_uuids
    rows: Rows = []
    timeline: dict[str, int] = {}
    for i in range(3 * n):
        t = START_MS + w.rng.randrange(YEAR_MS)
        who = sorted({w.rng.randrange(n) for _ in range(w.rng.choice((1, 2)))})
        verb = w.rng.choice(("deployed", "failed", "scaled", "paged"))
        desc = f"{names[who[0]]} {verb} {i}"
        rows.append(event_row(desc, t, None, [uuids[x] for x in who]) | {"uuid": w.uid()})
        for x in who:
            timeline[uuids[x]] = timeline.get(uuids[x], 0) + 1
    await w.write(write_event_rows, rows)
    involves = sum(len(r["eids"]) for r in rows)
    chained = sum(k - 1 for k in timeline.values())
    out.counts |= {"events": len(rows), "t_before": chained, "x_involves": involves}


async def _facts(w: _Writer, out: Generated) -> None:
    """One fact per entity through `write_fact` (the supersession rule is one query per
    fact); the facts have distinct subjects, so several are in flight at once."""
    params: Rows = []
    for i, (name, uid) in enumerate(zip(out.entity_names, out.entity_uuids, strict=True)):
        vf = START_MS + w.rng.randrange(YEAR_MS)
        fact = fact_params(name, "owned_by", f"team-{i % 50}", valid_from=iso(from_ms(vf)))
        params.append(fact | {"eids": [uid], "uuid": w.uid()})

    async def write_every(start: int) -> None:
        for p in params[start::FACTS_IN_FLIGHT]:
            await write_fact(w.store, w.ns, p)

    async with anyio.create_task_group() as tg:
        for start in range(FACTS_IN_FLIGHT):
            tg.start_soon(write_every, start)
    n = len(out.entity_uuids)
    out.counts |= {"facts": n, "x_involves": out.counts.get("x_involves", 0) + n}


async def _causal(w: _Writer, out: Generated) -> None:
    n = max(2, len(out.entity_uuids) // 2)
    rows: Rows = []
    for i in range(n):
        kind = w.rng.choice(("outage", "latency", "error", "leak"))
        desc = f"{w.rng.choice(WORDS)} {kind} {i}"
        affected = out.entity_uuids[w.rng.randrange(len(out.entity_uuids))]
        row = node_row(i, normalize_description(desc), desc, EVENT_NODE, None, [affected], [])
        rows.append(row | {"uuid": w.uid()})
    await w.write_vectors(_write_nodes, rows)
    links = _causal_links(w.rng, n)
    nodes = [Match(r["desc"], r["key"], [], r["uuid"], "uuid") for r in rows]
    confidences = [round(w.rng.uniform(0.3, 1), 2) for _ in links]
    for at in range(0, len(links), BATCH):
        batch = LinkBatch()
        for i, (a, b) in enumerate(links[at : at + BATCH], start=at):
            batch.link(i, batch.node(nodes[a]), batch.node(nodes[b]), confidences[i], None, [], [])
        await batch.write(w.store, w.ns)
    out.causal_uuids = [r["uuid"] for r in rows]
    out.counts |= {"causal_nodes": n, "c_causes": len(links), "x_affects": n}


def _causal_links(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """2 links per node, mostly forward, 2% anywhere (so cycles exist)."""
    links: set[tuple[int, int]] = set()
    while len(links) < 2 * n:
        a = rng.randrange(n)
        b = (
            rng.randrange(n)
            if rng.random() < 0.02
            else min(n - 1, a + 1 + int(rng.expovariate(1 / 20)))
        )
        if a != b:
            links.add((a, b))
    return sorted(links)


async def _write_nodes(store: FalkorStore, namespace: str, rows: Rows) -> None:
    await write_node_rows(store, namespace, rows)


async def _semantic(w: _Writer, out: Generated) -> None:
    n_ent = len(out.entity_uuids)
    n_concepts = max(1, n_ent // 10)
    concepts: Rows = []
    for i in range(n_concepts):
        name = f"{w.rng.choice(WORDS)} concept {i}"
        desc = f"how {w.rng.choice(WORDS)} works"
        ents = [out.entity_uuids[w.rng.randrange(n_ent)] for _ in range(3)]
        concepts.append(concept_row(i, name, desc, None, None, None, [], ents) | {"uuid": w.uid()})
    await w.write_vectors(write_concepts, concepts)
    n_memories = max(1, n_ent // 2)
    now = now_ms()
    memories: Rows = []
    for i in range(n_memories):
        t = START_MS + w.rng.randrange(YEAR_MS)
        text = f"note {i}: {out.entity_names[w.rng.randrange(n_ent)]} {w.rng.choice(WORDS)} review"
        about = concepts[w.rng.randrange(n_concepts)]["uuid"]
        row = memory_row(i, text, MemoryCategory.EPISODIC, [], [], [about], t, None, None, now)
        memories.append(row | {"uuid": w.uid()})
    await w.write_vectors(write_memories, memories)
    out.counts |= {
        "concepts": n_concepts,
        "x_represents": sum(len(c["ents"]) for c in concepts),
        "memories": n_memories,
        "s_about": n_memories,
    }
