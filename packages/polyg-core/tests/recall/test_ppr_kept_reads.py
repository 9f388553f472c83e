"""Personalized PageRank's reads kept between recalls under the namespace's write stamp
answer as FalkorDB does (the same rows in the same order), and a recall that uses them
answers as one on a fresh connection; after a write from another process, as well."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from polyg_core.config import Settings, StorageSettings
from polyg_core.graphs.walks import GraphWalks
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall.answer.words import terms
from polyg_core.recall.hybrid_scores import fetch_embeddings
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.write_stamp import StampedReads
from polyg_shared.retrieval import ContextNode

pytestmark = pytest.mark.anyio

REF = "2026-05-20T18:00:00Z"
NOTES = [
    ("Wren Adair: I took my nephews kayaking on Lake Orla last weekend.", "2026-05-02T10:00:00Z"),
    ("Bo Strand: Wren, I started a pottery class at the river studio.", "2026-05-03T10:00:00Z"),
    ("Wren Adair: My sister and I hiked the cedar trail with the dogs.", "2026-05-06T10:00:00Z"),
    ("Bo Strand: I glazed two blue bowls for my mother.", "2026-05-08T10:00:00Z"),
    ("Wren Adair: We camped by Lake Orla and watched the meteor shower.", "2026-05-10T10:00:00Z"),
    ("Bo Strand: The river studio is showing my bowls in June.", "2026-05-12T10:00:00Z"),
    ("Wren Adair: I painted the cedar trail at dawn for my sister.", "2026-05-14T10:00:00Z"),
]
QUESTIONS = [
    "What activities has Wren done with her family?",
    "What have Wren and Bo both made?",
    "Where has Wren camped?",
]


async def _fresh_store(settings: StorageSettings) -> FalkorStore:
    return await FalkorStore(settings).connect()


def _memory(store: FalkorStore, embedder: Embedder, ns: str) -> Memory:
    return Memory(store=store, embedder=embedder, settings=Settings(), namespace=ns)


async def _answers(memory: Memory) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question in QUESTIONS:
        r = await memory.recall(question, reference_time=REF, ppr=True, memory_limit=50)
        assert any(v.view == "ppr" for v in r.views)
        out.append(
            {
                "memories": [(m.uuid, round(m.score, 9)) for m in r.memories],
                "nodes": [n.uuid for n in r.nodes],
                "ppr": [(v.status, v.nodes, v.error) for v in r.views if v.view == "ppr"],
                "answer": r.answer,
                "confidence": round(r.confidence, 9),
            }
        )
    return out


async def _uncached(settings: StorageSettings, embedder: Embedder, ns: str) -> list[dict[str, Any]]:
    store = await _fresh_store(settings)
    try:
        return await _answers(_memory(store, embedder, ns))
    finally:
        await store.close()


async def test_recalls_on_kept_reads_answer_as_fresh_ones_also_after_another_process_writes(
    store: FalkorStore,
    other_store: FalkorStore,
    falkordb_settings: StorageSettings,
    namespace: str,
    embedder: Embedder,
) -> None:
    memory = _memory(store, embedder, namespace)
    for text, when in NOTES:
        await memory.remember(text, reference_time=when)

    first = await _answers(memory)
    _record, stamp = await store.embedding_record_and_stamp(namespace)
    kept = store.stamped_reads(namespace, stamp)
    assert kept is not None and len(kept) > 0
    # Asked again, the PPR view reads what the first round kept: the same answers, and
    # the same as a process that kept nothing.
    assert await _answers(memory) == first
    assert store.stamped_reads(namespace, stamp) is kept
    assert await _uncached(falkordb_settings, embedder, namespace) == first

    # Another process writes a note that joins the two people; this one's kept reads
    # are not used for the new data.
    writer = _memory(other_store, embedder, namespace)
    await writer.remember(
        "Bo Strand: Wren and I went kayaking on Lake Orla with my mother.",
        reference_time="2026-05-16T10:00:00Z",
    )
    after = await _answers(memory)
    assert after == await _uncached(falkordb_settings, embedder, namespace)
    assert after != first


async def _all_ids(store: FalkorStore, ns: str) -> list[int]:
    res = await store.query(ns, "MATCH (n) WHERE NOT n:P_Meta RETURN id(n)", read_only=True)
    return [int(r[0]) for r in res.rows]


async def test_kept_reads_by_id_are_the_rows_falkordb_answers_in_its_order(
    store: FalkorStore, namespace: str, embedder: Embedder
) -> None:
    memory = _memory(store, embedder, namespace)
    for text, when in NOTES:
        await memory.remember(text, reference_time=when)
    ids = await _all_ids(store, namespace)
    uuids = await store.query(namespace, "MATCH (n:E_Entity) RETURN n.uuid", read_only=True)
    entity_uuids = [str(r[0]) for r in uuids.rows]
    plain = GraphWalks(store)
    kept = GraphWalks(store, StampedReads("test"))
    rng = random.Random(7)
    for _ in range(25):
        # Unique ids in any order, with ids of no node among them; partly read before.
        chunk = [*rng.sample(ids, rng.randint(1, len(ids))), max(ids) + 1000]
        rng.shuffle(chunk)
        assert await kept.nodes_by_id(namespace, chunk) == await plain.nodes_by_id(namespace, chunk)
        assert await kept.links_by_id(namespace, chunk) == await plain.links_by_id(namespace, chunk)
        seeds = {"E_Entity": rng.sample(entity_uuids, rng.randint(1, len(entity_uuids)))}
        assert await kept.seed_fan_in(namespace, seeds) == await plain.seed_fan_in(namespace, seeds)
    # Repeated ids are answered each time; FalkorDB stops at the first id of no node.
    twice = [ids[0], ids[1], ids[0], max(ids) + 7, ids[2]]
    assert await kept.nodes_by_id(namespace, twice) == await plain.nodes_by_id(namespace, twice)


async def test_kept_vectors_are_the_vectors_read(
    store: FalkorStore, namespace: str, embedder: Embedder
) -> None:
    memory = _memory(store, embedder, namespace)
    for text, when in NOTES[:4]:
        await memory.remember(text, reference_time=when)
    res = await store.query(
        namespace,
        "MATCH (n) WHERE n:S_Memory OR n:S_Concept OR n:E_Entity RETURN n.uuid, labels(n)[0]",
        read_only=True,
    )
    nodes = [
        ContextNode(uuid=str(u), label=str(lb), graph="semantic", text="", score=0.5)
        for u, lb in res.rows
    ]
    nodes.append(
        ContextNode(uuid="no-such-node", label="S_Memory", graph="semantic", text="", score=0.5)
    )
    plain = await fetch_embeddings(store, namespace, nodes)
    reads = StampedReads("test")
    for part in (nodes[::2], nodes):  # a part read first, then all: some kept, some read
        kept = await fetch_embeddings(store, namespace, part, reads)
        assert kept.keys() == {n.uuid for n in part if n.uuid in plain}
        for uuid, vec in kept.items():
            assert np.array_equal(vec, plain[uuid])
    assert ("embedding", "no-such-node") in reads


def test_each_caller_gets_words_of_its_own() -> None:
    first = terms("Wren painted the cedar trails at dawn")
    assert first == {"wren", "paint", "cedar", "trail", "dawn"}
    first.discard("cedar")
    assert terms("Wren painted the cedar trails at dawn") == {
        "wren",
        "paint",
        "cedar",
        "trail",
        "dawn",
    }
