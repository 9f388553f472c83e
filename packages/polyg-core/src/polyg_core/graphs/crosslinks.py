"""Typed links between the four graphs, and clean-up across them.

The allowed links (source label → target label):

* `X_REPRESENTS`: S_Concept → E_Entity
* `X_INVOLVES`: T_Event or T_Fact → E_Entity
* `X_AFFECTS`: C_Node → E_Entity
* `X_REFERS_TO`: C_Node → T_Event

Links are created with MERGE (idempotent) and disappear with their endpoints:
nodes are always removed with DETACH DELETE, so clearing one graph leaves no
link pointing into it and touches no node of another graph.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from polyg_shared import ClearResult, CrossLink, CrossLinkType, GraphKind, NodeRef

from polyg_core.errors import InvalidInput, NodeNotFound, check_choice
from polyg_core.graphs.base import iso_ms, now_ms
from polyg_core.graphs.entity import delete_entity
from polyg_core.graphs.orphans import remove_orphans
from polyg_core.graphs.semantic import hit_text
from polyg_core.graphs.temporal_queries import DELETE_EVENT
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    CROSS_LINKS,
    ENTITY,
    EVENT,
    FACT,
    GRAPH_OF_LABEL,
    LABELS_OF_GRAPH,
    MEMORY_LABELS,
)
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

GraphName = Literal["semantic", "temporal", "causal", "entity", "all"]

ALLOWED: Final[Mapping[CrossLinkType, tuple[tuple[str, ...], str]]] = {
    CrossLinkType.REPRESENTS: ((CONCEPT,), ENTITY),
    CrossLinkType.INVOLVES: ((EVENT, FACT), ENTITY),
    CrossLinkType.AFFECTS: ((CAUSAL,), ENTITY),
    CrossLinkType.REFERS_TO: ((CAUSAL,), EVENT),
}
"""Which labels each cross-link joins: (allowed source labels, target label)."""


def _ref(label: str, node: Mapping[str, Any]) -> NodeRef:
    return NodeRef(
        uuid=str(node["uuid"]),
        label=label,
        name=hit_text(label, node)[:200] or str(node["uuid"]),
        graph=GraphKind(GRAPH_OF_LABEL[label]),
    )


@dataclass
class CrossLinker:
    """Creates, lists and cleans up links between the graphs of a namespace.

    Args:
        store: the FalkorDB store.
    """

    store: FalkorStore

    async def label_of(self, namespace: str, uuid: str) -> str | None:
        """The memory-graph label of the node with this uuid, or None (one indexed query)."""
        union = " UNION ALL ".join(
            f"MATCH (n:{label} {{uuid: $u}}) RETURN '{label}' AS label" for label in MEMORY_LABELS
        )
        res = await self.store.query(namespace, union, {"u": uuid}, read_only=True)
        return str(res.rows[0][0]) if res.rows else None

    async def _label(self, namespace: str, uuid: str, what: str) -> str:
        label = await self.label_of(namespace, uuid)
        if label is None:
            raise NodeNotFound(what, uuid)
        return label

    async def link(
        self, namespace: str, link_type: CrossLinkType | str, source_uuid: str, target_uuid: str
    ) -> bool:
        """Create a cross-link; linking the same pair again changes nothing.

        Returns:
            True when the link was created, False when it already existed.

        Raises:
            InvalidInput: an unknown link type, or nodes of labels this type does not join.
            NodeNotFound: an end does not exist.
        """
        kind = check_choice(CrossLinkType, link_type, "cross-link type")
        sources, target = ALLOWED[kind]
        src_label = await self._label(namespace, source_uuid, "source node")
        dst_label = await self._label(namespace, target_uuid, "target node")
        if src_label not in sources or dst_label != target:
            raise InvalidInput(
                f"{kind.value} joins {' or '.join(sources)} → {target}, but the source is a "
                f"{src_label} and the target a {dst_label}; pick the link type that fits "
                "(X_REPRESENTS concept→entity, X_INVOLVES event/fact→entity, "
                "X_AFFECTS causal→entity, X_REFERS_TO causal→event)"
            )
        now = now_ms()
        res = await self.store.query(
            namespace,
            f"MATCH (s:{src_label} {{uuid: $s}}) MATCH (t:{dst_label} {{uuid: $t}}) "
            f"MERGE (s)-[r:{kind.value}]->(t) "
            "ON CREATE SET r.created_at = $now, r.created_at_iso = $iso RETURN count(r)",
            {"s": source_uuid, "t": target_uuid, "now": now, "iso": iso_ms(now)},
        )
        return res.relationships_created > 0

    async def unlink(
        self, namespace: str, link_type: CrossLinkType | str, source_uuid: str, target_uuid: str
    ) -> bool:
        """Remove one cross-link; False when it did not exist."""
        kind = CrossLinkType(link_type)
        sources, target = ALLOWED[kind]
        src_label = await self.label_of(namespace, source_uuid)
        if src_label not in sources:
            return False
        res = await self.store.query(
            namespace,
            f"MATCH (:{src_label} {{uuid: $s}})-[r:{kind.value}]->(:{target} {{uuid: $t}}) "
            "DELETE r",
            {"s": source_uuid, "t": target_uuid},
        )
        return res.relationships_deleted > 0

    async def links_of(self, namespace: str, uuid: str) -> list[CrossLink]:
        """Every cross-link from or to a node.

        Raises:
            NodeNotFound: no memory-graph node has this uuid.
        """
        label = await self._label(namespace, uuid, "node")
        res = await self.store.query(
            namespace,
            f"MATCH (n:{label} {{uuid: $u}})-[r]->(m) WHERE type(r) IN $types "
            "RETURN type(r) AS t, n.uuid AS s, m.uuid AS d "
            f"UNION ALL MATCH (m)-[r]->(n:{label} {{uuid: $u}}) WHERE type(r) IN $types "
            "RETURN type(r) AS t, m.uuid AS s, n.uuid AS d",
            {"u": uuid, "types": list(CROSS_LINKS)},
            read_only=True,
        )
        links = [
            CrossLink(type=CrossLinkType(t), source=str(s), target=str(d)) for t, s, d in res.rows
        ]
        return sorted(links, key=lambda x: (x.type.value, x.source, x.target))

    async def orphans(self, namespace: str, limit: int = 1000) -> list[NodeRef]:
        """Memory-graph nodes with no edge at all, and facts whose `invalidated_by`
        names a fact that no longer exists (a dangling reference).

        A lone node is not necessarily wrong (an entity nobody linked yet); this is
        the list to review. At most `limit` nodes, by label.
        """
        out: list[NodeRef] = []
        for label in MEMORY_LABELS:
            if len(out) >= limit:
                break
            res = await self.store.query(
                namespace,
                f"MATCH (n:{label}) WHERE NOT (n)--() "
                "RETURN n.uuid AS uuid, n.name AS name, n.description AS description, "
                "n.content AS content, n.subject AS subject, n.predicate AS predicate, "
                "n.object AS object LIMIT $lim",
                {"lim": limit - len(out)},
                read_only=True,
            )
            out.extend(_ref(label, d) for d in res.dicts())
        if len(out) < limit:
            res = await self.store.query(
                namespace,
                f"MATCH (f:{FACT}) WHERE f.invalidated_by IS NOT NULL "
                f"OPTIONAL MATCH (g:{FACT} {{uuid: f.invalidated_by}}) WITH f, g WHERE g IS NULL "
                "RETURN f.uuid AS uuid, f.subject AS subject, f.predicate AS predicate, "
                "f.object AS object LIMIT $lim",
                {"lim": limit - len(out)},
                read_only=True,
            )
            seen = {r.uuid for r in out}
            out.extend(_ref(FACT, d) for d in res.dicts() if d["uuid"] not in seen)
        return out

    async def cleanup_orphans(self, namespace: str) -> int:
        """Remove nodes that only existed to be linked and have lost every link.

        The rule: entities created implicitly as cross-link targets
        (`EntityGraph.ensure`, `origin = "ensure"`) and concepts created only because
        a memory named them (`origin = "implicit"`) are removed once they have no
        edge at all. Anything a user added explicitly — entities, concepts with a
        description, events, facts, causal nodes, memories — is content and stays,
        linked or not.

        Returns:
            How many nodes were removed.
        """
        return await remove_orphans(self.store, namespace)

    async def clear(self, namespace: str, which: GraphName) -> ClearResult:
        """Remove every node of one graph (or of all four) with its edges and cross-links.

        Nodes of the other graphs, scratch graphs and the namespace's metadata stay.

        Raises:
            InvalidInput: an unknown graph name.
        """
        if which == "all":
            labels: tuple[str, ...] = MEMORY_LABELS
        elif which in LABELS_OF_GRAPH:
            labels = LABELS_OF_GRAPH[which]
        else:
            raise InvalidInput(
                f"unknown graph {which!r}; use semantic, temporal, causal, entity or all"
            )
        # One query, so a failure leaves the graph as it was.
        cond = " OR ".join(f"n:{label}" for label in labels)
        res = await self.store.query(
            namespace,
            f"MATCH (n) WHERE {cond} WITH n, labels(n)[0] AS label "
            "DETACH DELETE n RETURN label, count(*)",
        )
        counts = dict.fromkeys(labels, 0)
        counts.update({str(label): int(n) for label, n in res.rows})
        rels = res.relationships_deleted
        # Clearing one graph can leave implicit entities or concepts without links.
        await remove_orphans(self.store, namespace)
        logger.info("cleared %s of graph %s: %s", which, namespace, counts)
        return ClearResult(graph=which, nodes_deleted=counts, relationships_deleted=rels)

    async def delete_node(self, namespace: str, uuid: str, *, delete_facts: bool = False) -> bool:
        """Delete any memory-graph node by uuid, with its edges and cross-links.

        An entity is deleted by `delete_entity`'s rules (its facts stop being current,
        or go with `delete_facts`); after any delete, implicit nodes left without
        links are removed.

        Returns:
            True when a node was deleted, False when none has this uuid.
        """
        label = await self.label_of(namespace, uuid)
        if label is None:
            return False
        if label == ENTITY:
            deleted, _ = await delete_entity(self.store, namespace, uuid, delete_facts=delete_facts)
            return deleted
        # An event leaves a gap in its entities' T_BEFORE chains; DELETE_EVENT joins them.
        query = (
            DELETE_EVENT if label == EVENT else f"MATCH (n:{label} {{uuid: $u}}) DETACH DELETE n"
        )
        res = await self.store.query(namespace, query, {"u": uuid})
        await remove_orphans(self.store, namespace)
        return res.nodes_deleted > 0
