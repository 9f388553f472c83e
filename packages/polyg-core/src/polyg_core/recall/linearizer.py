"""Step 6 of MAGMA: write the merged subgraph out in an order that suits the question."""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from polyg_shared.retrieval import ContextEdge, ContextNode, LinearizedContext, MergedSubgraph

Strategy = Literal["topological", "chronological", "relevance", "frequency"]

STRATEGY_OF_INTENT: dict[str, Strategy] = {
    "WHY": "topological",
    "WHEN": "chronological",
    "WHO": "relevance",
    "WHAT": "relevance",
    "EXPLORE": "frequency",
}


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token), never zero for text."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _time_key(node: ContextNode) -> int:
    for key in ("occurred_at", "valid_from", "created_at"):
        value = node.attributes.get(key)
        if isinstance(value, int | float):
            return int(value)
    return 1 << 62


def _topological(nodes: list[ContextNode], edges: list[ContextEdge]) -> list[ContextNode]:
    by_id = {n.uuid: n for n in nodes}
    causal = [e for e in edges if e.type == "C_CAUSES" and e.source in by_id and e.target in by_id]
    indegree: dict[str, int] = defaultdict(int)
    succ: dict[str, list[str]] = defaultdict(list)
    in_chain: set[str] = set()
    for e in causal:
        succ[e.source].append(e.target)
        indegree[e.target] += 1
        in_chain.update((e.source, e.target))
    rank = {n.uuid: i for i, n in enumerate(nodes)}  # nodes arrive sorted by score
    ready = sorted((u for u in in_chain if indegree[u] == 0), key=rank.__getitem__)
    ordered: list[str] = []
    while ready:
        u = ready.pop(0)
        ordered.append(u)
        for v in sorted(succ[u], key=rank.__getitem__):
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
        ready.sort(key=rank.__getitem__)
    # Nodes on a cycle never reach indegree 0: keep them, by score, after the acyclic part.
    leftover = [u for u in sorted(in_chain, key=rank.__getitem__) if u not in ordered]
    chain = [by_id[u] for u in ordered + leftover]
    rest = [n for n in nodes if n.uuid not in in_chain]
    return chain + rest


def _order(strategy: Strategy, sub: MergedSubgraph) -> list[ContextNode]:
    nodes = list(sub.nodes)
    if strategy == "topological":
        return _topological(nodes, sub.edges)
    if strategy == "chronological":
        timed = [n for n in nodes if _time_key(n) != 1 << 62]
        untimed = [n for n in nodes if _time_key(n) == 1 << 62]
        return sorted(timed, key=_time_key) + untimed
    if strategy == "relevance":
        degree: dict[str, int] = defaultdict(int)
        for e in sub.edges:
            degree[e.source] += 1
            degree[e.target] += 1
        return sorted(nodes, key=lambda n: (-(n.score * (1 + 0.1 * degree[n.uuid])), n.text))
    return sorted(nodes, key=lambda n: (-len(n.views), -n.score, n.text))


def _node_line(node: ContextNode) -> str:
    attrs = node.attributes
    parts = [f"[{node.graph}:{node.label}] {node.text}"]
    if node.label == "E_Entity" and attrs.get("entity_type"):
        parts.append(f"(type: {attrs['entity_type']})")
    if attrs.get("occurred_at_iso"):
        parts.append(f"@ {attrs['occurred_at_iso']}")
    if node.label == "T_Fact":
        since = attrs.get("valid_from_iso")
        until = attrs.get("valid_to_iso")
        parts.append(f"(valid {since or '?'} → {until or 'now'})")
    parts.append(f"score={node.score:.2f}")
    return " ".join(parts)


def _edge_line(edge: ContextEdge, names: dict[str, str]) -> str:
    rel = edge.label or edge.type
    conf = f" (confidence {edge.confidence:.2f})" if edge.confidence is not None else ""
    return f"{names[edge.source]} --{rel}--> {names[edge.target]}{conf}"


def linearize(
    sub: MergedSubgraph, intent_type: str, *, max_tokens: int = 4000
) -> LinearizedContext:
    """Order nodes for the intent, write them and the edges between them within `max_tokens`.

    WHY: causes before effects; WHEN: by time; WHO/WHAT: relevance × connectivity;
    EXPLORE: nodes found by most views first.
    """
    strategy = STRATEGY_OF_INTENT.get(intent_type.upper(), "relevance")
    ordered = _order(strategy, sub)
    names = {n.uuid: n.text for n in sub.nodes}
    lines: list[str] = ["Nodes:"]
    used = estimate_tokens(lines[0])
    included: list[str] = []
    truncated = False
    for node in ordered:
        line = f"- {_node_line(node)}"
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            truncated = True
            break
        lines.append(line)
        used += cost
        included.append(node.uuid)
    kept = set(included)
    edge_lines: list[str] = []
    position = {u: i for i, u in enumerate(included)}
    edges = sorted(
        (e for e in sub.edges if e.source in kept and e.target in kept),
        key=lambda e: (position[e.source], position[e.target]),
    )
    for edge in edges:
        line = f"- {_edge_line(edge, names)}"
        cost = estimate_tokens(line) + 1
        if used + cost + 2 > max_tokens:
            truncated = True
            break
        edge_lines.append(line)
        used += cost
    if edge_lines:
        lines.append("Edges:")
        lines.extend(edge_lines)
        used += 2
    text = "\n".join(lines)
    return LinearizedContext(
        strategy=strategy,
        text=text,
        node_ids=included,
        nodes_total=len(sub.nodes),
        tokens=estimate_tokens(text),
        max_tokens=max_tokens,
        truncated=truncated,
    )
