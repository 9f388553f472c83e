"""The reads of one `remember`: one lookup query for everything the extraction names that
is stored already, and one k-NN query for what it matches by meaning (near-duplicate
entities, causal paraphrases, similar concepts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from polyg_core.graphs.causal import Match
from polyg_core.graphs.entity_refs import LOOKUP_ENTITIES, EntityRows, entity_rows, lookup_params
from polyg_core.remember.items import Items
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour
from polyg_core.text.normalize import normalize_description

# Concepts by normalised name, causal nodes by uuid and by normalised description,
# events by description and instant: the columns of LOOKUP_ENTITIES, so the
# entity lookup and these are one UNION ALL query.
_LOOKUP_OTHERS = f"""
UNION ALL
UNWIND $concepts AS k MATCH (n:{CONCEPT} {{name_key: k}})
RETURN k AS ref, 'concept' AS how, n.uuid AS uuid, n.name AS name, n.name_key AS key,
    n.description AS type, null AS props, n.origin AS origin
UNION ALL
UNWIND $causal AS r MATCH (n:{CAUSAL} {{uuid: r[0]}})
RETURN r[0] AS ref, 'causal' AS how, n.uuid AS uuid, n.description AS name, n.key AS key,
    null AS type, null AS props, null AS origin
UNION ALL
UNWIND $causal AS r MATCH (n:{CAUSAL} {{key: r[1]}})
RETURN r[0] AS ref, 'causal_key' AS how, n.uuid AS uuid, n.description AS name,
    n.key AS key, null AS type, null AS props, null AS origin
UNION ALL
UNWIND $events AS r MATCH (n:{EVENT} {{description: r[0], occurred_at: r[1]}})
RETURN r[0] AS ref, 'event' AS how, n.uuid AS uuid, n.description AS name, null AS key,
    null AS type, n.occurred_at AS props, null AS origin
"""


def _knn_part(label: str, param: str) -> str:
    return (
        f"UNWIND ${param} AS q CALL db.idx.vector.queryNodes('{label}', 'embedding', q.k, "
        f"vecf32(q.v)) YIELD node, score RETURN '{param}' AS kind, q.i AS i, "
        f"{props('node')} AS node, score AS score"
    )


_KNN = " UNION ALL ".join(
    _knn_part(label, param)
    for label, param in ((ENTITY, "entities"), (CAUSAL, "causal"), (CONCEPT, "concepts"))
)


def _fetch(k: int) -> int:
    # As storage.vector.knn: stale index entries take result slots, so ask for more.
    return 2 * k + 16


@dataclass
class Lookup:
    """What the one lookup query found."""

    entities: EntityRows = field(default_factory=EntityRows)
    concepts: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    causal_uuid: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    causal_key: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    events: dict[tuple[str, int], str] = field(default_factory=dict[tuple[str, int], str])


async def lookup(store: FalkorStore, namespace: str, items: Items) -> Lookup:
    """Everything the extraction names that is stored already, in one query."""
    params = _lookup_params(items)
    if not any(params.values()):
        return Lookup()
    res = await store.query(namespace, LOOKUP_ENTITIES + _LOOKUP_OTHERS, params, read_only=True)
    return _sorted_hits(res.rows)


def _lookup_params(items: Items) -> dict[str, Any]:
    """The names, concepts, causal descriptions and events the lookup query looks for."""
    names = [n for n, _ in items.entities]
    names += [n for r in items.relations for n in (r.source, r.target)]
    names += [n for _, _, ents in items.events for n in ents]
    names += [n for link in items.links for n in link.entities]
    names += [p["subject"] for _, p in items.facts if p is not None]
    causal = list(dict.fromkeys(t for link in items.links for t in (link.cause, link.effect)))
    return {
        "refs": lookup_params(names),
        "concepts": list(items.concepts),
        "causal": [[t, normalize_description(t)] for t in causal],
        "events": [[d, t] for d, t, _ in items.events],
    }


def _sorted_hits(rows: list[list[Any]]) -> Lookup:
    """The lookup query's rows, kind by kind (each row says how it matched)."""
    out = Lookup()
    entity_hits: list[list[Any]] = []
    for row in rows:
        ref, how, uid, name, key, kind, _props, origin = row
        if how in ("uuid", "key"):
            entity_hits.append(row)
        elif how == "concept":
            out.concepts.setdefault(
                str(ref),
                {"uuid": str(uid), "name": str(name), "description": kind, "origin": origin},
            )
        elif how == "causal":
            out.causal_uuid.setdefault(str(ref), (str(uid), str(key)))
        elif how == "causal_key":
            out.causal_key.setdefault(str(ref), (str(uid), str(key)))
        else:
            out.events[(str(ref), int(_props))] = str(uid)
    out.entities = entity_rows(entity_hits)
    return out


async def nearest(
    store: FalkorStore,
    namespace: str,
    entities: list[tuple[int, int, list[float]]],
    causal: list[tuple[int, int, list[float]]],
    concepts: list[tuple[int, int, list[float]]],
) -> dict[tuple[str, int], list[Neighbour]]:
    """The nearest stored entities, causal nodes and concepts of some vectors, in one
    query: (kind, item index) to neighbours, best first."""
    params = {
        kind: [{"i": i, "k": _fetch(k), "v": v} for i, k, v in rows]
        for kind, rows in (("entities", entities), ("causal", causal), ("concepts", concepts))
    }
    if not any(params.values()):
        return {}
    label = {"entities": ENTITY, "causal": CAUSAL, "concepts": CONCEPT}
    res = await store.query(namespace, _KNN, params, read_only=True)
    out: dict[tuple[str, int], list[Neighbour]] = {}
    for kind, i, node, distance in sorted(res.rows, key=lambda r: float(r[3])):
        hits = out.setdefault((str(kind), int(i)), [])
        uid = str(node.get("uuid", ""))
        if any(h.uuid == uid for h in hits):
            continue
        similarity = max(0.0, min(1.0, 1.0 - float(distance)))
        hits.append(Neighbour(label[str(kind)], clean(node), similarity))
    return out


def stored_causal(text: str, found: Lookup) -> Match | None:
    """The stored node a description names by uuid or normalised key; None to match it by
    meaning."""
    for how, table in (("uuid", found.causal_uuid), ("normalized", found.causal_key)):
        hit = table.get(text)
        if hit is not None:
            return Match(text, hit[1], [], hit[0], how)  # type: ignore[arg-type]
    return None
