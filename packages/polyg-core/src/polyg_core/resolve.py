"""Name resolution shared by every graph and tool.

Reads: uuid → exact name → normalised name → embedding similarity (≥ 0.75). When the
best candidates are within 0.05 of each other the resolver answers with the
candidates (`AmbiguousName`) instead of guessing; with no match it raises
`NodeNotFound` carrying the closest names.

Writes call `find(..., fuzzy=False)`: uuid, exact or normalised name, else a new
node; `similar_existing` lists the near-duplicates a write may report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from polyg_shared.results import NameMatch, SimilarNode

from polyg_core.errors import AmbiguousName, Candidate, NodeNotFound
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, SCRATCH, check_label
from polyg_core.storage.vector import knn, knn_of_node, knn_of_nodes
from polyg_core.text.normalize import normalize_description, normalize_name

if TYPE_CHECKING:
    from polyg_core.providers.embeddings.base import Embedder
    from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

MatchKind = Literal["uuid", "exact", "normalized", "embedding"]


@dataclass(frozen=True)
class NameSpec:
    """How nodes of one label are named: the display property and the normalised key."""

    label: str
    kind: str
    name_prop: str
    key_prop: str
    key_fn: Callable[[str], str]


ENTITY_NAMES = NameSpec(ENTITY, "entity", "name", "name_key", normalize_name)
CAUSAL_NAMES = NameSpec(CAUSAL, "causal", "description", "key", normalize_description)
CONCEPT_NAMES = NameSpec(CONCEPT, "concept", "name", "name_key", normalize_name)
SCRATCH_NAMES = NameSpec(SCRATCH, "node", "name", "name_key", normalize_name)


@dataclass(frozen=True)
class Resolved:
    """The node a name resolved to and how it was matched."""

    uuid: str
    name: str
    label: str
    how: MatchKind
    similarity: float
    properties: dict[str, Any]
    extra: Any = None
    """The value of `find`'s `extra` expression for this node (None for an embedding match)."""
    candidates: tuple[Candidate, ...] = ()
    """For an embedding match: the next closest nodes, best first."""

    def as_match(self, requested: str) -> NameMatch:
        """How `requested` was matched, as a read reports it."""
        by_meaning = self.how == "embedding"
        note = (
            f"no {self.label} is named {requested.strip()!r}; {self.name!r} is the closest "
            f"by meaning ({self.similarity:.2f}). If it is not the one meant, ask for a name "
            "from candidates, or by uuid."
            if by_meaning
            else None
        )
        return NameMatch(
            requested=requested,
            matched=self.name,
            uuid=self.uuid,
            how=self.how,
            score=max(0.0, min(1.0, round(self.similarity, 4))),
            by_meaning=by_meaning,
            candidates=similar_nodes(c for c in self.candidates if 0.0 <= c.similarity <= 1.0),
            note=note,
        )


@dataclass
class NameResolver:
    """Resolves user-given names to nodes.

    Args:
        store: the FalkorDB store.
        embedder: for the similarity step; without one, only exact/normalised matches.
        threshold: minimum similarity for an embedding match.
        margin: candidates within this of the best make the name ambiguous.
        max_candidates: how many candidates an error or ambiguity lists.
        near_duplicate: minimum similarity for `similar_existing` (lower than
            `threshold`: "auth servce" is 0.73 from "auth service" with MiniLM).
    """

    store: FalkorStore
    embedder: Embedder | None = None
    threshold: float = 0.75
    margin: float = 0.05
    max_candidates: int = 5
    near_duplicate: float = 0.7

    async def resolve(
        self,
        namespace: str,
        spec: NameSpec,
        name: str,
        *,
        fuzzy: bool = True,
        where: str = "",
        params: dict[str, Any] | None = None,
        extra: str = "",
    ) -> Resolved:
        """Resolve `name` to exactly one node of `spec.label`.

        `where` is an extra Cypher condition on `n` (with `params`) applied to the exact
        and normalised steps, e.g. an entity type. `extra` is a Cypher expression on `n`
        read in the same round trip as the uuid and name steps (`Resolved.extra`).

        Raises:
            NodeNotFound: nothing matches; carries the closest names.
            AmbiguousName: several nodes match about equally well.
        """
        found = await self.find(
            namespace, spec, name, fuzzy=fuzzy, where=where, params=params, extra=extra
        )
        if found is not None:
            return found
        raise NodeNotFound(spec.kind, name, await self.candidates(namespace, spec, name))

    async def find(
        self,
        namespace: str,
        spec: NameSpec,
        name: str,
        *,
        fuzzy: bool = True,
        where: str = "",
        params: dict[str, Any] | None = None,
        extra: str = "",
    ) -> Resolved | None:
        """Like `resolve`, but None when nothing matches (ambiguity still raises)."""
        check_label(spec.label)
        text = name.strip()
        if not text:
            return None
        found = await self._by_name(
            namespace, spec, name, text, where=where, params=params, extra=extra
        )
        if found is not None or not fuzzy or self.embedder is None:
            return found
        return await self._by_meaning(namespace, spec, name, text)

    async def _by_name(
        self,
        namespace: str,
        spec: NameSpec,
        name: str,
        text: str,
        *,
        where: str,
        params: dict[str, Any] | None,
        extra: str,
    ) -> Resolved | None:
        """The node whose uuid, name or normalised name is `text`, in that order."""
        condition = f" AND ({where})" if where else ""
        also = f", {extra} AS extra" if extra else ""
        key = spec.key_fn(text)
        steps = _lexical_steps(spec, key)
        # The steps in one round trip, each its own indexed branch, answered in order.
        res = await self.store.query(
            namespace,
            " UNION ALL ".join(
                f"MATCH (n:{spec.label}) WHERE {cond}{condition} "
                f"RETURN {i} AS step, {props('n')} AS node{also} LIMIT $lim"
                for i, (_, cond) in enumerate(steps)
            ),
            {**(params or {}), "v": text, "k": key, "lim": self.max_candidates + 1},
            read_only=True,
        )
        by_step: list[list[tuple[dict[str, Any], Any]]] = [[] for _ in steps]
        for row in res.rows:
            by_step[int(row[0])].append((clean(row[1]), row[2] if extra else None))
        for (how, _), rows in zip(steps, by_step, strict=True):
            if len(rows) == 1:
                node, value = rows[0]
                return self._resolved(spec, node, how, 1.0, value)
            if len(rows) > 1:
                cands = [self._candidate(spec, r, 1.0) for r, _ in rows[: self.max_candidates]]
                raise AmbiguousName(spec.kind, name, cands)
        return None

    async def _by_meaning(
        self, namespace: str, spec: NameSpec, name: str, text: str
    ) -> Resolved | None:
        """The node most similar to `text` by embedding, when it is clearly the closest."""
        scored = await self._similar(namespace, spec, text)
        if not scored or scored[0].similarity < self.threshold:
            partial = await self._partial(namespace, spec, text)
            if len(partial) > 1:
                raise AmbiguousName(spec.kind, name, partial[: self.max_candidates])
            return None
        best = scored[0]
        close = [
            c
            for c in scored
            if c.similarity >= self.threshold and best.similarity - c.similarity <= self.margin
        ]
        if len(close) > 1:
            raise AmbiguousName(spec.kind, name, close[: self.max_candidates])
        rows = await self.store.query(
            namespace,
            f"MATCH (n:{spec.label} {{uuid: $u}}) RETURN {props('n')}",
            {"u": best.uuid},
            read_only=True,
        )
        if not rows.rows:
            return None
        found = self._resolved(spec, clean(rows.rows[0][0]), "embedding", best.similarity)
        others = tuple(c for c in scored if c.uuid != best.uuid)[: self.max_candidates]
        return replace(found, candidates=others)

    async def candidates(
        self, namespace: str, spec: NameSpec, name: str, limit: int | None = None
    ) -> list[Candidate]:
        """The closest nodes to `name`, best first (embedding similarity, then partial names)."""
        limit = limit or self.max_candidates
        scored = await self._similar(namespace, spec, name) if self.embedder else []
        seen = {c.uuid for c in scored}
        for c in await self._partial(namespace, spec, name):
            if c.uuid not in seen:
                scored.append(c)
                seen.add(c.uuid)
        scored.sort(key=lambda c: c.similarity, reverse=True)
        return scored[:limit]

    async def similar_existing(
        self, namespace: str, spec: NameSpec, name: str, *, exclude: str | None = None
    ) -> list[Candidate]:
        """Stored nodes close in meaning to `name` (other than `exclude`), best first.

        Writes never decide identity by meaning; they report these near-duplicates
        so the caller can merge on purpose. Empty without an embedder.
        """
        if self.embedder is None or not name.strip():
            return []
        hits = await self._similar(namespace, spec, name.strip())
        return self.near_duplicates(hits, exclude=() if exclude is None else (exclude,))

    async def similar_to_written(
        self, namespace: str, spec: NameSpec, uuid: str, name: str
    ) -> list[Candidate]:
        """`similar_existing(name, exclude=uuid)` for a node just written with `name`'s vector.

        Searches with the node's stored vector, so the name is not embedded a second
        time; embeds it only when the node has no vector.
        """
        if self.embedder is None or not name.strip():
            return []
        hits = await knn_of_node(
            self.store,
            namespace,
            spec.label,
            uuid,
            self.max_candidates + 3,
            fields=[spec.name_prop],
        )
        if not hits:
            return await self.similar_existing(namespace, spec, name, exclude=uuid)
        return self.near_duplicates(
            (self._candidate(spec, h.properties, h.similarity) for h in hits), exclude=(uuid,)
        )

    async def similar_to_created(
        self, namespace: str, spec: NameSpec, uuids: Sequence[str]
    ) -> dict[str, list[Candidate]]:
        """`similar_to_written` for many nodes a write created, in one k-NN query with their
        stored vectors: node uuid to its near-duplicates (the others of `uuids` among
        them). Empty without an embedder; a node without a vector has none."""
        if self.embedder is None or not uuids:
            return {}
        hits = await knn_of_nodes(
            self.store,
            namespace,
            spec.label,
            uuids,
            self.max_candidates + 3,
            fields=[spec.name_prop],
        )
        return {
            uid: self.near_duplicates(
                (self._candidate(spec, h.properties, h.similarity) for h in hits.get(uid, [])),
                exclude=(uid,),
            )
            for uid in uuids
        }

    def near_duplicates(
        self, hits: Iterable[Candidate], *, exclude: Container[str] = ()
    ) -> list[Candidate]:
        """The rule of `similar_existing`: of `hits`, the nodes other than `exclude` at or
        above `near_duplicate`, once each, best first, at most `max_candidates`."""
        best: dict[str, Candidate] = {}
        for c in hits:
            if c.uuid in exclude or c.similarity < self.near_duplicate:
                continue
            if c.uuid not in best or c.similarity > best[c.uuid].similarity:
                best[c.uuid] = c
        ranked = sorted(best.values(), key=lambda c: c.similarity, reverse=True)
        return ranked[: self.max_candidates]

    async def _similar(self, namespace: str, spec: NameSpec, name: str) -> list[Candidate]:
        assert self.embedder is not None
        vector = (await self.embedder.embed([name]))[0]
        # A namespace of another model answers with the error writes give, not FalkorDB's.
        # The store loads the Redis client: imported on first use, so listing the tools
        # (which reads this module's label lists) loads no store.
        from polyg_core.storage.store import check_readable

        if not await check_readable(self.store, namespace, self.embedder.model_name, len(vector)):
            return []
        hits = await knn(
            self.store, namespace, spec.label, vector.tolist(), self.max_candidates + 3
        )
        return [self._candidate(spec, h.properties, h.similarity) for h in hits]

    async def _partial(self, namespace: str, spec: NameSpec, name: str) -> list[Candidate]:
        key = spec.key_fn(name)
        if len(key) < 3:
            return []
        res = await self.store.query(
            namespace,
            f"MATCH (n:{spec.label}) WHERE n.{spec.key_prop} CONTAINS $k RETURN {props('n')} LIMIT $lim",
            {"k": key, "lim": self.max_candidates},
            read_only=True,
        )
        out: list[Candidate] = []
        for row in res.rows:
            node = clean(row[0])
            full = str(node.get(spec.key_prop, "")) or key
            out.append(self._candidate(spec, node, round(len(key) / max(len(full), 1), 3)))
        out.sort(key=lambda c: c.similarity, reverse=True)
        return out

    @staticmethod
    def _candidate(spec: NameSpec, node: dict[str, Any], similarity: float) -> Candidate:
        return Candidate(
            uuid=str(node.get("uuid", "")),
            name=str(node.get(spec.name_prop, "")),
            label=spec.label,
            similarity=round(float(similarity), 4),
        )

    @staticmethod
    def _resolved(
        spec: NameSpec, node: dict[str, Any], how: MatchKind, similarity: float, extra: Any = None
    ) -> Resolved:
        return Resolved(
            uuid=str(node.get("uuid", "")),
            name=str(node.get(spec.name_prop, "")),
            label=spec.label,
            how=how,
            similarity=similarity,
            properties=node,
            extra=extra,
        )


def similar_nodes(candidates: Iterable[Candidate]) -> list[SimilarNode]:
    """Near-duplicates (`NameResolver.near_duplicates`) as a write reports them."""
    return [
        SimilarNode(uuid=c.uuid, name=c.name, label=c.label, similarity=c.similarity)
        for c in candidates
    ]


def _lexical_steps(spec: NameSpec, key: str) -> list[tuple[MatchKind, str]]:
    """The uuid, exact and normalised-name conditions, in the order they are tried."""
    # The exact step also filters on the normalised key (an exact name has that key):
    # the key has a range index, the display name has none, so this stays an index
    # lookup instead of a scan of the label.
    exact = f"n.{spec.name_prop} = $v"
    steps: list[tuple[MatchKind, str]] = [
        ("uuid", "n.uuid = $v"),
        ("exact", f"n.{spec.key_prop} = $k AND {exact}" if key else exact),
    ]
    if key:
        # Nodes with the exact name are left out: this step only counts when the exact
        # step found none, so no answer changes, and a hit (with its `extra`) is not
        # read twice.
        steps.append(
            (
                "normalized",
                f"n.{spec.key_prop} = $k AND "
                f"(n.{spec.name_prop} IS NULL OR n.{spec.name_prop} <> $v)",
            )
        )
    return steps
