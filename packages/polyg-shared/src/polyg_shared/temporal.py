"""Results of temporal-graph operations beyond the plain nodes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.nodes import Event, Fact
from polyg_shared.results import CREATED_ENTITIES, WrittenNode
from polyg_shared.types import Uuid

FactWriteStatus = Literal["created", "superseded", "existing", "extended"]
"""What `add_fact` did: a new fact; a new fact that closed the one valid at its start;
the same statement was already recorded for that time; an equal statement's validity
was extended."""


class FactWrite(BaseModel):
    """The fact `add_fact` stored (or found) and the facts whose validity it closed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fact: Fact
    status: FactWriteStatus
    invalidated: list[Fact] = Field(
        default_factory=list[Fact], description="Facts closed because this one replaced them."
    )
    created_entities: list[WrittenNode] = Field(
        default_factory=list[WrittenNode], description=CREATED_ENTITIES
    )


class EventWrite(Event):
    """An event as a write left it (`add_event`, `update_event`), with the entities the
    write created."""

    created_entities: list[WrittenNode] = Field(
        default_factory=list[WrittenNode], description=CREATED_ENTITIES
    )


class EventOrder(BaseModel):
    """A `T_BEFORE` edge: `before` precedes `after` in the timeline of `entity`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    before: Uuid
    after: Uuid
    entity: Uuid | None = None


class EventNeighbourhood(BaseModel):
    """Events around a set of seed entities, for the retrieval pipeline.

    `hops` is 0 for events that involve a seed entity directly and N for events
    reached along N `T_BEFORE` edges from those.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    events: list[Event] = Field(default_factory=list[Event])
    hops: dict[str, int] = Field(default_factory=dict)
    edges: list[EventOrder] = Field(default_factory=list[EventOrder])
    truncated: bool = Field(
        default=False, description="True when `limit` was reached before the walk ended."
    )
