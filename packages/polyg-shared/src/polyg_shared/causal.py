"""Results of causal-graph operations beyond the plain nodes and links."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.edges import CausalLink, CausalPath
from polyg_shared.nodes import CausalNode
from polyg_shared.results import CREATED_ENTITIES, WrittenNode
from polyg_shared.types import Timestamp, Uuid

CausalMatch = Literal["uuid", "normalized", "embedding", "created"]
"""How a description given to `add_link` was matched to a causal node."""

ChainDirection = Literal["upstream", "downstream"]


class CausalLinkResult(BaseModel):
    """What `add_link` stored: both nodes, the link, and how each node was found."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cause: CausalNode
    effect: CausalNode
    link: CausalLink
    cause_created: bool
    effect_created: bool
    cause_matched_by: CausalMatch
    effect_matched_by: CausalMatch
    cause_similarity: float = Field(default=1.0, ge=0.0, le=1.0)
    effect_similarity: float = Field(default=1.0, ge=0.0, le=1.0)
    entities: list[Uuid] = Field(default_factory=list, description="Entities linked (X_AFFECTS).")
    events: list[Uuid] = Field(default_factory=list, description="Events linked (X_REFERS_TO).")
    created_entities: list[WrittenNode] = Field(
        default_factory=list[WrittenNode], description=CREATED_ENTITIES
    )


class CausalSolution(BaseModel):
    """A `C_SOLVED_BY` link: `problem` is solved by `solution`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem: CausalNode
    solution: CausalNode
    evidence: str | None = None
    created_at: Timestamp
    problem_created: bool
    solution_created: bool


class CausalChain(BaseModel):
    """Every cause (upstream) or effect (downstream) path from one node, best first.

    Each path is written in causal order (cause first). For upstream chains the
    paths end at `root`; for downstream chains they start at it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: CausalNode
    direction: ChainDirection
    depth: int = Field(ge=1)
    paths: list[CausalPath] = Field(default_factory=list[CausalPath])
    nodes: list[CausalNode] = Field(default_factory=list[CausalNode])
    edges: list[CausalLink] = Field(default_factory=list[CausalLink])
    truncated: bool = Field(default=False, description="True when the path limit cut the result.")
