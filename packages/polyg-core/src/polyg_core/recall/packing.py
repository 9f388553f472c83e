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
    # A memory node is the memory: it is packed (and counted) once, as the memory.
    other_nodes = [n for n in nodes if not (n.label == MEMORY and n.uuid in memory_ids)]
    items = _in_order_of_trust(memories, other_nodes, sources)
    kept, used, left_out = _take_greedily(items, max_tokens)
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


@dataclass(frozen=True)
class _Item:
    uuid: str
    label: str
    text: str


def _in_order_of_trust(
    memories: Sequence[RecalledMemory],
    nodes: Sequence[ContextNode],
    sources: Sequence[str],
) -> list[_Item]:
    """The answer's sources, then the memories, then the other nodes; each once."""
    by_id: dict[str, _Item] = {n.uuid: _Item(n.uuid, n.label, n.text) for n in nodes}
    # A memory wins over a node with its uuid (set last).
    by_id |= {m.uuid: _Item(m.uuid, MEMORY, m.content) for m in memories}
    order = [*sources, *(m.uuid for m in memories), *(n.uuid for n in nodes)]
    return [by_id[uid] for uid in dict.fromkeys(order) if uid in by_id]


def _take_greedily(
    items: Sequence[_Item], max_tokens: int
) -> tuple[set[str], int, list[AnswerSource]]:
    """The items that fit, in order (a later, smaller one may fit after one that did not),
    the tokens they use, and what was left out."""
    used = 0
    kept: set[str] = set()
    left_out: list[AnswerSource] = []
    for item in items:
        cost = item_cost(item.text)
        if used + cost <= max_tokens:
            kept.add(item.uuid)
            used += cost
        else:
            left_out.append(
                AnswerSource(uuid=item.uuid, label=item.label, text=_preview(item.text))
            )
    return kept, used, left_out


LEFT_OUT_PREVIEW = 60
"""Characters of a left-out item's text kept in the report, so saying what was left out
costs a few tokens per item instead of the item itself."""


def _preview(text: str) -> str:
    return text if len(text) <= LEFT_OUT_PREVIEW else text[: LEFT_OUT_PREVIEW - 1].rstrip() + "…"
