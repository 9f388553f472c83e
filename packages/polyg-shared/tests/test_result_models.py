"""Answer models: empty lists by default, each answer its own, and schemas that name what
the lists hold; clear_graph's argument shortcut on inputs that are not objects."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from polyg_shared.causal import CausalChain
from polyg_shared.nodes import CausalNode, Event
from polyg_shared.temporal import EventNeighbourhood
from polyg_shared.tools import ClearGraphInput
from pydantic import BaseModel, ValidationError

WHEN = datetime(2025, 4, 2, 9, 30, tzinfo=UTC)


def _root() -> CausalNode:
    return CausalNode(uuid="c-1", description="the greenhouse heater tripped")


def _event(uuid: str) -> Event:
    return Event(
        uuid=uuid,
        description="Tomasz repotted the lemon tree",
        occurred_at=WHEN,
        recorded_at=WHEN,
    )


def test_an_answer_without_paths_or_events_holds_empty_lists() -> None:
    chain = CausalChain(root=_root(), direction="upstream", depth=2)
    assert (chain.paths, chain.nodes, chain.edges) == ([], [], [])
    around = EventNeighbourhood()
    assert (around.events, around.edges, around.hops) == ([], [], {})


def test_each_answer_gets_its_own_default_list() -> None:
    first = CausalChain(root=_root(), direction="downstream", depth=1)
    second = CausalChain(root=_root(), direction="downstream", depth=1)
    first.nodes.append(_root())
    assert second.nodes == []
    assert first.nodes is not second.nodes


def test_a_list_given_is_validated_as_its_element_type() -> None:
    around = EventNeighbourhood.model_validate({"events": [_event("v-1").model_dump()]})
    assert isinstance(around.events[0], Event)
    with pytest.raises(ValidationError) as info:
        EventNeighbourhood.model_validate({"events": [{"uuid": "v-2"}]})
    assert ("events", 0, "description") in [e["loc"] for e in info.value.errors()]


@pytest.mark.parametrize(
    ("model", "field", "item"),
    [
        (CausalChain, "paths", "CausalPath"),
        (CausalChain, "nodes", "CausalNode"),
        (EventNeighbourhood, "events", "Event"),
        (EventNeighbourhood, "edges", "EventOrder"),
    ],
)
def test_the_schema_of_a_defaulted_list_names_its_items(
    model: type[BaseModel], field: str, item: str
) -> None:
    prop: dict[str, Any] = model.model_json_schema()["properties"][field]
    assert prop["type"] == "array"
    assert prop["items"] == {"$ref": f"#/$defs/{item}"}
    assert "default" not in prop or prop["default"] == []


@pytest.mark.parametrize("raw", [["graph", "temporal"], "temporal", 3])
def test_clear_graph_refuses_arguments_that_are_not_an_object(raw: object) -> None:
    with pytest.raises(ValidationError):
        ClearGraphInput.model_validate(raw)


def test_clear_graph_keeps_which_when_both_are_given_and_graph_is_a_namespace() -> None:
    args = ClearGraphInput.model_validate({"graph": "orchard", "which": "entity", "confirm": True})
    assert (args.graph, args.which, args.confirm) == ("orchard", "entity", True)
