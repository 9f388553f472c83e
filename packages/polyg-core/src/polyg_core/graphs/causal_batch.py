"""Causal nodes, links and solutions written in batches (import): the rules of
`CausalGraph.add_node` (uuid or normalised description, never meaning; the node's own
entities and events), `add_link` and `add_solution` (uuid, normalised description, a
lexically compatible paraphrase) in a few queries per batch instead of several per
record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from polyg_shared.causal import CausalMatch
from polyg_shared.nodes import CausalNode, CausalNodeType

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound
from polyg_core.graphs.base import (
    ItemError,
    check_text,
    embed_texts,
    iso_ms,
    prepare,
    rounds_by_key,
)
from polyg_core.graphs.causal import (
    UUID_PATTERN,
    CausalGraph,
    LinkBatch,
    Match,
    SolutionBatch,
    check_confidence,
    check_description,
    check_evidence,
    check_node_type,
    node_row,
    paraphrase_match,
    write_node_rows,
)
from polyg_core.graphs.entity_refs import lexically_compatible, resolve_entity_names
from polyg_core.storage.schema import CAUSAL, EVENT
from polyg_core.storage.vector import Neighbour, knn_many
from polyg_core.text.normalize import normalize_description


@dataclass(frozen=True)
class CausalNodeItem:
    """A causal node to write (the arguments of `CausalGraph.add_node`)."""

    description: str
    node_type: CausalNodeType | str = CausalNodeType.EVENT
    entities: Sequence[str] = ()
    events: Sequence[str] = ()
    stored: Mapping[str, Any] | None = None
    """The exact properties a node this write creates is written with (an import
    restoring an export's node); a node that exists already is left as the rules say."""


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
        "RETURN ev.description, ev.uuid, ev.occurred_at",
        {"r": wanted},
        read_only=True,
    )
    uuids: dict[str, list[str]] = {}
    for r, u in by_uuid.rows:
        uuids.setdefault(str(r), []).append(str(u))
    descs: dict[str, list[tuple[str, str]]] = {}
    for d, u, t in by_desc.rows:
        descs.setdefault(str(d), []).append((str(u), iso_ms(int(t))))
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


def _check_nodes(
    items: Sequence[CausalNodeItem], out: list[Any]
) -> dict[int, tuple[str, CausalNodeType]]:
    """The description and type of each item that passes the checks; the others get
    their error in `out`."""
    checked: dict[int, tuple[str, CausalNodeType]] = {}
    for i, it in enumerate(items):
        try:
            checked[i] = (
                check_description(it.description, "description"),
                check_node_type(it.node_type),
            )
        except InvalidInput as exc:
            out[i] = exc
    return checked


def linked_uuids(
    entities: Sequence[str],
    events: Sequence[str],
    ents: Mapping[str, str | ItemError],
    evs: Mapping[str, str | ItemError],
) -> tuple[list[str], list[str]] | ItemError:
    """The entity and event uuids an item names, or the first reference's error."""
    eids: list[str] = []
    for name in entities:
        got = ents.get(name.strip(), InvalidInput("an entity name is empty"))
        if not isinstance(got, str):
            return got
        eids.append(got)
    tids: list[str] = []
    for ref in events:
        got = evs[ref]
        if not isinstance(got, str):
            return got
        tids.append(got)
    return eids, tids


async def _stored_keys(graph: CausalGraph, namespace: str, refs: list[list[str]]) -> dict[str, str]:
    """The stored key of each description ([text, key] in `refs`) that names a node by
    uuid or normalised description (uuid first)."""
    res = await graph.store.query(
        namespace,
        f"UNWIND $r AS r MATCH (n:{CAUSAL} {{uuid: r[0]}}) "
        "RETURN r[0] AS ref, 0 AS step, n.uuid AS uuid, n.key AS key "
        f"UNION ALL UNWIND $r AS r MATCH (n:{CAUSAL} {{key: r[1]}}) "
        "RETURN r[0] AS ref, 1 AS step, n.uuid AS uuid, n.key AS key",
        {"r": refs},
        read_only=True,
    )
    stored: dict[str, str] = {}
    for text, _, _, key in sorted(res.rows, key=lambda r: int(r[1])):
        stored.setdefault(str(text), str(key))
    return stored


async def add_causal_nodes(
    graph: CausalGraph, namespace: str, items: Sequence[CausalNodeItem]
) -> list[tuple[CausalNode, bool] | ItemError]:
    """`add_node` for every item; an item that cannot be written is its error. The
    rows are written with `CausalGraph.add_node`'s query (`write_node_rows`)."""
    out: list[tuple[CausalNode, bool] | ItemError] = [InvalidInput("not written")] * len(items)
    checked = _check_nodes(items, out)
    if not checked:
        return out
    await prepare(graph.store, namespace, graph.embedder)
    ents = await resolve_entity_names(
        graph.store, graph.embedder, namespace, [n for i in checked for n in items[i].entities]
    )
    evs = await event_uuids(graph, namespace, [e for i in checked for e in items[i].events])
    keys = [
        normalize_description(checked[i][0]) if i in checked else None for i in range(len(items))
    ]
    for round_ in rounds_by_key(keys):
        stored = await _stored_keys(
            graph, namespace, [[checked[i][0], str(keys[i])] for i in round_]
        )
        rows: list[dict[str, Any]] = []
        for i in round_:
            text, ntype = checked[i]
            linked = linked_uuids(items[i].entities, items[i].events, ents, evs)
            if not isinstance(linked, tuple):
                out[i] = linked
                continue
            rows.append(
                node_row(
                    i,
                    stored.get(text, str(keys[i])),
                    text,
                    ntype,
                    None,
                    *linked,
                    exists=text in stored,
                    stored=items[i].stored,
                )
            )
        fresh = [r for r in rows if r["desc"] not in stored]
        vectors = await embed_texts(graph.embedder, [r["desc"] for r in fresh])
        for r, vec in zip(fresh, vectors, strict=True):
            r["vec"] = vec
        new = {r["i"] for r in fresh}
        for i, (node, created) in (await write_node_rows(graph.store, namespace, rows)).items():
            out[i] = (node, created and i in new)
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


def _check_links(
    items: Sequence[CausalLinkItem], out: list[Any]
) -> dict[int, tuple[str, str, float, str | None]]:
    """Cause, effect, confidence and evidence of each item that passes the checks; the
    others get their error in `out`."""
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
    return checked


def _add_link(
    batch: LinkBatch,
    i: int,
    ends: tuple[Match, Match],
    confidence: float,
    evidence: str | None,
    linked: tuple[list[str], list[str]],
) -> tuple[int, int]:
    """Add item `i`'s link to `batch`; the same pair again adds up its entities and
    events and keeps the earlier evidence unless this one gives one."""
    pair = (batch.node(ends[0]), batch.node(ends[1]))
    eids, tids = linked
    old = batch.links.get(pair)
    if old is not None:
        eids, tids = [*old["eids"], *eids], [*old["tids"], *tids]
    batch.link(
        i,
        *pair,
        confidence,
        evidence if evidence is not None else (old or {}).get("ev"),
        eids,
        tids,
    )
    return pair


async def _write_pairs(
    graph: CausalGraph,
    namespace: str,
    batch: LinkBatch,
    pair_of: Mapping[int, tuple[int, int]],
    out: list[Any],
) -> None:
    """Write `batch` and give each item in `pair_of` the (first uuid, second uuid) of
    its pair's link."""
    rows = await batch.write(graph.store, namespace)
    uuids = {int(r[0]): (str(r[1]), str(r[3])) for r in rows}
    by_pair = {pair: uuids[link["i"]] for pair, link in batch.links.items() if link["i"] in uuids}
    for i, pair in pair_of.items():
        if pair in by_pair:
            out[i] = by_pair[pair]


async def add_causal_links(
    graph: CausalGraph, namespace: str, items: Sequence[CausalLinkItem]
) -> list[tuple[str, str] | ItemError]:
    """`add_link` for every item in a few queries: (cause uuid, effect uuid) per item, or
    its error. Descriptions are matched as `add_link` matches them (uuid, normalised
    key, a lexically compatible paraphrase); the same pair twice keeps the later
    confidence. The links are written with `add_link`'s query (`LinkBatch`)."""
    out: list[tuple[str, str] | ItemError] = [InvalidInput("not written")] * len(items)
    checked = _check_links(items, out)
    if not checked:
        return out
    await prepare(graph.store, namespace, graph.embedder)
    matched = await match_descriptions(
        graph, namespace, [t for c, e, _, _ in checked.values() for t in (c, e)]
    )
    ents = await resolve_entity_names(
        graph.store, graph.embedder, namespace, [n for i in checked for n in items[i].entities]
    )
    evs = await event_uuids(graph, namespace, [e for i in checked for e in items[i].events])
    batch = LinkBatch()
    pair_of: dict[int, tuple[int, int]] = {}
    for i, (c, e, conf, ev) in checked.items():
        ends = match_pair(matched, c, e, graph.match_threshold, ("cause", "effect"))
        linked = linked_uuids(items[i].entities, items[i].events, ents, evs)
        if not isinstance(ends, tuple) or not isinstance(linked, tuple):
            out[i] = ends if not isinstance(ends, tuple) else linked  # type: ignore[assignment]
            continue
        pair_of[i] = _add_link(batch, i, ends, conf, ev, linked)
    await _write_pairs(graph, namespace, batch, pair_of, out)
    return out


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
    problem is an event node, a new solution a solution node. The links are written
    with `add_solution`'s query (`SolutionBatch`)."""
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
        pair = (batch.node(ends[0]), batch.node(ends[1], CausalNodeType.SOLUTION.value))
        batch.solve(i, *pair, ev)
        pair_of[i] = pair
    await _write_pairs(graph, namespace, batch, pair_of, out)
    return out
