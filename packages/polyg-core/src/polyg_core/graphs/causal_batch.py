"""Causal nodes written in batches (import): the rule of `CausalGraph.add_node` (uuid or
normalised description, never meaning; the node's own entities and events) in a
few queries per batch instead of several per record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from polyg_shared.nodes import CausalNode, CausalNodeType
from polyg_shared.timeutil import iso

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound
from polyg_core.graphs.base import check_text, embed_texts, new_uuid, prepare, rounds_by_key
from polyg_core.graphs.causal import CausalGraph, _text, node_from_row  # pyright: ignore[reportPrivateUsage]
from polyg_core.graphs.entity_refs import epoch_ms, resolve_entity_names
from polyg_core.storage.cypher import clean, each_linked, props
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT, X_AFFECTS, X_REFERS_TO
from polyg_core.text import normalize_description

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
            text = _text(it.description, "description")
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
