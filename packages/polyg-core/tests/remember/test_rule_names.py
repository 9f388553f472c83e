"""The rule extractor reads names in any script, short placeholder names by the word next
to them, and keeps function words and verbs out of the concepts."""

from __future__ import annotations

import pytest
from polyg_core.remember.extractor import RuleExtractor
from polyg_core.text.names import EntityMatcher, find_names


def extract(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    result = RuleExtractor().extract(text, EntityMatcher(), None)
    return [(e.name, e.entity_type) for e in result.entities], [c.name for c in result.concepts]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Last spring José moved to Zürich with his sister.", "José"),
        ("Last spring José moved to Zürich with his sister.", "Zürich"),
        ("We met Ömer Kılıç at the Malmö office.", "Ömer Kılıç"),
        ("The invoice came from Łódź on Monday.", "Łódź"),
        ("Наталья joined the platform team.", "Наталья"),
    ],
)
def test_non_ascii_names_are_whole_entities(text: str, name: str) -> None:
    entities, concepts = extract(text)
    assert name in [n for n, _ in entities], entities
    # No fragment of the name is left over as a concept ("jos", "rich").
    for part in name.split():
        for broken in (part[:-1].lower(), part[1:].lower()):
            assert broken not in concepts, concepts


def test_a_person_and_a_place_with_accents_get_their_types() -> None:
    entities, _ = extract("Last spring José moved to Zürich with his sister.")
    assert ("José", "person") in entities
    assert ("Zürich", "place") in entities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("service X crashed because the Y disk filled", {("X", "service"), ("Y", "host")}),
        ("Service X crashed because the Y disk filled.", {("Y", "host")}),
        ("host Q rebooted after the R database stalled", {("Q", "host"), ("R", "database")}),
    ],
)
def test_placeholder_names_next_to_a_kind_word_are_entities(
    text: str, expected: set[tuple[str, str]]
) -> None:
    entities, _ = extract(text)
    assert expected <= set(entities), entities


def test_single_letters_are_not_names_on_their_own() -> None:
    names = [m.name for m in find_names("I think A is fine, and I said so to a friend.")]
    assert names == []


def test_function_words_and_verbs_are_not_concepts() -> None:
    text = (
        "The billing report depends on data gathered during the quarterly audit. "
        "Mia reports weekly and the dashboard includes every region."
    )
    _, concepts = extract(text)
    junk = {"during", "depends", "reports", "includes", "report depends"}
    assert not junk & set(concepts), concepts
    assert {"audit", "dashboard"} & {w for c in concepts for w in c.split()}
