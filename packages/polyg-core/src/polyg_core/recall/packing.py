"""Recall's evidence packed into a token budget, best first, saying what was left out.

With `max_tokens`, what recall hands back for a prompt — the ranked memories and the
answer's nodes — must fit that many tokens. The order is the order of trust:

1. the nodes the answer rests on (its sources), in the answer's order;
2. the other memories, best fused score first;
3. the other nodes, best score first.

Each item costs the estimate of its text (`estimate_tokens`, about four characters a
token) plus one for its separator. Items are taken greedily in that order; one that no
longer fits is left out and listed, and smaller ones after it may still be taken, so the
budget is used without ever being exceeded. A memory that is also a node counts once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from polyg_shared.retrieval import AnswerSource, ContextNode, PackedEvidence, RecalledMemory

from polyg_core.errors import InvalidInput
from polyg_core.recall.linearizer import estimate_tokens
from polyg_core.storage.schema import MEMORY


def item_cost(text: str) -> int:
    """Tokens one packed item costs: its text's estimate and a separator."""
    return estimate_tokens(text) + 1


@dataclass(frozen=True)
class Packed:
    """The memories and nodes that fit, in their original order, and the report."""

    memories: list[RecalledMemory]
    nodes: list[ContextNode]
    report: PackedEvidence


def check_budget(max_tokens: int | None) -> None:
    """Check a token budget.

    Raises:
        InvalidInput: a budget below one token.
    """
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInput(
            f"max_tokens must be at least 1, got {max_tokens}; leave it out for no budget"
        )


def pack(
    memories: Sequence[RecalledMemory],
    nodes: Sequence[ContextNode],
    sources: Sequence[str],
    max_tokens: int,
) -> Packed:
    """Pack memories and nodes into `max_tokens` (see the module docstring).

    Raises:
        InvalidInput: a budget below one token.
    """
    check_budget(max_tokens)
    memory_ids = {m.uuid for m in memories}
    by_memory = {m.uuid: m for m in memories}
    # A memory node is the memory: it is packed (and counted) once, as the memory.
    other_nodes = [n for n in nodes if not (n.label == MEMORY and n.uuid in memory_ids)]
    by_node = {n.uuid: n for n in other_nodes}
    order: list[str] = []
    for uid in [*sources, *(m.uuid for m in memories), *(n.uuid for n in other_nodes)]:
        if (uid in by_memory or uid in by_node) and uid not in order:
            order.append(uid)
    used = 0
    kept: set[str] = set()
    left_out: list[AnswerSource] = []
    for uid in order:
        memory = by_memory.get(uid)
        text = memory.content if memory is not None else by_node[uid].text
        cost = item_cost(text)
        if used + cost <= max_tokens:
            kept.add(uid)
            used += cost
        else:
            label = MEMORY if memory is not None else by_node[uid].label
            left_out.append(AnswerSource(uuid=uid, label=label, text=_preview(text)))
    kept_memories = [m for m in memories if m.uuid in kept]
    kept_nodes = [n for n in nodes if n.uuid in kept]
    return Packed(
        memories=kept_memories,
        nodes=kept_nodes,
        report=PackedEvidence(
            max_tokens=max_tokens,
            tokens=used,
            memories_kept=len(kept_memories),
            nodes_kept=len([n for n in kept_nodes if n.uuid not in memory_ids]),
            left_out=left_out,
        ),
    )


LEFT_OUT_PREVIEW = 60
"""Characters of a left-out item's text kept in the report, so saying what was left out
costs a few tokens per item instead of the item itself."""


def _preview(text: str) -> str:
    return text if len(text) <= LEFT_OUT_PREVIEW else text[: LEFT_OUT_PREVIEW - 1].rstrip() + "…"
