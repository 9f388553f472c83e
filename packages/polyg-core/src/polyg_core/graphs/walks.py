"""The read steps recall takes through the memory graphs: one method per step.

Recall's expansion views (`polyg_core.recall.views`) and personalized PageRank
(`polyg_core.recall.ppr`) walk the entity, temporal and causal graphs and their
cross-links hop by hop. Their Cypher lives here, beside the graphs that write what it
reads, with labels and relationship types from `storage.schema`. Every query reads only
and is anchored on indexed uuids (or internal ids) before it walks: an unanchored
`x.uuid IN $ids` scans every node.

Rows come back as plain tuples of properties (embeddings left out); turning them into
recall's nodes is the caller's business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from polyg_core.graphs.relation_time import RELATION_HELD, held_params
from polyg_core.storage.cypher import props
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    MEMORY_LABELS,
    R_ABOUT,
    R_BEFORE,
    R_CAUSES,
    R_RELATES,
    X_AFFECTS,
    X_INVOLVES,
    X_REFERS_TO,
    X_REPRESENTS,
    check_label,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.write_stamp import StampedReads

Row = dict[str, Any]
"""A node's properties as projected (`props`), embedding left out."""

CausalWay = Literal["up", "down"]
EntityLink = Literal["X_INVOLVES", "X_AFFECTS"]

_LINKS: Mapping[str, str] = {"X_INVOLVES": X_INVOLVES, "X_AFFECTS": X_AFFECTS}

# An event in [$start, $end] (either end open when null).
_EVENT_IN_WINDOW = (
    "($start IS NULL OR e.occurred_at >= $start) AND ($end IS NULL OR e.occurred_at <= $end)"
)
# A fact valid at $asof (no timeframe), or at some time in [$start, $end].
_FACT_VALID_AT = "f.valid_from <= $asof AND (f.valid_to IS NULL OR f.valid_to > $asof)"
_FACT_VALID_DURING = (
    "($end IS NULL OR f.valid_from <= $end) "
    "AND ($start IS NULL OR f.valid_to IS NULL OR f.valid_to > $start)"
)


def _fact_validity(start: int | None, end: int | None, asof: int) -> tuple[str, dict[str, Any]]:
    if start is None and end is None:
        return _FACT_VALID_AT, {"asof": asof, "start": None, "end": None}
    return _FACT_VALID_DURING, {"start": start, "end": end}


# The single reads below, written once. A batched read joins them with UNION ALL: `part`
# opens a branch's columns with its marker ("0 AS part, "), `node` names the node column
# (" AS node") and `extra` completes the columns of a branch that has fewer.
_RELATIONS_HELD = (
    f"MATCH (a:{ENTITY})-[r:{R_RELATES}]-(b:{ENTITY}) WHERE a.uuid IN $ids AND {RELATION_HELD} "
)


def _events_involving(part: str = "", node: str = "", ent: str = "") -> str:
    return (
        f"MATCH (n:{ENTITY}) WHERE n.uuid IN $ents WITH n "
        f"MATCH (e:{EVENT})-[:{X_INVOLVES}]->(n) WHERE {_EVENT_IN_WINDOW} "
        f"RETURN {part}{props('e')}{node}, n.uuid{ent} ORDER BY e.occurred_at DESC LIMIT $cap"
    )


def _events(part: str = "", node: str = "", extra: str = "") -> str:
    return (
        f"MATCH (e:{EVENT}) WHERE e.uuid IN $evs AND {_EVENT_IN_WINDOW} "
        f"RETURN {part}{props('e')}{node}{extra}"
    )


def _facts_involving(valid: str, part: str = "", node: str = "", ent: str = "") -> str:
    return (
        f"MATCH (n:{ENTITY}) WHERE n.uuid IN $ents WITH n "
        f"MATCH (f:{FACT})-[:{X_INVOLVES}]->(n) WHERE {valid} "
        f"RETURN {part}{props('f')}{node}, n.uuid{ent} LIMIT $cap"
    )


def _facts(valid: str, part: str = "", node: str = "", extra: str = "") -> str:
    return (
        f"MATCH (f:{FACT}) WHERE f.uuid IN $facts AND {valid} "
        f"RETURN {part}{props('f')}{node}{extra}"
    )


def _causal_nodes(part: str = "", node: str = "", extra: str = "") -> str:
    return f"MATCH (c:{CAUSAL}) WHERE c.uuid IN $ids RETURN {part}{props('c')}{node}{extra}"


def _causal_step(way: CausalWay) -> str:
    """The pattern of one C_CAUSES hop from `a` to its cause (`up`) or effect (`down`) `b`."""
    if way == "up":
        return f"(b:{CAUSAL})-[r:{R_CAUSES}]->(a:{CAUSAL})"
    return f"(a:{CAUSAL})-[r:{R_CAUSES}]->(b:{CAUSAL})"


def _causal_touching(part: str = "", node: str = "") -> str:
    return (
        f"CALL {{ MATCH (t:{ENTITY}) WHERE t.uuid IN $ents WITH t "
        f"MATCH (c:{CAUSAL})-[:{X_AFFECTS}]->(t) RETURN c, t.uuid AS tu "
        f"UNION MATCH (t:{EVENT}) WHERE t.uuid IN $evs WITH t "
        f"MATCH (c:{CAUSAL})-[:{X_REFERS_TO}]->(t) RETURN c, t.uuid AS tu }} "
        f"RETURN {part}{props('c')}{node}, tu LIMIT $cap"
    )


@dataclass
class GraphWalks:
    """Read-only traversal steps over one store's memory graphs (see module doc).

    With `reads` (replies kept under the namespace's write stamp, `storage.write_stamp`),
    the reads by internal id that personalized PageRank makes answer from what an earlier
    recall read, as long as nothing was written since: the same rows in the same order.
    """

    store: FalkorStore
    reads: StampedReads | None = None

    async def _rows(self, namespace: str, cypher: str, params: Mapping[str, Any]) -> list[Any]:
        res = await self.store.query(namespace, cypher, dict(params), read_only=True)
        return list(res.rows)

    # -- entity graph -------------------------------------------------------------------------

    async def entities(self, namespace: str, ids: Sequence[str]) -> list[Row]:
        """The entities with these uuids."""
        rows = await self._rows(
            namespace,
            f"MATCH (e:{ENTITY}) WHERE e.uuid IN $ids RETURN {props('e')}",
            {"ids": list(ids)},
        )
        return [raw for (raw,) in rows]

    async def relations_held(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        now: int,
        cap: int,
    ) -> list[tuple[str, bool, str, Row]]:
        """One hop over `E_RELATES` from the entities `ids`, walking only relations that
        held in `[start, end]` (or at `now` without either): (from uuid, whether the
        relation leaves it, relationship type, the entity reached)."""
        rows = await self._rows(
            namespace,
            _RELATIONS_HELD
            + f"RETURN a.uuid, startNode(r) = a, r.relationship_type, {props('b')} LIMIT $cap",
            {"ids": list(ids), "cap": cap, **held_params(start, end, now)},
        )
        return [(str(a), bool(out), str(rel), raw) for a, out, rel, raw in rows]

    async def entities_and_relations(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        now: int,
        cap: int,
    ) -> tuple[list[Row], list[tuple[str, bool, str, Row]]]:
        """`entities(ids)` and the first hop `relations_held(ids, ...)` in one query: the
        entity view's first two reads, which depend on nothing but the seeds."""
        rows = await self._rows(
            namespace,
            f"CALL {{ MATCH (e:{ENTITY}) WHERE e.uuid IN $ids "
            f"RETURN 0 AS part, null AS a, null AS out, null AS rel, {props('e')} AS node "
            f"UNION ALL {_RELATIONS_HELD}RETURN 1 AS part, a.uuid AS a, startNode(r) = a AS out, "
            f"r.relationship_type AS rel, {props('b')} AS node LIMIT $cap }} "
            "RETURN part, a, out, rel, node",
            {"ids": list(ids), "cap": cap, **held_params(start, end, now)},
        )
        found = [raw for part, _, _, _, raw in rows if part == 0]
        hop = [(str(a), bool(out), str(rel), raw) for part, a, out, rel, raw in rows if part == 1]
        return found, hop

    async def entities_represented(
        self, namespace: str, concept_ids: Sequence[str], memory_ids: Sequence[str], limit: int
    ) -> list[tuple[str, str, Row]]:
        """Entities the concepts `concept_ids` represent, and those represented by the
        concepts the memories `memory_ids` are about: (concept or memory uuid, concept
        uuid, entity)."""
        rows = await self._rows(
            namespace,
            f"CALL {{ MATCH (s:{CONCEPT}) WHERE s.uuid IN $cids WITH s "
            f"MATCH (s)-[:{X_REPRESENTS}]->(e:{ENTITY}) RETURN s.uuid AS src, s.uuid AS cu, e "
            f"UNION MATCH (s:{MEMORY}) WHERE s.uuid IN $mids WITH s "
            f"MATCH (s)-[:{R_ABOUT}]->(c:{CONCEPT})-[:{X_REPRESENTS}]->(e:{ENTITY}) "
            "RETURN s.uuid AS src, c.uuid AS cu, e } "
            f"RETURN src, cu, {props('e')} LIMIT {int(limit)}",
            {"cids": list(concept_ids), "mids": list(memory_ids)},
        )
        return [(str(src), str(cu), raw) for src, cu, raw in rows]

    async def linked_entities(
        self, namespace: str, label: str, ids: Sequence[str], link: EntityLink, cap: int
    ) -> list[tuple[str, Row]]:
        """The entities the `label` nodes `ids` point to over `link`: (node uuid, entity)."""
        rows = await self._rows(
            namespace,
            f"MATCH (x:{check_label(label)}) WHERE x.uuid IN $ids WITH x "
            f"MATCH (x)-[:{_LINKS[link]}]->(n:{ENTITY}) RETURN x.uuid, {props('n')} LIMIT $cap",
            {"ids": list(ids), "cap": cap},
        )
        return [(str(src), raw) for src, raw in rows]

    # -- temporal graph -----------------------------------------------------------------------

    async def events_involving(
        self,
        namespace: str,
        entity_ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        cap: int,
    ) -> list[tuple[Row, str]]:
        """Events in `[start, end]` that involve the entities, newest first: (event,
        entity uuid)."""
        rows = await self._rows(
            namespace,
            _events_involving(),
            {"ents": list(entity_ids), "start": start, "end": end, "cap": cap},
        )
        return [(raw, str(ent)) for raw, ent in rows]

    async def events(
        self, namespace: str, ids: Sequence[str], *, start: int | None, end: int | None
    ) -> list[Row]:
        """The events with these uuids that fall in `[start, end]`."""
        rows = await self._rows(
            namespace,
            _events(),
            {"evs": list(ids), "start": start, "end": end},
        )
        return [raw for (raw,) in rows]

    async def events_of_seeds(
        self,
        namespace: str,
        entity_ids: Sequence[str],
        event_ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        cap: int,
    ) -> tuple[list[tuple[Row, str]], list[Row]]:
        """`events_involving(entity_ids, ...)` and `events(event_ids, ...)` in one query,
        each answered as on its own (an empty list answers nothing)."""
        rows = await self._rows(
            namespace,
            "CALL { "
            + _events_involving("0 AS part, ", " AS node", " AS ent")
            + " UNION ALL "
            + _events("1 AS part, ", " AS node", ", null AS ent")
            + " } RETURN part, node, ent",
            {
                "ents": list(entity_ids),
                "evs": list(event_ids),
                "start": start,
                "end": end,
                "cap": cap,
            },
        )
        involving = [(raw, str(ent)) for part, raw, ent in rows if part == 0]
        return involving, [raw for part, raw, _ in rows if part == 1]

    async def events_in_window(
        self, namespace: str, *, start: int | None, end: int | None, cap: int
    ) -> list[Row]:
        """The earliest `cap` events in `[start, end]`."""
        rows = await self._rows(
            namespace,
            f"MATCH (e:{EVENT}) WHERE {_EVENT_IN_WINDOW} RETURN {props('e')} "
            "ORDER BY e.occurred_at ASC LIMIT $cap",
            {"start": start, "end": end, "cap": cap},
        )
        return [raw for (raw,) in rows]

    async def events_next_to(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        cap: int,
    ) -> list[tuple[str, Row]]:
        """One hop over `T_BEFORE` (either way) from the events `ids`, staying in
        `[start, end]`: (from uuid, event reached)."""
        rows = await self._rows(
            namespace,
            f"MATCH (a:{EVENT}) WHERE a.uuid IN $ids WITH a "
            f"MATCH (a)-[:{R_BEFORE}]-(e:{EVENT}) WHERE {_EVENT_IN_WINDOW} "
            f"RETURN a.uuid, {props('e')} LIMIT $cap",
            {"ids": list(ids), "start": start, "end": end, "cap": cap},
        )
        return [(str(a), raw) for a, raw in rows]

    async def facts_involving(
        self,
        namespace: str,
        entity_ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        asof: int,
        cap: int,
    ) -> list[tuple[Row, str]]:
        """Facts involving the entities, valid at some time in `[start, end]` (without
        either: valid at `asof`): (fact, entity uuid)."""
        valid, params = _fact_validity(start, end, asof)
        rows = await self._rows(
            namespace,
            _facts_involving(valid),
            {"ents": list(entity_ids), "cap": cap, **params},
        )
        return [(raw, str(ent)) for raw, ent in rows]

    async def facts(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        asof: int,
    ) -> list[Row]:
        """The facts with these uuids, valid as `facts_involving` asks."""
        valid, params = _fact_validity(start, end, asof)
        rows = await self._rows(
            namespace,
            _facts(valid),
            {"facts": list(ids), **params},
        )
        return [raw for (raw,) in rows]

    async def facts_of_seeds(
        self,
        namespace: str,
        entity_ids: Sequence[str],
        fact_ids: Sequence[str],
        *,
        start: int | None,
        end: int | None,
        asof: int,
        cap: int,
    ) -> tuple[list[tuple[Row, str]], list[Row]]:
        """`facts_involving(entity_ids, ...)` and `facts(fact_ids, ...)` in one query, each
        answered as on its own (an empty list answers nothing)."""
        valid, params = _fact_validity(start, end, asof)
        rows = await self._rows(
            namespace,
            "CALL { "
            + _facts_involving(valid, "0 AS part, ", " AS node", " AS ent")
            + " UNION ALL "
            + _facts(valid, "1 AS part, ", " AS node", ", null AS ent")
            + " } RETURN part, node, ent",
            {"ents": list(entity_ids), "facts": list(fact_ids), "cap": cap, **params},
        )
        involving = [(raw, str(ent)) for part, raw, ent in rows if part == 0]
        return involving, [raw for part, raw, _ in rows if part == 1]

    # -- causal graph -------------------------------------------------------------------------

    async def causal_nodes(self, namespace: str, ids: Sequence[str]) -> list[Row]:
        """The causal nodes with these uuids."""
        rows = await self._rows(
            namespace,
            _causal_nodes(),
            {"ids": list(ids)},
        )
        return [raw for (raw,) in rows]

    async def causal_touching(
        self, namespace: str, entity_ids: Sequence[str], event_ids: Sequence[str], cap: int
    ) -> list[tuple[Row, str]]:
        """Causal nodes that affect the entities or refer to the events: (causal node,
        entity or event uuid)."""
        rows = await self._rows(
            namespace,
            _causal_touching(),
            {"ents": list(entity_ids), "evs": list(event_ids), "cap": cap},
        )
        return [(raw, str(target)) for raw, target in rows]

    async def causal_starts(
        self,
        namespace: str,
        causal_ids: Sequence[str],
        entity_ids: Sequence[str],
        event_ids: Sequence[str],
        cap: int,
    ) -> tuple[list[Row], list[tuple[Row, str]]]:
        """`causal_nodes(causal_ids)` and `causal_touching(entity_ids, event_ids, cap)` in
        one query, each answered as on its own (empty lists answer nothing)."""
        rows = await self._rows(
            namespace,
            "CALL { "
            + _causal_nodes("0 AS part, ", " AS node", ", null AS tu")
            + " UNION ALL "
            + _causal_touching("1 AS part, ", " AS node")
            + " } RETURN part, node, tu",
            {
                "ids": list(causal_ids),
                "ents": list(entity_ids),
                "evs": list(event_ids),
                "cap": cap,
            },
        )
        found = [raw for part, raw, _ in rows if part == 0]
        return found, [(raw, str(target)) for part, raw, target in rows if part == 1]

    async def causal_steps(
        self, namespace: str, ids: Sequence[str], way: CausalWay, cap: int
    ) -> list[tuple[str, float | None, Row]]:
        """One hop over `C_CAUSES` from the causal nodes `ids`: to their causes (`up`) or
        their effects (`down`): (from uuid, the link's confidence, node reached)."""
        rows = await self._rows(
            namespace,
            f"MATCH {_causal_step(way)} WHERE a.uuid IN $ids "
            f"RETURN a.uuid, r.confidence, {props('b')} LIMIT $cap",
            {"ids": list(ids), "cap": cap},
        )
        return [(str(a), float(conf) if conf is not None else None, raw) for a, conf, raw in rows]

    async def causal_steps_both(
        self, namespace: str, ids: Sequence[str], cap: int
    ) -> tuple[list[tuple[str, float | None, Row]], list[tuple[str, float | None, Row]]]:
        """`causal_steps(ids, "up", cap)` and `causal_steps(ids, "down", cap)` in one query:
        the first hop of a walk both ways."""
        branches = [
            f"MATCH {_causal_step(way)} WHERE a.uuid IN $ids RETURN {part} AS part, "
            f"a.uuid AS a, r.confidence AS conf, {props('b')} AS node LIMIT $cap"
            for part, way in enumerate(("up", "down"))
        ]
        rows = await self._rows(
            namespace,
            f"CALL {{ {' UNION ALL '.join(branches)} }} RETURN part, a, conf, node",
            {"ids": list(ids), "cap": cap},
        )
        steps: tuple[list[tuple[str, float | None, Row]], ...] = ([], [])
        for part, a, conf, raw in rows:
            steps[int(part)].append((str(a), float(conf) if conf is not None else None, raw))
        return steps[0], steps[1]

    async def causal_targets(
        self, namespace: str, ids: Sequence[str], cap: int
    ) -> list[tuple[str, str, str, Row]]:
        """What the causal nodes `ids` affect (entities) or refer to (events): (causal
        uuid, link type, label of the target, target)."""
        rows = await self._rows(
            namespace,
            f"MATCH (c:{CAUSAL})-[r:{X_AFFECTS}|{X_REFERS_TO}]->(t) WHERE c.uuid IN $ids "
            f"RETURN c.uuid, type(r), labels(t)[0], {props('t')} LIMIT $cap",
            {"ids": list(ids), "cap": cap},
        )
        return [(str(src), str(rel), str(label), raw) for src, rel, label, raw in rows]

    # -- semantic graph -------------------------------------------------------------------------

    async def memory_similarity(
        self, namespace: str, ids: Sequence[str], vector: Sequence[float]
    ) -> list[tuple[str, float]]:
        """Cosine similarity of the memories `ids` (those with a vector) to `vector`, computed
        in the database: (memory uuid, similarity in [-1, 1]). Only the given memories are
        read, through the uuid index; no vector leaves the database."""
        if not ids:
            return []
        res = await self.store.query(
            namespace,
            f"MATCH (m:{MEMORY}) WHERE m.uuid IN $ids AND m.embedding IS NOT NULL "
            "RETURN m.uuid, 1.0 - vec.cosineDistance(m.embedding, vecf32($v))",
            {"ids": list(ids), "v": list(vector)},
            read_only=True,
        )
        return [(str(uuid), float(sim)) for uuid, sim in res.rows]

    # -- any graph, by internal id (personalized PageRank) -------------------------------------

    async def seed_fan_in(
        self, namespace: str, seeds: Mapping[str, Sequence[str]]
    ) -> list[tuple[str, int, int]]:
        """For seeds given by label -> uuids: (uuid, internal id, how many memories,
        events/facts and causal nodes point at it over `S_ABOUT`, `X_INVOLVES` or
        `X_AFFECTS`). Labels outside the memory graphs are left out."""
        parts: list[str] = []
        params: dict[str, Any] = {}
        for i, (label, uuids) in enumerate(sorted(seeds.items())):
            if not uuids or label not in MEMORY_LABELS:
                continue
            params[f"ids{i}"] = list(uuids)
            parts.append(
                f"MATCH (n:{label}) WHERE n.uuid IN $ids{i} "
                f"OPTIONAL MATCH (n)<-[r:{X_INVOLVES}|{R_ABOUT}|{X_AFFECTS}]-() "
                "RETURN n.uuid AS uuid, id(n) AS id, count(r) AS fan_in"
            )
        if not parts:
            return []
        # The rows come in the order of FalkorDB's grouping (a hash of the uuid and id),
        # which decides the order PPR numbers its seeds: only the same question's reply
        # is reused, whole.
        key = ("seed_fan_in", tuple((k, tuple(v)) for k, v in params.items()))
        kept: list[tuple[str, int, int]] | None = self.reads.get(key) if self.reads else None
        if kept is not None:
            return list(kept)
        rows = await self._rows(namespace, " UNION ALL ".join(parts), params)
        found = [(str(uuid), int(node_id), int(fan_in)) for uuid, node_id, fan_in in rows]
        if self.reads is not None:
            self.reads.put(key, found)
        return list(found)

    async def links_by_id(
        self, namespace: str, node_ids: Sequence[int]
    ) -> list[tuple[int, list[Sequence[Any]]]]:
        """Every edge of the nodes with these internal ids, of any type: (node id,
        [[other node's id (int), whether the edge leaves the node (bool), type (str), its
        confidence or score, else 1.0]])."""
        # The rows come in the order of FalkorDB's grouping (a hash of the node id), and
        # that order decides which nodes a capped neighbourhood keeps: a reply is reused
        # only for the same ids in the same order, never pieced together per node.
        key = ("links_by_id", tuple(node_ids))
        kept: list[tuple[int, list[Sequence[Any]]]] | None = (
            self.reads.get(key) if self.reads else None
        )
        if kept is not None:
            return list(kept)
        rows = await self._rows(
            namespace,
            "UNWIND $ids AS i MATCH (a) WHERE id(a) = i MATCH (a)-[r]-(b) "
            "RETURN id(a), collect([id(b), startNode(r) = a, type(r), "
            "coalesce(r.confidence, r.score, 1.0)])",
            {"ids": list(node_ids)},
        )
        # The reply's ids are ints, the direction a bool and the type text already (one
        # PPR question reads about a thousand of these links): they are passed on as read.
        found = [(a, links) for a, links in rows]
        if self.reads is not None:
            self.reads.put(key, found)
        return list(found)

    async def nodes_by_id(
        self, namespace: str, node_ids: Sequence[int]
    ) -> list[tuple[int, list[str], Row]]:
        """The nodes with these internal ids: (id, labels, properties), in the order of
        `node_ids`, up to the first id of no node (FalkorDB 4.16 stops its answer there)."""
        ids = list(node_ids)
        reads = self.reads
        if reads is None:
            return await self._nodes_by_id(namespace, ids)
        # Each node is kept on its own and only the ones not kept yet are read: FalkorDB
        # answers `UNWIND` in its order, so the kept rows in the order asked are its answer.
        known: dict[int, tuple[int, list[str], Row] | None] = {
            i: reads.get(("node", i)) for i in ids if ("node", i) in reads
        }
        missing = list(dict.fromkeys(i for i in ids if i not in known))
        if missing:
            rows = await self._nodes_by_id(namespace, missing)
            if any(row[0] != i for i, row in zip(missing, rows, strict=False)):
                return await self._nodes_by_id(namespace, ids)  # not in the order asked
            for i, row in zip(missing, rows, strict=False):
                known[i] = row
                reads.put(("node", i), row)
            if len(rows) < len(missing):
                # The first id not answered is of no node; those after it were not looked
                # up. Rare (a node deleted since the walk read it): FalkorDB's own answer.
                reads.put(("node", missing[len(rows)]), None)
                return await self._nodes_by_id(namespace, ids)
        out: list[tuple[int, list[str], Row]] = []
        for i in ids:
            row = known[i]
            if row is None:
                break
            out.append(row)
        return out

    async def _nodes_by_id(
        self, namespace: str, node_ids: list[int]
    ) -> list[tuple[int, list[str], Row]]:
        rows = await self._rows(
            namespace,
            f"UNWIND $ids AS i MATCH (n) WHERE id(n) = i RETURN id(n), labels(n), {props('n')}",
            {"ids": node_ids},
        )
        return [(int(node_id), [str(x) for x in labels], raw) for node_id, labels, raw in rows]
