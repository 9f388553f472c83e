from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import TextContent
from polyg_core.errors import InvalidInput
from polyg_server.context import ServerContext
from polyg_server.errors import validation_error_text
from polyg_server.registry import (
    PROFILES,
    WRITE,
    PolygTool,
    ToolInput,
    ToolSpec,
    select_tools,
)
from polyg_server.tools import builtin_tool_specs
from polyg_server.tools.admin import DeleteGraphArgs, GraphArgs, ListGraphsArgs
from polyg_shared.types import is_graph_name
from pydantic import BaseModel, Field, ValidationError

pytestmark = pytest.mark.anyio

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=80),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
argument_dicts = st.dictionaries(
    st.sampled_from(["graph", "confirm", "force", "Graph", ""]), values, max_size=4
)


@pytest.mark.parametrize("model", [GraphArgs, DeleteGraphArgs, ListGraphsArgs])
@given(args=argument_dicts)
@settings(max_examples=150)
def test_admin_inputs_accept_valid_graphs_and_name_every_bad_field(
    model: type[BaseModel], args: dict[str, Any]
) -> None:
    try:
        parsed = model.model_validate(args)
    except ValidationError as exc:
        text = validation_error_text("tool", exc, model)
        errors = exc.errors()
        for err in errors:
            if all(str(p) for p in err["loc"]):
                assert f"- {'.'.join(str(p) for p in err['loc'])}:" in text
        assert text.count("\n- ") == len(errors)
        assert text.endswith("call the tool again.")
    else:
        graph = getattr(parsed, "graph", None)
        assert graph is None or is_graph_name(graph)
        assert set(args) <= set(model.model_fields)


class Note(ToolInput):
    text: str
    weight: float = 1.0
    tags: list[str] = Field(default_factory=list)


class Noted(BaseModel):
    text: str
    weight: float
    tags: list[str]


async def _note(ctx: ServerContext, inp: Note) -> Noted:
    return Noted(text=inp.text, weight=inp.weight, tags=inp.tags)


def _note_tool() -> PolygTool:
    spec = ToolSpec(
        name="note",
        description="test",
        input_model=Note,
        output_model=Noted,
        handler=_note,
        annotations=WRITE,
        profile="memory",
    )
    return PolygTool.from_spec(spec, None)  # type: ignore[arg-type]  # the handler ignores ctx


@given(
    args=st.dictionaries(
        st.sampled_from(["text", "weight", "tags", "graph", "other"]), values, max_size=5
    )
)
@settings(max_examples=150)
async def test_a_tool_answers_every_argument_dict_with_a_result_or_a_tool_error(
    args: dict[str, Any],
) -> None:
    tool = _note_tool()
    result = await tool.invoke(args)
    if result.is_error:
        block = result.content[0]
        assert isinstance(block, TextContent)
        assert block.text.startswith("Invalid arguments for note:")
    else:
        assert result.structured_content is not None
        assert result.structured_content["text"] == args["text"]


async def test_json_encoded_lists_from_clients_are_decoded() -> None:
    tool = _note_tool()
    result = await tool.invoke({"text": "[not a list]", "tags": '["a", "b"]'})
    assert result.structured_content == {"text": "[not a list]", "weight": 1.0, "tags": ["a", "b"]}


SPECS = builtin_tool_specs()
TOOL_NAMES = sorted(spec.name for spec in SPECS)
PROFILE_OF = {spec.name: spec.profile for spec in SPECS}


@given(
    st.lists(
        st.sampled_from([*PROFILES, "all", "ALL", " memory ", "magma", "engine", *TOOL_NAMES]),
        max_size=4,
    ).map(",".join)
)
def test_tools_selects_profiles_and_tool_names_in_any_mix(value: str) -> None:
    selection = select_tools(value, SPECS)
    chosen = {
        name for name in TOOL_NAMES if selection.includes(next(s for s in SPECS if s.name == name))
    }
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts:
        assert chosen == {n for n, p in PROFILE_OF.items() if p == "memory"}
    elif "all" in {p.lower() for p in parts}:
        assert chosen == set(TOOL_NAMES)
    else:
        profiles = {
            {"magma": "retrieval", "engine": "scratch"}.get(p.lower(), p.lower()) for p in parts
        }
        expected = {n for n, p in PROFILE_OF.items() if p in profiles} | (
            set(parts) & set(TOOL_NAMES)
        )
        assert chosen == expected


def test_unknown_tool_names_are_refused_with_the_valid_names() -> None:
    with pytest.raises(InvalidInput) as caught:
        select_tools("memory,recal,graphs", SPECS)
    message = str(caught.value)
    assert "'recal' (did you mean recall" in message
    assert "'graphs' (did you mean graph" in message
    assert "memory, graph, retrieval, admin, scratch, all" in message
    assert all(name in message for name in TOOL_NAMES)


def test_a_spec_with_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        ToolSpec(
            name="x",
            description="x",
            input_model=Note,
            output_model=Noted,
            handler=_note,
            annotations=WRITE,
            profile="everything",
        )
