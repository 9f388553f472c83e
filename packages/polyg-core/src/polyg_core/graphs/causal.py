"""The causal graph: cause → effect links with confidences, and chains through them.

Every description given to `add_link` is first matched to an existing `C_Node`
— by uuid, by normalised description (`key`), then by embedding similarity
through the vector index — and only then created. That is what makes chains
connect: "missing AUTH_SECRET" in one link and "AUTH_SECRET missing from
config" in the next are one node.

The similarity threshold (default 0.85) was chosen from all-MiniLM-L6-v2
cosine similarities of phrasings that mean the same thing and of ones that do
not (tests/graphs/test_causal.py keeps them):

=====  ==========================================================
0.99   "missing AUTH_SECRET" / "AUTH_SECRET missing"
0.97   "auth service crash" / "Auth service crashed"
0.95   "deploy v2.3.1" / "deployment v2.3.1"
0.91   "missing AUTH_SECRET" / "AUTH_SECRET missing from config"
0.80   "auth service crash" / "auth service restart"   (different)
0.76   "missing AUTH_SECRET" / "missing AUTH_TOKEN"      (different)
=====  ==========================================================

Embeddings also put opposite or differently-numbered statements close
("latency increased" / "latency decreased" 0.95, "deploy v2.3.1" /
"deploy v2.3.2" 0.96), so an embedding match must also pass
`lexically_compatible` (same numbers, same negation, no opposite words).
"""

from __future__ import annotations

import logging
import math
import re
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import numpy as np
from polyg_shared.causal import (
    CausalChain,
    CausalLinkResult,
    CausalMatch,
    CausalSolution,
    ChainDirection,
)
from polyg_shared.edges import CausalLink, CausalPath
from polyg_shared.nodes import CausalNode, CausalNodeType
from polyg_shared.timeutil import iso

from polyg_core.errors import InvalidInput, NodeNotFound, check_choice
from polyg_core.graphs.base import (
    MAX_TEXT,
    check_text,
    create_then_merge,
    new_uuid,
    prepare,
    with_stored,
)
from polyg_core.graphs.entity_refs import (
    created_entities,
    ensure_entity_uuids,
    epoch_ms,
    from_ms,
    lexically_compatible,
)
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import CAUSAL_NAMES, NameResolver
from polyg_core.storage.cypher import clean, create_missing, each_linked, props
from polyg_core.storage.schema import (
    CAUSAL,
    ENTITY,
    EVENT,
    R_CAUSES,
    R_SOLVED_BY,
    X_AFFECTS,
    X_REFERS_TO,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour, knn
from polyg_core.text.normalize import normalize_description

logger = logging.getLogger(__name__)

MAX_DEPTH = 10
DEFAULT_MATCH_THRESHOLD = 0.85
_UUID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")


@dataclass(frozen=True)
class _Match:
    """A description matched to an existing node (uuid set) or to be created."""

    text: str
    key: str
    vector: list[float]
    uuid: str | None = None
    how: CausalMatch = "created"
    similarity: float = 1.0


def node_from_row(node: dict[str, Any]) -> CausalNode:
    """A `CausalNode` model from stored properties."""
    raw_type = str(node.get("node_type") or CausalNodeType.EVENT.value)
    try:
        node_type = CausalNodeType(raw_type)
    except ValueError:
        node_type = CausalNodeType.EVENT
    return CausalNode(
        uuid=str(node["uuid"]), description=str(node["description"]), node_type=node_type
    )


def _text(value: str, what: str) -> str:
    text = check_text(value, what, MAX_TEXT)
    if not normalize_description(text):
        raise InvalidInput(f"{what} {text!r} has no letters or digits; describe it in words")
    return text


def _confidence(value: float) -> float:
    if isinstance(value, bool) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"confidence must be a number between 0 and 1, got {value!r}")
    return float(value)


def _evidence(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > 4096:
        raise InvalidInput("evidence is longer than 4096 characters; shorten it")
    return value.strip()


def paraphrase_match(
    text: str, vector: list[float], hits: Sequence[Neighbour], threshold: float
) -> _Match:
    """The node among k-NN `hits` (best first) that `text` paraphrases: similar at least
    `threshold` and lexically compatible; else a new node to create under `text`'s key."""
    key = normalize_description(text)
    for hit in hits:
        if hit.similarity < threshold:
            continue
        if lexically_compatible(text, str(hit.properties.get("description", ""))):
            stored_key = str(hit.properties.get("key") or key)
            return _Match(text, stored_key, vector, hit.uuid, "embedding", hit.similarity)
    return _Match(text, key, vector)


def _merge_node(row: str) -> str:
    """MERGE causal node `c` on row `row`'s normalised key; a new one gets the row's
    uuid, description, type and vector (the one rule both node writes share)."""
    return f"""MERGE (c:{CAUSAL} {{key: {row}.key}})
ON CREATE SET c.uuid = {row}.uuid, c.description = {row}.desc, c.node_type = {row}.type,
    c.created_at = $now, c.created_at_iso = $now_iso,
    c.embedding = CASE WHEN {row}.vec IS NULL THEN NULL ELSE vecf32({row}.vec) END"""


# Many causal links in one query: the nodes (`$nodes`, by normalised key: a stored
# node under its own key, a new one created) then the links between them by index
# into `$nodes`, with the entities each link's two nodes affect and the events they
# refer to (the same edges `add_link` writes). A link written again with the same
# confidence and evidence keeps its `updated_at`: nothing about it changed (a second
# import of the same file leaves the namespace as it was).
BATCH_NODES = f"""
UNWIND $nodes AS n
{_merge_node("n")}
WITH n.i AS i, collect(c)[0] AS c ORDER BY i
WITH collect(c) AS cs
UNWIND $links AS l
WITH cs[l.c] AS c, cs[l.e] AS e, l
"""
"""The nodes of a `LinkBatch` (`$nodes`), then each of its links (`$links`) as `c`, `e`, `l`."""

WRITE_LINKS = f"""{BATCH_NODES}MERGE (c)-[r:{R_CAUSES}]->(e)
ON CREATE SET r.created_at = $now, r.created_at_iso = $now_iso
WITH c, e, r, l, r.confidence = l.conf AND (l.ev IS NULL OR r.evidence = l.ev) AS same
SET r.confidence = l.conf, r.evidence = coalesce(l.ev, r.evidence),
    r.updated_at = CASE WHEN same THEN r.updated_at ELSE $now END,
    r.updated_at_iso = CASE WHEN same THEN r.updated_at_iso ELSE $now_iso END
{
    each_linked(
        "c, e, r",
        "l",
        "eids",
        "eid",
        "x",
        ENTITY,
        f"MERGE (c)-[:{X_AFFECTS}]->(x) MERGE (e)-[:{X_AFFECTS}]->(x)",
    )
}
{
    each_linked(
        "c, e, r, n_x",
        "l",
        "tids",
        "tid",
        "t",
        EVENT,
        f"MERGE (c)-[:{X_REFERS_TO}]->(t) MERGE (e)-[:{X_REFERS_TO}]->(t)",
    )
}
RETURN l.i, c.uuid, c.description, e.uuid, e.description, r.confidence,
    {props("c")}, {props("e")}, r.evidence, r.created_at
"""


@dataclass
class LinkBatch:
    """Causal links to write in one query (`WRITE_LINKS`), nodes already matched.

    `node` adds a matched or new node once per key and gives its index; `link` adds a
    link between two indexes (the same pair again replaces the earlier one, as a
    second `add_link` would).
    """

    query: ClassVar[str] = WRITE_LINKS
    nodes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    links: dict[tuple[int, int], dict[str, Any]] = field(
        default_factory=dict[tuple[int, int], dict[str, Any]]
    )
    _index: dict[str, int] = field(default_factory=dict[str, int])

    def node(self, m: _Match, node_type: str = CausalNodeType.EVENT.value) -> int:
        """The index of the node `m` matched (or will create)."""
        i = self._index.get(m.key)
        if i is None:
            i = self._index[m.key] = len(self.nodes)
            self.nodes.append(
                {
                    "i": i,
                    "key": m.key,
                    "uuid": uuidlib.uuid4().hex,
                    "desc": m.text,
                    "type": node_type,
                    "vec": m.vector if m.uuid is None else None,
                }
            )
        return i

    def link(
        self,
        i: int,
        cause: int,
        effect: int,
        confidence: float,
        evidence: str | None,
        eids: Sequence[str],
        tids: Sequence[str],
    ) -> None:
        """A link from node `cause` to node `effect`; `i` is the caller's item index."""
        self.links[(cause, effect)] = {
            "i": i,
            "c": cause,
            "e": effect,
            "conf": _confidence(confidence),
            "ev": _evidence(evidence),
            "eids": sorted(set(eids)),
            "tids": sorted(set(tids)),
        }

    def created(self, index: int, uuid: str) -> bool:
        """Whether the node at `index` is the one the write created (its new uuid)."""
        return self.nodes[index]["uuid"] == uuid

    async def write(self, store: FalkorStore, namespace: str) -> list[list[Any]]:
        """Write the nodes and links; rows (item index, cause uuid, cause description,
        effect uuid, effect description, confidence) per link."""
        return [row[:6] for row in await self.write_stored(store, namespace)]

    async def write_stored(self, store: FalkorStore, namespace: str) -> list[list[Any]]:
        """`write`, each row followed by the stored cause and effect (`props`), the
        link's evidence and its creation time (epoch ms)."""
        if not self.links:
            return []
        now = datetime.now(UTC)
        res = await store.query(
            namespace,
            self.query,
            {
                "nodes": self.nodes,
                "links": list(self.links.values()),
                "now": epoch_ms(now),
                "now_iso": iso(now),
            },
        )
        return res.rows


# Causal nodes with their own entities and events, one MERGE on the normalised key
# per row (rows from `node_row`; rows of one key go in separate rounds).
WRITE_NODES = f"""
UNWIND $rows AS row
{_merge_node("row")}
WITH c, row, c.uuid = row.uuid AS created
{each_linked("c, created", "row", "eids", "eid", "x", ENTITY, f"MERGE (c)-[:{X_AFFECTS}]->(x)")}
{each_linked("c, created, n_x", "row", "tids", "tid", "t", EVENT, f"MERGE (c)-[:{X_REFERS_TO}]->(t)")}
RETURN row.i, {props("c")}, created
"""

# The causal nodes the caller read as missing, each created whole in one CREATE: a
# MERGE with ON CREATE SET writes a node twice, and each write of a vector-indexed
# node leaves FalkorDB an index entry (a stale one for all but the last). `p`: the
# properties it is created with (an export's stored ones on an import), `x` any
# others. A row whose node another writer created since the read is left to
# `WRITE_NODES`.
CREATE_NODES = (
    create_missing(
        CAUSAL,
        "c",
        "key: row.key",
        """key: row.p.key, uuid: row.uuid, description: row.p.description,
    node_type: row.p.node_type, created_at: coalesce(row.p.created_at, $now),
    created_at_iso: coalesce(row.p.created_at_iso, $now_iso)""",
    )
    + f"""
{each_linked("c, created", "row", "eids", "eid", "x", ENTITY, f"MERGE (c)-[:{X_AFFECTS}]->(x)")}
{each_linked("c, created, n_x", "row", "tids", "tid", "t", EVENT, f"MERGE (c)-[:{X_REFERS_TO}]->(t)")}
RETURN row.i, {props("c")}, created
"""
)


def node_row(
    i: int,
    key: str,
    text: str,
    node_type: CausalNodeType,
    vector: list[float] | None,
    eids: Sequence[str],
    tids: Sequence[str],
    *,
    exists: bool = False,
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A `WRITE_NODES` row: item `i`, the key it MERGEs on, what a new node gets (a
    fresh uuid, `text`, `node_type`, `vector`), the entities and events it links.

    A row read as missing (`exists` False) is created by `CREATE_NODES`, with
    `stored` (an import restoring an export's node: the properties it is written with
    instead of the ones the graph would give it, a None value left out, a None time
    now) in that one write."""
    uid = new_uuid()
    created: dict[str, Any] = {
        "key": key,
        "uuid": uid,
        "description": text,
        "node_type": node_type.value,
        "created_at": None,
        "created_at_iso": None,
    }
    extra = with_stored(created, stored, uid)
    return {
        "i": i,
        "key": key,
        "uuid": created["uuid"],
        "exists": exists,
        "p": created,
        "x": extra,
        "desc": text,
        "type": node_type.value,
        "vec": vector,
        "eids": sorted(set(eids)),
        "tids": sorted(set(tids)),
    }


async def write_node_rows(
    store: FalkorStore, namespace: str, rows: Sequence[dict[str, Any]]
) -> dict[int, tuple[CausalNode, bool]]:
    """Write `node_row` rows (their keys distinct) in at most two queries (those read
    as missing created whole by `CREATE_NODES`, the others merged): per row index, the
    stored node and True when this write created it."""
    if not rows:
        return {}
    now = datetime.now(UTC)
    new = [r for r in rows if "p" in r and not r.get("exists", False)]
    return await create_then_merge(
        store,
        namespace,
        rows,
        new,
        (CREATE_NODES, WRITE_NODES),
        {"now": epoch_ms(now), "now_iso": iso(now)},
        lambda r: (int(r[0]), node_from_row(clean(r[1])), bool(r[2])),
    )


def check_node_type(value: CausalNodeType | str) -> CausalNodeType:
    """A causal node type, or a clear error naming the allowed ones."""
    return check_choice(CausalNodeType, value, "node_type")


WRITE_SOLUTIONS = f"""{BATCH_NODES}MERGE (c)-[r:{R_SOLVED_BY}]->(e)
ON CREATE SET r.created_at = $now, r.created_at_iso = $now_iso
SET r.evidence = coalesce(l.ev, r.evidence)
RETURN l.i, c.uuid, c.description, e.uuid, e.description, null,
    {props("c")}, {props("e")}, r.evidence, r.created_at
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


@dataclass
class CausalGraph:
    """Causal nodes, links, solutions and chains of one FalkorDB store.

    Args:
        store: the FalkorDB store.
        embedder: embeds node descriptions (for matching and retrieval).
        resolver: resolves entity names and, for reads, node descriptions.
        match_threshold: cosine similarity at which a new description reuses a node.
        max_paths: most paths a chain query returns.
    """

    store: FalkorStore
    embedder: Embedder
    resolver: NameResolver
    match_threshold: float = DEFAULT_MATCH_THRESHOLD
    max_paths: int = 100
    _temporal: TemporalGraph = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._temporal = TemporalGraph(
            self.store, self.embedder, self.resolver, event_match_threshold=self.match_threshold
        )

    async def _prepare(self, namespace: str) -> None:
        await prepare(self.store, namespace, self.embedder)

    async def _match(self, namespace: str, text: str, vector: list[float]) -> _Match:
        key = normalize_description(text)
        steps: tuple[tuple[CausalMatch, str, str], ...] = (
            ("uuid", "n.uuid = $v", text),
            ("normalized", "n.key = $v", key),
        )
        for how, cond, value in steps:
            res = await self.store.query(
                namespace,
                f"MATCH (n:{CAUSAL}) WHERE {cond} RETURN n.uuid, n.key LIMIT 1",
                {"v": value},
                read_only=True,
            )
            if res.rows:
                uid, stored_key = res.rows[0]
                return _Match(text, str(stored_key or key), vector, str(uid), how)
        if _UUID.fullmatch(text):
            raise NodeNotFound("causal", text)
        hits = await knn(
            self.store, namespace, CAUSAL, vector, 5, min_similarity=self.match_threshold
        )
        return paraphrase_match(text, vector, hits, self.match_threshold)

    async def _match_pair(
        self, namespace: str, first: str, second: str, what: tuple[str, str]
    ) -> tuple[_Match, _Match]:
        vectors = await self.embedder.embed([first, second])
        a = await self._match(namespace, first, [float(x) for x in vectors[0]])
        b = await self._match(namespace, second, [float(x) for x in vectors[1]])
        same = (a.uuid is not None and a.uuid == b.uuid) or (
            a.uuid is None
            and b.uuid is None
            and (
                a.key == b.key
                or (
                    float(np.dot(vectors[0], vectors[1])) >= self.match_threshold
                    and lexically_compatible(first, second)
                )
            )
        )
        if same:
            raise InvalidInput(
                f"{what[0]} {first!r} and {what[1]} {second!r} are the same causal node; "
                f"a node cannot be its own {what[0]}. Describe two different things."
            )
        return a, b

    async def add_link(
        self,
        namespace: str,
        cause: str,
        effect: str,
        confidence: float,
        evidence: str | None = None,
        entities: Sequence[str] = (),
        events: Sequence[str] = (),
    ) -> CausalLinkResult:
        """Record that `cause` leads to `effect`, reusing existing nodes where they match.

        The same pair again updates the link's confidence (and evidence, when given)
        instead of adding a second link. Both nodes are linked to `entities`
        (`X_AFFECTS`, created if missing and reported in `created_entities`) and to
        `events` (`X_REFERS_TO`, by uuid or description). Nodes and links are written
        in one query.

        Args:
            namespace: the graph.
            cause: a description or a node uuid.
            effect: a description or a node uuid.
            confidence: how sure the link is, in [0, 1].
            evidence: why the link is believed, if known.
            entities: names or uuids of affected entities.
            events: uuids or descriptions of existing events the nodes refer to.

        Raises:
            InvalidInput: empty descriptions, confidence outside [0, 1], or cause and
                effect resolving to the same node.
            NodeNotFound: a uuid given as cause or effect, or an event reference,
                matches nothing.
            AmbiguousName: an entity or event reference matches several.
        """
        c_text, e_text = _text(cause, "cause"), _text(effect, "effect")
        conf, ev = _confidence(confidence), _evidence(evidence)
        await self._prepare(namespace)
        cm, em = await self._match_pair(namespace, c_text, e_text, ("cause", "effect"))
        created: dict[str, str] = {}
        eids = await ensure_entity_uuids(
            self.store, self.resolver, self.embedder, namespace, list(entities), created=created
        )
        tids = await self._event_uuids(namespace, events)
        batch = LinkBatch()  # a single link is a batch of one
        pair = (batch.node(cm), batch.node(em))
        batch.link(0, *pair, conf, ev, list(eids.values()), tids)
        row = await self._write_one(batch, namespace, "link", "add_link")
        c, e, r_ev, r_created = _ends_of(row)
        c_created = cm.uuid is None and batch.created(pair[0], c.uuid)
        e_created = em.uuid is None and batch.created(pair[1], e.uuid)
        return CausalLinkResult(
            cause=c,
            effect=e,
            link=CausalLink(
                cause=c.uuid,
                effect=e.uuid,
                confidence=float(row[5]),
                evidence=r_ev,
                created_at=r_created,
                cause_description=c.description,
                effect_description=e.description,
            ),
            cause_created=c_created,
            effect_created=e_created,
            cause_matched_by=_matched_by(cm, c_created),
            effect_matched_by=_matched_by(em, e_created),
            cause_similarity=round(min(1.0, cm.similarity), 4),
            effect_similarity=round(min(1.0, em.similarity), 4),
            entities=sorted(set(eids.values())),
            events=sorted(set(tids)),
            created_entities=await created_entities(self.resolver, namespace, created),
        )

    async def _write_one(self, batch: LinkBatch, namespace: str, what: str, call: str) -> list[Any]:
        """The one row a batch of one link or solution wrote.

        Raises:
            InvalidInput: a matched node was deleted meanwhile (nothing was written).
        """
        rows = await batch.write_stored(self.store, namespace)
        if not rows:
            raise InvalidInput(
                f"a matched causal node was deleted while the {what} was being written; "
                f"call {call} again"
            )
        return rows[0]

    async def _event_uuids(self, namespace: str, events: Sequence[str]) -> list[str]:
        """Uuids of the events a causal node refers to: by uuid or exact description."""
        return [
            (await self._temporal.resolve_event(namespace, ref, fuzzy=False)).uuid for ref in events
        ]

    async def add_node(
        self,
        namespace: str,
        description: str,
        node_type: CausalNodeType | str = CausalNodeType.EVENT,
        entities: Sequence[str] = (),
        events: Sequence[str] = (),
    ) -> tuple[CausalNode, bool]:
        """A causal node with the entities it affects and the events it refers to.

        The node is the one with this uuid or normalised description, else a new one:
        meaning alone never merges two descriptions here (an import restores nodes
        that were distinct). The entities (`X_AFFECTS`, created if missing) and events
        (`X_REFERS_TO`, by uuid or exact description) are this node's own; links are
        only ever added.

        Returns:
            The node and True when it was created.

        Raises:
            InvalidInput: an empty description or an unknown node type.
            NodeNotFound: an event reference matches nothing.
            AmbiguousName: an entity or event reference matches several.
        """
        text = _text(description, "description")
        ntype = check_node_type(node_type)
        await self._prepare(namespace)
        key = normalize_description(text)
        res = await self.store.query(
            namespace,
            f"MATCH (n:{CAUSAL}) WHERE n.uuid = $t OR n.key = $k RETURN n.key LIMIT 1",
            {"t": text, "k": key},
            read_only=True,
        )
        vector = None if res.rows else [float(x) for x in (await self.embedder.embed([text]))[0]]
        eids = await ensure_entity_uuids(
            self.store, self.resolver, self.embedder, namespace, list(entities)
        )
        tids = await self._event_uuids(namespace, events)
        stored_key = str(res.rows[0][0] or key) if res.rows else key
        row = node_row(0, stored_key, text, ntype, vector, list(eids.values()), tids)
        written = await write_node_rows(self.store, namespace, [row])  # a batch of one
        if 0 not in written:
            raise InvalidInput(
                "the matched causal node was deleted while it was being written; call again"
            )
        node, created = written[0]
        return node, created and not res.rows

    async def add_solution(
        self, namespace: str, problem: str, solution: str, evidence: str | None = None
    ) -> CausalSolution:
        """Record that `problem` is solved by `solution` (`C_SOLVED_BY`), matching nodes first.

        Raises:
            InvalidInput: empty descriptions, or problem and solution being one node.
        """
        p_text, s_text = _text(problem, "problem"), _text(solution, "solution")
        ev = _evidence(evidence)
        await self._prepare(namespace)
        pm, sm = await self._match_pair(namespace, p_text, s_text, ("problem", "solution"))
        batch = SolutionBatch()  # a single solution is a batch of one
        pair = (batch.node(pm), batch.node(sm, CausalNodeType.SOLUTION.value))
        batch.solve(0, *pair, ev)
        row = await self._write_one(batch, namespace, "solution", "add_solution")
        p, s, r_ev, r_created = _ends_of(row)
        return CausalSolution(
            problem=p,
            solution=s,
            evidence=r_ev,
            created_at=r_created,
            problem_created=pm.uuid is None and batch.created(pair[0], p.uuid),
            solution_created=sm.uuid is None and batch.created(pair[1], s.uuid),
        )

    async def get(self, namespace: str, node: str) -> CausalNode:
        """One causal node by uuid, description, normalised description or similarity.

        Raises:
            NodeNotFound: nothing matches; carries the closest descriptions.
            AmbiguousName: several nodes match about equally well.
        """
        found = await self.resolver.resolve(namespace, CAUSAL_NAMES, _text(node, "node"))
        return node_from_row(found.properties)

    async def remove_link(self, namespace: str, cause: str, effect: str) -> bool:
        """Delete the `C_CAUSES` link from `cause` to `effect`; the nodes stay.

        Both ends are named exactly (uuid, description or normalised description): a
        delete never guesses by meaning.

        Returns:
            True when a link was deleted, False when the two nodes were not linked.

        Raises:
            NodeNotFound: an end matches no node (with the closest descriptions).
            AmbiguousName: an end matches several nodes.
        """
        c = await self.resolver.resolve(namespace, CAUSAL_NAMES, _text(cause, "cause"), fuzzy=False)
        e = await self.resolver.resolve(
            namespace, CAUSAL_NAMES, _text(effect, "effect"), fuzzy=False
        )
        res = await self.store.query(
            namespace,
            f"MATCH (:{CAUSAL} {{uuid: $c}})-[r:{R_CAUSES}]->(:{CAUSAL} {{uuid: $e}}) DELETE r",
            {"c": c.uuid, "e": e.uuid},
        )
        return res.relationships_deleted > 0

    async def upstream(
        self, namespace: str, node: str, depth: int = 3, max_paths: int | None = None
    ) -> CausalChain:
        """Every chain of causes that leads to `node` (`chain` upstream)."""
        return await self.chain(namespace, node, "upstream", depth, max_paths)

    async def downstream(
        self, namespace: str, node: str, depth: int = 3, max_paths: int | None = None
    ) -> CausalChain:
        """Every chain of effects that follows from `node` (`chain` downstream)."""
        return await self.chain(namespace, node, "downstream", depth, max_paths)

    async def chain(
        self,
        namespace: str,
        node: str,
        direction: ChainDirection,
        depth: int = 3,
        max_paths: int | None = None,
    ) -> CausalChain:
        """Every chain of causes leading to `node` (upstream) or of effects following from
        it (downstream), up to `depth` links, best first.

        Raises:
            InvalidInput: depth outside 1-10, or max_paths below 1.
            NodeNotFound: the node does not exist.
            AmbiguousName: the description matches several nodes.
        """
        if isinstance(depth, bool) or not 1 <= depth <= MAX_DEPTH:
            raise InvalidInput(f"depth must be between 1 and {MAX_DEPTH}, got {depth}")
        cap = self.max_paths if max_paths is None else max_paths
        if cap < 1:
            raise InvalidInput(f"max_paths must be at least 1, got {cap}")
        root = await self.get(namespace, node)
        return await self.chain_from(namespace, root, depth, direction, cap)

    async def chain_from(
        self,
        namespace: str,
        root: CausalNode,
        depth: int,
        direction: ChainDirection,
        max_paths: int = 100,
    ) -> CausalChain:
        """The chain from an already resolved node (used by the retrieval pipeline).

        Paths never repeat a node, so cycles end the path instead of looping.
        """
        depth = max(1, min(int(depth), MAX_DEPTH))
        hops = f"[:{R_CAUSES}*1..{depth}]"
        pattern = (
            f"p = (a:{CAUSAL})-{hops}->(root)"
            if direction == "upstream"
            else f"p = (root)-{hops}->(b:{CAUSAL})"
        )
        res = await self.store.query(
            namespace,
            f"MATCH (root:{CAUSAL} {{uuid: $u}}) MATCH {pattern} "
            "WITH nodes(p) AS ns, relationships(p) AS rs "
            "WHERE all(i IN range(0, size(ns) - 2) WHERE NOT ns[i] IN ns[i + 1..]) "
            "WITH ns, rs, reduce(c = 1.0, r IN rs | c * r.confidence) AS conf, size(rs) AS len "
            "RETURN [n IN ns | n {.uuid, .description, .node_type}], "
            "[r IN rs | [r.confidence, r.evidence, r.created_at]], conf "
            "ORDER BY conf DESC, len ASC LIMIT $lim",
            {"u": root.uuid, "lim": max_paths + 1},
            read_only=True,
        )
        rows = res.rows
        truncated = len(rows) > max_paths
        paths: list[CausalPath] = []
        nodes: dict[str, CausalNode] = {root.uuid: root}
        edges: dict[tuple[str, str], CausalLink] = {}
        for raw_nodes, raw_rels, conf in rows[:max_paths]:
            chain = [node_from_row(n) for n in raw_nodes]
            confs = [float(r[0]) for r in raw_rels]
            for n in chain:
                nodes.setdefault(n.uuid, n)
            for i, (r_conf, r_ev, r_created) in enumerate(raw_rels):
                a, b = chain[i], chain[i + 1]
                edges.setdefault(
                    (a.uuid, b.uuid),
                    CausalLink(
                        cause=a.uuid,
                        effect=b.uuid,
                        confidence=float(r_conf),
                        evidence=r_ev,
                        created_at=from_ms(int(r_created)),
                        cause_description=a.description,
                        effect_description=b.description,
                    ),
                )
            paths.append(
                CausalPath(
                    nodes=[n.description for n in chain],
                    node_ids=[n.uuid for n in chain],
                    confidences=confs,
                    confidence=max(0.0, min(1.0, float(conf))),
                )
            )
        return CausalChain(
            root=root,
            direction=direction,
            depth=depth,
            paths=paths,
            nodes=list(nodes.values()),
            edges=list(edges.values()),
            truncated=truncated,
        )

    async def nodes_for_entities(
        self, namespace: str, entity_uuids: Sequence[str], limit: int = 50
    ) -> list[CausalNode]:
        """Causal nodes that affect (`X_AFFECTS`) any of the seed entities.

        Raises:
            InvalidInput: limit below 1.
        """
        if limit < 1:
            raise InvalidInput(f"limit must be at least 1, got {limit}")
        ids = sorted(set(entity_uuids))
        if not ids:
            return []
        res = await self.store.query(
            namespace,
            f"MATCH (c:{CAUSAL})-[:{X_AFFECTS}]->(x:{ENTITY}) WHERE x.uuid IN $ids "
            f"WITH DISTINCT c ORDER BY c.uuid LIMIT $lim RETURN {props('c')}",
            {"ids": ids, "lim": limit},
            read_only=True,
        )
        return [node_from_row(clean(r[0])) for r in res.rows]


def _matched_by(m: _Match, created: bool) -> CausalMatch:
    if m.uuid is not None:
        return m.how
    # A new description can still meet a node another writer created a moment earlier.
    return "created" if created else "normalized"


# The matching rule and checks, for the batched writers (graphs/causal_batch.py, remember).
Match = _Match
UUID_PATTERN = _UUID
check_description = _text
check_confidence = _confidence
check_evidence = _evidence


def _ends_of(row: Sequence[Any]) -> tuple[CausalNode, CausalNode, str | None, datetime]:
    """The two nodes, the evidence and the creation time of a written link's row."""
    a_node, b_node, evidence, created = row[6:]
    return (
        node_from_row(clean(a_node)),
        node_from_row(clean(b_node)),
        evidence,
        from_ms(int(created)),
    )
