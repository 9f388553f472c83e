import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_core.providers.json_extract import NoJSONFound, extract_json_object, strip_reasoning

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**15), max_value=10**15)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=5)
# Prose without braces, backticks or tags: those would legitimately change the answer.
prose = st.text(alphabet=st.characters(exclude_characters="{}<`"), max_size=80)
dump_styles = st.sampled_from(
    [
        {},
        {"indent": 2},
        {"ensure_ascii": False},
        {"separators": (",", ":")},
    ]
)


@given(obj=json_objects, before=prose, after=prose, style=dump_styles)
def test_any_object_embedded_in_prose_round_trips(
    obj: dict[str, Any], before: str, after: str, style: dict[str, Any]
) -> None:
    text = before + json.dumps(obj, **style) + after
    assert extract_json_object(text) == obj


@given(obj=json_objects, before=prose, after=prose)
def test_object_in_a_code_fence_round_trips(obj: dict[str, Any], before: str, after: str) -> None:
    text = f"{before}\n```json\n{json.dumps(obj, indent=2)}\n```\n{after}"
    assert extract_json_object(text) == obj


@given(obj=json_objects, thought=prose, before=prose)
def test_draft_json_inside_think_tags_is_ignored(
    obj: dict[str, Any], thought: str, before: str
) -> None:
    text = f'<think>{thought} maybe {{"draft": true}} {thought}</think>{before}{json.dumps(obj)}'
    assert extract_json_object(text) == obj


def test_reply_that_is_only_json_is_returned() -> None:
    assert extract_json_object('{"a": 1, "b": [1, 2]}') == {"a": 1, "b": [1, 2]}


def test_braces_inside_strings_do_not_confuse_the_scan() -> None:
    text = 'Sure! {"text": "a } tricky { value", "n": {"m": 2}} Hope that helps.'
    assert extract_json_object(text) == {"text": "a } tricky { value", "n": {"m": 2}}


def test_broken_object_is_skipped_for_the_next_complete_one() -> None:
    text = 'Draft: {"a": 1,, } Final: {"a": 2}'
    assert extract_json_object(text) == {"a": 2}


def test_unlabelled_fence_is_read() -> None:
    assert extract_json_object('```\n{"ok": true}\n```') == {"ok": True}


def test_closing_think_tag_without_opening_drops_the_reasoning() -> None:
    text = 'reasoning with {"draft": 1} </think>\n{"final": 2}'
    assert extract_json_object(text) == {"final": 2}


def test_unclosed_think_tag_hides_everything_after_it() -> None:
    with pytest.raises(NoJSONFound):
        extract_json_object('<think>still thinking {"draft": 1}')


def test_strip_reasoning_removes_every_block() -> None:
    assert strip_reasoning("<think>a</think>x<THINKING>b</THINKING>y").strip() == "xy"


@pytest.mark.parametrize(
    "text",
    ["", "no json here", "[1, 2, 3]", '"just a string"', '{"unterminated": ', "{ nope }"],
)
def test_text_without_a_complete_object_raises_with_a_preview(text: str) -> None:
    with pytest.raises(NoJSONFound, match="no complete JSON object"):
        extract_json_object(text)
