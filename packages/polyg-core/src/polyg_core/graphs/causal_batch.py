"""Causal nodes, links and solutions written in batches (import): the rules of
`CausalGraph.add_node` (uuid or normalised description, never meaning; the node's own
entities and events), `add_link` and `add_solution` (uuid, normalised description, a
lexically compatible paraphrase) in a few queries per batch instead of several per
record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

import numpy as np
from polyg_shared.causal import CausalMatch
from polyg_shared.nodes import CausalNode, CausalNodeType
from polyg_shared.timeutil import iso

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound
from polyg_core.graphs.base import check_text, embed_texts, new_uuid, prepare, rounds_by_key
from polyg_core.graphs.causal import (
    BATCH_NODES,
    UUID_PATTERN,
    CausalGraph,
    LinkBatch,
    Match,
    check_confidence,
    check_description,
    check_evidence,
    node_from_row,
    paraphrase_match,
)
from polyg_core.graphs.entity_refs import epoch_ms, lexically_compatible, resolve_entity_names
from polyg_core.storage.cypher import clean, each_linked, props
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT, R_SOLVED_BY, X_AFFECTS, X_REFERS_TO
from polyg_core.storage.vector import Neighbour, knn_many
from polyg_core.text.normalize import normalize_description

ItemError = InvalidInput | NodeNotFound | AmbiguousName

WRITE_NODES = f"""
UNWIND $rows AS row
MERGE (c:{CAUSAL} {{key: row.key}})
ON CREATE SET c.uuid = row.uuid, c.description = row.desc, c.node_type = row.type,
    c.created_at = $now, c.created_at_iso = $now_iso,
    c.embedding = CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END
WITH c, row, c.uuid = row.uuid AS created
{each_linked("c, created", "row", "eids", "eid", "x", ENTITY, f"MERGE (c)-[:{X_AFFECTS}]->(x)")}
{each_linked("c, created, n_x", "row", "tids", "tid", "t", EVENT, f"MERGE (c)-[:{X_REFERS_TO}]->(t)")}
RETURN row.i, {props("c")}, created
"""


@dataclass(frozen=True)
class CausalNodeItem:
    """A causal node to write (the arguments of `CausalGraph.add_node`)."""

    description: str
    node_type: CausalNodeType | str = CausalNodeType.EVENT
    entities: Sequence[str] = ()
    events: Sequence[str] = ()


async def event_uuids(
    graph: CausalGraph, namespace: str, refs: Sequence[str]
) -> dict[str, str | ItemError]:
    """Events named on a write, by uuid or exact description (`resolve_event(fuzzy=False)`),
    for many references in two queries."""
    out: dict[str, str | ItemError] = {}
    wanted: list[str] = []
    for ref in dict.fromkeys(refs):
        try:
            wanted.append(check_text(ref, "event", 4096))
        except InvalidInput as exc:
            out[ref] = exc
    if not wanted:
        return out
    by_uuid = await graph.store.query(
        namespace,
        f"UNWIND $r AS r MATCH (ev:{EVENT} {{uuid: r}}) RETURN r, ev.uuid",
        {"r": wanted},
        read_only=True,
    )
    by_desc = await graph.store.query(
        namespace,
        f"MATCH (ev:{EVENT}) WHERE ev.description IN $r "
        "RETURN ev.description, ev.uuid, ev.occurred_at_iso",
        {"r": wanted},
        read_only=True,
    )
    uuids: dict[str, list[str]] = {}
    for r, u in by_uuid.rows:
        uuids.setdefault(str(r), []).append(str(u))
    descs: dict[str, list[tuple[str, str]]] = {}
    for d, u, t in by_desc.rows:
        descs.setdefault(str(d), []).append((str(u), str(t)))
    for raw in refs:
        text = raw.strip()
        if raw in out:
            continue
        hits = uuids.get(text) or []
        if len(hits) == 1:
            out[raw] = hits[0]
            continue
        found = descs.get(text, [])
        if len(found) == 1:
            out[raw] = found[0][0]
        elif found:
            cands = [Candidate(u, f"{text} ({t})", EVENT, 1.0) for u, t in found[:6]]
            out[raw] = AmbiguousName("event", text, cands)
        else:
            out[raw] = NodeNotFound("event", text, [])
    return out


async def add_causal_nodes(
    graph: CausalGraph, namespace: str, items: Sequence[CausalNodeItem]
) -> list[tuple[CausalNode, bool] | ItemError]:
    """`add_node` for every item; an item that cannot be written is its error."""
    out: list[tuple[CausalNode, bool] | ItemError] = [InvalidInput("not written")] * len(items)
    checked: dict[int, tuple[str, CausalNodeType]] = {}
    keys: list[str | None] = []
    for i, it in enumerate(items):
        try:
            text = check_description(it.description, "description")
            try:
                ntype = CausalNodeType(it.node_type)
            except ValueError as exc:
                allowed = ", ".join(t.value for t in CausalNodeType)
                raise InvalidInput(
                    f"unknown node_type {it.node_type!r}; use one of {allowed}"
                ) from exc
        except InvalidInput as exc:
            out[i] = exc
            keys.append(None)
            continue
        checked[i] = (text, ntype)
        keys.append(normalize_description(text))
    if not checked:
        return out
    store = graph.store
    await prepare(store, namespace, graph.embedder)
    ents = await resolve_entity_names(
        store, graph.embedder, namespace, [n for i in checked for n in items[i].entities]
    )
    events = await event_uuids(graph, namespace, [e for i in checked for e in items[i].events])
    for round_ in rounds_by_key(keys):
        refs = [[checked[i][0], keys[i]] for i in round_]
        res = await store.query(
            namespace,
            f"UNWIND $r AS r MATCH (n:{CAUSAL} {{uuid: r[0]}}) RETURN r[0] AS ref, 0 AS step, n.uuid AS uuid, n.key AS key "
            f"UNION ALL UNWIND $r AS r MATCH (n:{CAUSAL} {{key: r[1]}}) "
            "RETURN r[0] AS ref, 1 AS step, n.uuid AS uuid, n.key AS key",
            {"r": refs},
            read_only=True,
        )
        stored: dict[str, str] = {}
        for text, _, _, key in sorted(res.rows, key=lambda r: int(r[1])):
            stored.setdefault(str(text), str(key))
        rows: list[dict[str, Any]] = []
        for i in round_:
            text, ntype = checked[i]
            linked: list[str | ItemError] = [
                ents.get(n.strip(), InvalidInput("an entity name is empty"))
                for n in items[i].entities
            ] + [events[e] for e in items[i].events]
            failed = next((v for v in linked if not isinstance(v, str)), None)
            if failed is not None:
                out[i] = failed
                continue
            rows.append(
                {
                    "i": i,
                    "key": stored.get(text, keys[i]),
                    "uuid": new_uuid(),
                    "desc": text,
                    "type": ntype.value,
                    "new": text not in stored,
                    "vec": None,
                    "eids": sorted({ents[n.strip()] for n in items[i].entities}),  # type: ignore[misc]
                    "tids": sorted({events[e] for e in items[i].events}),  # type: ignore[misc]
                }
            )
        fresh = [r for r in rows if r["new"]]
        for r, vec in zip(
            fresh, await embed_texts(graph.embedder, [r["desc"] for r in fresh]), strict=True
        ):
            r["vec"] = vec
        if not rows:
            continue
        now = datetime.now(UTC)
        res = await store.query(
            namespace, WRITE_NODES, {"rows": rows, "now": epoch_ms(now), "now_iso": iso(now)}
        )
        new_of = {r["i"]: (r["new"], r["uuid"]) for r in rows}
        for i, node, created in res.rows:
            is_new, uid = new_of[int(i)]
            got = node_from_row(clean(node))
            out[int(i)] = (got, bool(created) and is_new and got.uuid == uid)
    return out


@dataclass(frozen=True)
class CausalLinkItem:
    """A causal link to write (the arguments of `CausalGraph.add_link`)."""

    cause: str
    effect: str
    confidence: float
    evidence: str | None = None
    entities: Sequence[str] = ()
    events: Sequence[str] = ()


def match_new(
    texts: Sequence[str],
    vectors: Mapping[str, list[float]],
    hits: Mapping[str, Sequence[Neighbour]],
    threshold: float,
) -> dict[str, Match]:
    """Match descriptions no uuid or key matched, in order: a stored paraphrase (k-NN
    `hits`), else a paraphrase among the nodes the earlier texts create (as when the
    links are written one after the other), else a new node."""
    out: dict[str, Match] = {}
    unique = list(dict.fromkeys(texts))
    if not unique:
        return out
    matrix = np.asarray([vectors[t] for t in unique], dtype=np.float32).reshape(len(unique), -1)
    created: list[int] = []  # rows of `matrix` (and `unique`) that create a node
    keys: dict[str, int] = {}
    for n, t in enumerate(unique):
        m = paraphrase_match(t, vectors[t], hits.get(t, []), threshold)
        if m.uuid is None:
            same = keys.get(m.key)
            if same is None and created:
                scores = matrix[created] @ matrix[n]
                for at in np.flatnonzero(scores >= threshold):
                    if lexically_compatible(t, unique[created[int(at)]]):
                        same = created[int(at)]
                        break
            if same is None:
                created.append(n)
                keys[m.key] = n
            else:
                first = out[unique[same]]
                m = Match(first.text, first.key, first.vector)
        out[t] = m
    return out


def same_node(a: Match, b: Match, threshold: float) -> bool:
    """Cause and effect are one node (`CausalGraph._match_pair`'s check)."""
    if a.uuid is not None or b.uuid is not None:
        return a.uuid == b.uuid
    return a.key == b.key or (
        bool(a.vector)
        and bool(b.vector)
        and float(np.dot(a.vector, b.vector)) >= threshold
        and lexically_compatible(a.text, b.text)
    )


def match_pair(
    matched: Mapping[str, Match], a: str, b: str, threshold: float, roles: tuple[str, str]
) -> tuple[Match, Match] | NodeNotFound | InvalidInput:
    """The matches of the two ends of a link (`roles`: what each end is called), or why
    the link cannot be written: an end not matched, or both ends one node."""
    if a not in matched or b not in matched:
        return NodeNotFound("causal", a if a not in matched else b)
    am, bm = matched[a], matched[b]
    if same_node(am, bm, threshold):
        first, second = roles
        return InvalidInput(
            f"{first} {a!r} and {second} {b!r} are the same causal node; a node cannot be "
            f"its own {first}. Describe two different things."
        )
    return am, bm


async def match_descriptions(
    graph: CausalGraph, namespace: str, descriptions: Sequence[str]
) -> dict[str, Match]:
    """Match many causal descriptions as `add_link` matches one (uuid, normalised key, a
    lexically compatible paraphrase, `match_new` within the batch), in one lookup, one
    embedding call and one k-NN query. A uuid that matches no node is left out."""
    store = graph.store
    texts = list(dict.fromkeys(descriptions))
    res = await store.query(
        namespace,
        f"UNWIND $r AS r MATCH (n:{CAUSAL} {{uuid: r[0]}}) "
        "RETURN r[0] AS ref, 0 AS step, n.uuid AS uuid, n.key AS key "
        f"UNION ALL UNWIND $r AS r MATCH (n:{CAUSAL} {{key: r[1]}}) "
        "RETURN r[0] AS ref, 1 AS step, n.uuid AS uuid, n.key AS key",
        {"r": [[t, normalize_description(t)] for t in texts]},
        read_only=True,
    )
    matched: dict[str, Match] = {}
    for text, step, uid, key in sorted(res.rows, key=lambda r: int(r[1])):
        how: CausalMatch = "uuid" if int(step) == 0 else "normalized"
        matched.setdefault(str(text), Match(str(text), str(key), [], str(uid), how))
    vectors = dict(zip(texts, await embed_texts(graph.embedder, texts), strict=True))
    pending = [t for t in texts if t not in matched and not UUID_PATTERN.fullmatch(t)]
    near = await knn_many(
        store,
        namespace,
        CAUSAL,
        [(n, vectors[t]) for n, t in enumerate(pending)],
        5,
        min_similarity=graph.match_threshold,
    )
    matched.update(
        match_new(
            pending,
            vectors,
            {t: near.get(n, []) for n, t in enumerate(pending)},
            graph.match_threshold,
        )
    )
    for t in texts:
        if t in matched and matched[t].uuid is None:
            matched[t] = Match(t, matched[t].key, vectors[t])
    return matched


async def add_causal_links(
    graph: CausalGraph, namespace: str, items: Sequence[CausalLinkItem]
) -> list[tuple[str, str] | ItemError]:
    """`add_link` for every item in a few queries: (cause uuid, effect uuid) per item, or
    its error. Descriptions are matched as `add_link` matches them (uuid, normalised
    key, a lexically compatible paraphrase); the same pair twice keeps the later
    confidence."""
    out: list[tuple[str, str] | ItemError] = [InvalidInput("not written")] * len(items)
    checked: dict[int, tuple[str, str, float, str | None]] = {}
    for i, it in enumerate(items):
        try:
            checked[i] = (
                check_description(it.cause, "cause"),
                check_description(it.effect, "effect"),
                check_confidence(it.confidence),
                check_evidence(it.evidence),
            )
        except InvalidInput as exc:
            out[i] = exc
    if not checked:
        return out
    store = graph.store
    await prepare(store, namespace, graph.embedder)
    matched = await match_descriptions(
        graph, namespace, [t for c, e, _, _ in checked.values() for t in (c, e)]
    )
    ents = await resolve_entity_names(
        store, graph.embedder, namespace, [n for i in checked for n in items[i].entities]
    )
    events = await event_uuids(graph, namespace, [e for i in checked for e in items[i].events])
    batch = LinkBatch()
    pair_of: dict[int, tuple[int, int]] = {}
    for i, (c, e, conf, ev) in checked.items():
        ends = match_pair(matched, c, e, graph.match_threshold, ("cause", "effect"))
        if not isinstance(ends, tuple):
            out[i] = ends
            continue
        cm, em = ends
        linked: list[str | ItemError] = [
            ents.get(n.strip(), InvalidInput("an entity name is empty")) for n in items[i].entities
        ] + [events[x] for x in items[i].events]
        failed = next((v for v in linked if not isinstance(v, str)), None)
        if failed is not None:
            out[i] = failed
            continue
        pair = (batch.node(cm), batch.node(em))
        eids = [v for v in linked[: len(items[i].entities)] if isinstance(v, str)]
        tids = [v for v in linked[len(items[i].entities) :] if isinstance(v, str)]
        old = batch.links.get(pair)
        if old is not None:  # the same pair again: entities and events add up
            eids, tids = [*old["eids"], *eids], [*old["tids"], *tids]
        batch.link(i, *pair, conf, ev if ev is not None else (old or {}).get("ev"), eids, tids)
        pair_of[i] = pair
    rows = await batch.write(store, namespace)
    uuids = {int(r[0]): (str(r[1]), str(r[3])) for r in rows}
    by_pair = {pair: uuids[link["i"]] for pair, link in batch.links.items() if link["i"] in uuids}
    for i, pair in pair_of.items():
        if pair in by_pair:
            out[i] = by_pair[pair]
    return out


WRITE_SOLUTIONS = f"""{BATCH_NODES}MERGE (c)-[r:{R_SOLVED_BY}]->(e)
ON CREATE SET r.created_at = $now, r.created_at_iso = $now_iso
SET r.evidence = coalesce(l.ev, r.evidence)
RETURN l.i, c.uuid, c.description, e.uuid, e.description, null
"""


@dataclass
class SolutionBatch(LinkBatch):
    """`C_SOLVED_BY` links to write in one query (`WRITE_SOLUTIONS`): `LinkBatch`'s nodes,
    each link from a problem to its solution."""

    query: ClassVar[str] = WRITE_SOLUTIONS

    def solve(self, i: int, problem: int, solution: int, evidence: str | None) -> None:
        """A link from node `problem` to node `solution`; `i` is the caller's item index.
        The same pair again keeps the earlier evidence unless it gives one (as a second
        `add_solution` would)."""
        old = self.links.get((problem, solution))
        ev = evidence if evidence is not None else (old or {}).get("ev")
        self.links[(problem, solution)] = {"i": i, "c": problem, "e": solution, "ev": ev}


@dataclass(frozen=True)
class SolutionItem:
    """A solution to write (the arguments of `CausalGraph.add_solution`)."""

    problem: str
    solution: str
    evidence: str | None = None


async def add_solutions(
    graph: CausalGraph, namespace: str, items: Sequence[SolutionItem]
) -> list[tuple[str, str] | ItemError]:
    """`add_solution` for every item in a few queries: (problem uuid, solution uuid) per
    item, or its error. Descriptions are matched as `add_solution` matches them; a new
    problem is an event node, a new solution a solution node."""
    out: list[tuple[str, str] | ItemError] = [InvalidInput("not written")] * len(items)
    checked: dict[int, tuple[str, str, str | None]] = {}
    for i, it in enumerate(items):
        try:
            checked[i] = (
                check_description(it.problem, "problem"),
                check_description(it.solution, "solution"),
                check_evidence(it.evidence),
            )
        except InvalidInput as exc:
            out[i] = exc
    if not checked:
        return out
    await prepare(graph.store, namespace, graph.embedder)
    matched = await match_descriptions(
        graph, namespace, [t for p, s, _ in checked.values() for t in (p, s)]
    )
    batch = SolutionBatch()
    pair_of: dict[int, tuple[int, int]] = {}
    for i, (p, s, ev) in checked.items():
        ends = match_pair(matched, p, s, graph.match_threshold, ("problem", "solution"))
        if not isinstance(ends, tuple):
            out[i] = ends
            continue
        pm, sm = ends
        pair = (batch.node(pm), batch.node(sm, CausalNodeType.SOLUTION.value))
        batch.solve(i, *pair, ev)
        pair_of[i] = pair
    rows = await batch.write(graph.store, namespace)
    uuids = {int(r[0]): (str(r[1]), str(r[3])) for r in rows}
    by_pair = {pair: uuids[link["i"]] for pair, link in batch.links.items() if link["i"] in uuids}
    for i, pair in pair_of.items():
        if pair in by_pair:
            out[i] = by_pair[pair]
    return out
