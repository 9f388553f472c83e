"""Generated memory graphs survive export and import: the database state is the same.

Hypothesis writes small memory graphs through the graphs' own methods (facts of the
same subject and predicate from the same instant, ended facts, deleted entities,
isolated nodes, names and texts in several scripts), exports each as JSONL and as a
Cypher dump, imports both into empty namespaces, and compares the database states
(counts per label and relationship type, every node's and edge's properties). The
file is then imported a second time into its copy: nothing is created and the state
is still the source's (an entity or concept only implied by a write stays implied).
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound
from polyg_core.memory import Memory
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.roundtrip import HashEmbedder, assert_same, read_state
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl
from polyg_core.transfer.cypher_dump import write_cypher

pytestmark = pytest.mark.anyio

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
REJECTED = (InvalidInput, NodeNotFound, AmbiguousName)
"""What a graph refuses to write (a self-relation, an end that does not exist): the
graph stays as it was, which is a state like any other."""

word = st.text(
    alphabet=st.characters(categories=("Lu", "Ll", "Lo", "Nd"), max_codepoint=0x9FFF),
    min_size=1,
    max_size=6,
)
text = st.lists(word, min_size=1, max_size=3).map(" ".join)
names = st.lists(text, min_size=2, max_size=4)
hours = st.sampled_from([0, 0, 5, 30])  # repeated instants: facts from the same start
ref = st.integers(min_value=0, max_value=9)  # an index into the names, taken modulo

entity_op = st.tuples(
    st.just("entity"),
    ref,
    st.sampled_from(["Person", "Place", "Ding"]),
    st.dictionaries(st.sampled_from(["k", "ключ", "clé"]), st.integers(-3, 3) | word, max_size=2),
)
fact_op = st.tuples(
    st.just("fact"), ref, st.sampled_from(["team", "город"]), word, hours, st.none() | hours
)
ops = st.lists(
    st.one_of(
        entity_op,
        fact_op,
        st.tuples(st.just("same_start"), ref, word, word, hours),
        st.tuples(st.just("ended_by_delete"), ref, word),
        st.tuples(st.just("end_fact"), ref, hours),
        st.tuples(st.just("event"), text, hours, st.lists(ref, max_size=2)),
        st.tuples(st.just("relation"), ref, ref, st.sampled_from(["knows", "nahe"])),
        st.tuples(st.just("causal_node"), text, st.lists(ref, max_size=1)),
        st.tuples(st.just("causal_link"), text, text, st.sampled_from([0.5, 0.9])),
        st.tuples(st.just("concept"), text, st.none() | text, st.lists(ref, max_size=1)),
        st.tuples(st.just("memory"), text, st.lists(text, max_size=1)),
        st.tuples(st.just("delete"), ref),
    ),
    min_size=1,
    max_size=10,
)


@dataclass
class Builder:
    """Runs generated operations through the graphs of one namespace."""

    mem: Memory
    ns: str
    names: list[str]
    facts: list[str]

    def name(self, i: int) -> str:
        return self.names[i % len(self.names)]

    async def run(self, op: tuple[Any, ...]) -> None:
        kind, *args = op
        with contextlib.suppress(*REJECTED):
            await getattr(self, f"_{kind}")(*args)

    async def _entity(self, i: int, etype: str, props: dict[str, Any]) -> None:
        await self.mem.entities.add(self.ns, self.name(i), etype, props or None)

    async def _fact(self, i: int, pred: str, obj: str, start: int, length: int | None) -> None:
        begin = T0 + timedelta(hours=start)
        end = begin + timedelta(hours=length + 1) if length is not None else None
        written = await self.mem.temporal.add_fact(self.ns, self.name(i), pred, obj, begin, end)
        self.facts.append(written.fact.uuid)

    async def _same_start(self, i: int, first: str, second: str, start: int) -> None:
        """Two objects of one subject and predicate from the same instant."""
        await self._fact(i, "desk", first, start, None)
        await self._fact(i, "desk", f"{second} 2", start, None)

    async def _ended_by_delete(self, i: int, obj: str) -> None:
        """A fact whose subject entity is deleted (the fact ends, the entity goes)."""
        await self._fact(i, "mood", obj, 0, None)
        await self._delete(i)

    async def _end_fact(self, i: int, after: int) -> None:
        if self.facts:
            fact = self.facts[i % len(self.facts)]
            found = await self.mem.temporal.facts(self.ns, history=True, limit=1000)
            start = next(f.valid_from for f in found if f.uuid == fact)
            await self.mem.temporal.invalidate_fact(self.ns, fact, start + timedelta(hours=after))

    async def _event(self, desc: str, at: int, refs: list[int]) -> None:
        await self.mem.temporal.add_event(
            self.ns, desc, T0 + timedelta(hours=at), entities=[self.name(i) for i in refs]
        )

    async def _relation(self, a: int, b: int, rel: str) -> None:
        await self.mem.entities.link(self.ns, self.name(a), self.name(b), rel)

    async def _causal_node(self, desc: str, refs: list[int]) -> None:
        await self.mem.causal.add_node(self.ns, desc, entities=[self.name(i) for i in refs])

    async def _causal_link(self, cause: str, effect: str, confidence: float) -> None:
        await self.mem.causal.add_link(self.ns, cause, effect, confidence)

    async def _concept(self, name: str, desc: str | None, refs: list[int]) -> None:
        await self.mem.semantic.add_concept(self.ns, name, desc, [self.name(i) for i in refs])

    async def _memory(self, content: str, concepts: list[str]) -> None:
        await self.mem.semantic.add_memory(self.ns, content, concepts=concepts)

    async def _delete(self, i: int) -> None:
        await self.mem.entities.delete(self.ns, self.name(i))


async def transfer(store: FalkorStore, source: str, tmp: Path) -> None:
    """Export `source` both ways, import each into an empty namespace, compare."""
    embedder = HashEmbedder()
    jsonl, cypher = tmp / f"{source}.jsonl", tmp / f"{source}.cypher"
    with jsonl.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, source, page=7), out)
    with cypher.open("w", encoding="utf-8") as out:
        await write_cypher(store, source, out, page=7)
    state = await read_state(store, source)
    for path, fmt in ((jsonl, "jsonl"), (cypher, "cypher")):
        copy = f"{source}_{fmt}"
        try:
            writer = RecordWriter.build(store, embedder)
            report = await writer.run(copy, lambda p=path, f=fmt: iter_records(p, f))
            assert report.failed == 0, report.errors[:3]
            assert_same(state, await read_state(store, copy), fmt)
            again = await writer.run(copy, lambda p=path, f=fmt: iter_records(p, f))
            assert again.failed == 0, again.errors[:3]
            assert again.created == 0, again.to_dict()["kinds"]
            # A second import changes nothing: the database state is still the source's.
            assert_same(state, await read_state(store, copy), f"{fmt}, imported twice")
        finally:
            await store.delete_graph(copy)


@settings(
    max_examples=10,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pool=names, plan=ops)
async def test_generated_memory_graphs_round_trip_through_jsonl_and_cypher(
    store: FalkorStore, tmp_path: Path, pool: list[str], plan: list[tuple[Any, ...]]
) -> None:
    ns = f"t_prop_{uuid.uuid4().hex[:10]}"
    mem = Memory(store, HashEmbedder(), namespace=ns)
    builder = Builder(mem, ns, pool, [])
    try:
        with anyio.fail_after(120):
            for op in plan:
                await builder.run(op)
            await transfer(store, ns, tmp_path)
    finally:
        await store.delete_graph(ns)
