"""The calibrated confidence: a logistic model over the raw confidence and the answer's
groups, monotone and bounded, with caps that no model lifts (evidence about another
entity, time or project; a value that no longer holds; nothing found)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from polyg_core.recall.answer.calibration import (
    NOT_FOUND_KEY,
    SHIPPED,
    Calibration,
    calibrated,
    calibrated_confidence,
    calibrated_from_factors,
    form_of,
    group_keys,
    keys_of,
    source_of,
)
from polyg_core.recall.answer.calibration_features import day_from_weekday, weekday_in
from polyg_core.recall.answer.confidence import (
    CEILING,
    CONTRADICTED_CAP,
    FLOOR,
    NOT_FOUND_CAP,
    ROUTES,
    Evidence,
    confidence_of,
    factors_of,
)
from polyg_core.recall.synthesizer import synthesize_extractive
from polyg_shared.intents import Intent, IntentType, Timeframe
from polyg_shared.retrieval import ContextEdge, ContextNode, MergedSubgraph

TABLE = Calibration(
    {"all": -1.0, "p": -0.5, "p/s": 0.5, "when/p": 1.0, "when/p/s": 0.5, "q": 1.5}, 4.0, 0.5
)
SURE = Calibration({"all": 20.0}, 0.0)  # a model that trusts everything
TABLE_BY_FORM = Calibration({"all": 0.0, "p/s": 1.0, "p/t": -1.0}, 4.0, 0.5)


def logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


NOW = ms("2026-03-01T12:00:00")


def memory(uuid: str, text: str, said: str, score: float = 1.0, **attrs: Any) -> ContextNode:
    return ContextNode(
        uuid=uuid,
        label="S_Memory",
        graph="semantic",
        text=text,
        score=score,
        attributes={"created_at": ms(said), **attrs},
    )


def entity(uuid: str, text: str, kind: str, score: float = 1.0) -> ContextNode:
    return ContextNode(
        uuid=uuid,
        label="E_Entity",
        graph="entity",
        text=text,
        score=score,
        attributes={"entity_type": kind},
    )


def answer(
    question: str,
    kind: IntentType,
    nodes: list[ContextNode],
    entities: list[str] | None = None,
    timeframe: Timeframe | None = None,
    table: Calibration = SURE,
    edges: list[ContextEdge] | None = None,
) -> tuple[str, float, dict[str, float]]:
    """The extractive answer's text, its confidence under `table`, and its factors."""
    intent = Intent(type=kind, entities=entities or [], timeframe=timeframe)
    sub = MergedSubgraph(nodes=nodes, edges=edges or [])
    synthesis, factors = synthesize_extractive(question, intent, sub, NOW)
    value = calibrated_from_factors(factors, table)
    assert value is not None
    # The synthesis reports the shipped model's value under the same rule.
    assert synthesis.confidence == calibrated_from_factors(factors)
    return synthesis.answer, value, factors


# -- reading the model -----------------------------------------------------------------------


def test_each_group_an_answer_belongs_to_adds_its_log_odds() -> None:
    # A WHEN answer that quotes a turn and gives the asked value: all, p, p/s, when/p and
    # when/p/s add up, read at the raw confidence's centre.
    assert calibrated(0.5, group_keys("when", "p", "s"), TABLE) == round(logistic(0.5), 3)
    # A WHO/WHAT answer handing over a whole turn: no group of its own, only all and p.
    assert calibrated(0.5, group_keys("who_what", "p", "t"), TABLE) == round(logistic(-1.5), 3)
    # A group the model never saw adds nothing: the route's parents decide.
    assert calibrated(0.5, group_keys("why", "q", "s"), TABLE) == round(logistic(0.5), 3)


def test_more_raw_confidence_is_surer_along_one_slope() -> None:
    keys = group_keys("when", "p", "s")
    low, high = calibrated(0.3, keys, TABLE), calibrated(0.7, keys, TABLE)
    assert low == round(logistic(0.5 - 0.8), 3)
    assert high == round(logistic(0.5 + 0.8), 3)


def test_the_share_stays_within_the_raw_confidences_bounds() -> None:
    assert calibrated(1.0, ["all"], SURE) == CEILING
    assert calibrated(0.0, ["all"], Calibration({"all": -20.0}, 1.0)) == FLOOR


def test_a_falling_slope_is_refused() -> None:
    with pytest.raises(ValueError, match="slope"):
        Calibration({"all": 0.0}, -1.0)


def test_an_empty_model_leaves_the_raw_confidence() -> None:
    assert calibrated(0.42, ["when", "all"], Calibration()) == 0.42


def test_the_form_names_a_value_a_whole_text_or_another_shape() -> None:
    assert form_of(shaped=True, direct=True) == "s"
    assert form_of(shaped=True, direct=False) == "t"
    assert form_of(shaped=False, direct=True) == "u"
    factors = factors_of(Evidence(route="who_what", quoted=True, direct=False))
    assert keys_of(factors) == ["who_what/q/t", "q/t", "who_what/q", "q", "all"]
    said = factors_of(Evidence(route="when", quoted=True, spoken=True, shaped=False))
    assert keys_of(said) == ["when/p/u", "p/u", "when/p", "p", "all"]
    # Factors written before the form existed read as a graph answer of the asked shape.
    assert keys_of({"raw": 0.5, "route_when": 1.0}) == ["when/g/s", "g/s", "when/g", "g", "all"]


# -- the shipped model -----------------------------------------------------------------------


def test_the_shipped_model_knows_the_groups_it_was_fitted_on() -> None:
    assert "all" in SHIPPED.effects
    assert SHIPPED.slope >= 0.0
    for key in SHIPPED.effects:
        head = key.split("/")[0]
        assert head in (*ROUTES, "g", "q", "p", "all", NOT_FOUND_KEY), key


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("form", ["s", "t", "u"])
@pytest.mark.parametrize("source", ["g", "q", "p"])
def test_more_raw_confidence_never_calibrates_lower(route: str, form: str, source: str) -> None:
    keys = group_keys(route, source, form)
    values = [calibrated(r / 20, keys) for r in range(21)]
    assert values == sorted(values)
    assert all(FLOOR <= v <= CEILING for v in values)  # no group claims never or always


def test_i_do_not_know_is_low_in_the_shipped_model() -> None:
    unknown = factors_of(Evidence(found=False, route="who_what", quoted=True))
    assert (calibrated_from_factors(unknown) or 1.0) <= NOT_FOUND_CAP
    assert calibrated(unknown["raw"], keys_of(unknown)) < 0.2


# -- caps no model lifts ---------------------------------------------------------------------


def test_evidence_about_another_time_stays_capped() -> None:
    strong = Evidence(match=1.0, margin=1.0, agreement=4, time=0.0, route="when", quoted=True)
    assert calibrated_confidence(strong, SURE) == CONTRADICTED_CAP
    # The benches' refit reads the same rule from the reported factors.
    assert calibrated_from_factors(factors_of(strong), SURE) == CONTRADICTED_CAP


def test_nothing_found_stays_at_most_the_not_found_cap() -> None:
    assert calibrated_confidence(Evidence(found=False, route="who_what"), SURE) == NOT_FOUND_CAP


def test_i_do_not_know_is_calibrated_on_its_own() -> None:
    # "Nothing in memory about ..." gives no value whatever route it took: it is graded by
    # how often such answers were right, not by its route's share.
    table = Calibration({NOT_FOUND_KEY: -4.0, "who_what/q/s": 3.0, "all": 0.5}, 0.0)
    unknown = factors_of(Evidence(found=False, route="who_what", quoted=True))
    assert keys_of(unknown) == [NOT_FOUND_KEY, "all"]
    assert calibrated_from_factors(unknown, table) == round(logistic(-3.5), 3)
    other = entity("e1", "Kestrel gateway", "service")
    text, value, factors = answer(
        "Who maintains the Osprey ledger?", IntentType.WHO, [other], ["Osprey ledger"], table=table
    )
    assert factors["found"] == 0.0, text
    assert value <= 0.03
    # With the shipped model, "I don't know" stays low too.
    assert (calibrated_from_factors(factors) or 0.0) <= NOT_FOUND_CAP


def test_an_answer_about_another_project_is_capped() -> None:
    nodes = [
        memory("m1", "The Heron project stores its events in ClickHouse.", "2026-01-10T09:00:00"),
        memory("m2", "Lunch on Fridays is at the canteen.", "2026-01-11T09:00:00", 0.3),
    ]
    _, capped, factors = answer(
        "Which database does the Falcon project use?",
        IntentType.WHAT,
        nodes,
        ["Falcon project"],
    )
    assert factors["entity_found"] == 0.0
    assert capped <= CONTRADICTED_CAP
    # The same evidence asked about its own project is not capped.
    _, sure, factors = answer(
        "Which database does the Heron project use?", IntentType.WHAT, nodes, ["Heron project"]
    )
    assert factors["entity_found"] == 1.0
    assert sure > CONTRADICTED_CAP


def test_an_answer_about_another_person_is_capped() -> None:
    nodes = [
        memory(
            "m1", "Priya Anand: I finally adopted a greyhound named Comet.", "2026-02-02T10:00:00"
        )
    ]
    _, capped, factors = answer(
        "What is the name of Joaquin Ferre's dog?", IntentType.WHAT, nodes, ["Joaquin Ferre"]
    )
    assert factors["entity_found"] == 0.0
    assert capped <= CONTRADICTED_CAP


def test_an_answer_from_another_time_is_capped() -> None:
    nodes = [
        memory("m1", "Bruno Keel: I ran the harbour half marathon today.", "2025-04-06T18:00:00")
    ]
    spring_2024 = Timeframe(
        phrase="in 2024",
        start=datetime(2024, 1, 1, tzinfo=UTC),
        end=datetime(2024, 12, 31, 23, 59, tzinfo=UTC),
    )
    _, capped, factors = answer(
        "When did Bruno Keel run a half marathon in 2024?",
        IntentType.WHEN,
        nodes,
        ["Bruno Keel"],
        spring_2024,
    )
    assert factors["time_found"] == 0.0
    assert capped <= CONTRADICTED_CAP


def test_an_answer_that_quotes_a_value_a_later_memory_changed_is_capped() -> None:
    # Recall marked the old memory as changed by the later one; its words match the
    # question better, but for now the answer quotes the later memory.
    old = memory(
        "old", "Greta Holm lives in Tromso.", "2025-02-01T09:00:00", 1.0, superseded_by="new"
    )
    new = memory("new", "Greta Holm moved out of Tromso last month.", "2025-09-01T09:00:00", 0.4)
    text, _, factors = answer(
        "Where does Greta Holm live?", IntentType.WHAT, [old, new], ["Greta Holm"]
    )
    assert text.startswith("Greta Holm moved out of Tromso")
    assert "stale" not in factors
    # When the changed memory is all there is to quote, the answer is capped.
    text, capped, factors = answer(
        "Where does Greta Holm live?", IntentType.WHAT, [old], ["Greta Holm"]
    )
    assert "Tromso" in text
    assert factors["stale"] == 1.0
    assert capped <= CONTRADICTED_CAP
    # Asked about the value before, the old memory is the answer, not a stale one.
    _, _, before = answer(
        "Where did Greta Holm live before?", IntentType.WHAT, [old, new], ["Greta Holm"]
    )
    assert "stale" not in before


def test_an_update_that_supersedes_answers_with_the_current_value_uncapped() -> None:
    old = memory(
        "old", "Greta Holm lives in Tromso.", "2025-02-01T09:00:00", 0.5, superseded_by="new"
    )
    new = memory("new", "Greta Holm moved from Tromso to Bodo.", "2025-09-01T09:00:00", 1.0)
    text, value, factors = answer(
        "Where does Greta Holm live?", IntentType.WHAT, [old, new], ["Greta Holm"]
    )
    assert text.startswith("Greta Holm moved from Tromso to Bodo.")
    assert factors["route_update"] == 1.0
    assert "stale" not in factors
    assert value > CONTRADICTED_CAP


# -- the answer's form -----------------------------------------------------------------------


def test_a_time_that_is_only_when_a_text_was_said_is_not_a_direct_answer() -> None:
    said = "2025-06-12T15:42:00"
    stated = [memory("m1", "Bruno Keel: I repainted the boat yesterday.", said)]
    _, _, direct = answer(
        "When did Bruno Keel repaint the boat?", IntentType.WHEN, stated, ["Bruno Keel"]
    )
    assert direct["direct"] == 1.0
    unstated = [memory("m1", "Bruno Keel: I repainted the boat, it looks great.", said)]
    text, _, recorded = answer(
        "When did Bruno Keel repaint the boat?", IntentType.WHEN, unstated, ["Bruno Keel"]
    )
    assert "15:42" in text  # the time it was said, not one the text states
    assert recorded["direct"] == 0.0
    assert confidence_of(Evidence(match=1.0, direct=False)) < confidence_of(Evidence(match=1.0))


@pytest.mark.parametrize(
    ("said", "weekday"),
    [
        ("Ilse Varga: I ran the river 10k last Saturday, legs still sore!", True),
        ("Ilse Varga: I ran the river 10k on Sat. with my cousin.", True),
        ("Ilse Varga: I ran the river 10k yesterday, legs still sore!", False),
        ("Ilse Varga: I ran the river 10k last weekend, legs still sore!", False),
        ("Ilse Varga: I ran the river 10k on 3 February.", False),
    ],
)
def test_a_day_named_by_its_weekday_is_answered_as_said_and_counts_as_stated(
    said: str, weekday: bool
) -> None:
    # Said on Tuesday 10 February: "last Saturday" is the 7th (or the 31st of January, as
    # some would read it); "yesterday" and "last weekend" name one period only. The answer
    # keeps the speaker's words, so the ambiguity stays with the reader and the answer is
    # the stated value: reported as `weekday`, of the stated form, not counted down.
    nodes = [
        memory("m1", said, "2026-02-10T18:00:00"),
        memory("m2", "Oskar Lind: The bakery on Elm Street closed.", "2026-02-11T09:00:00", 0.4),
    ]
    text, _, factors = answer(
        "When did Ilse Varga run the river 10k?", IntentType.WHEN, nodes, ["Ilse Varga"]
    )
    assert factors.get("weekday") == (1.0 if weekday else None), text
    assert keys_of(factors)[0] == "when/p/s", text
    if weekday:
        assert text.startswith("the Saturday before 10 February 2026 (2026-02-07)")
        sure = Evidence(match=1.0, route="when", quoted=True, spoken=True)
        named = Evidence(match=1.0, route="when", quoted=True, spoken=True, weekday=True)
        assert confidence_of(named) == confidence_of(sure)
        assert calibrated_confidence(named, TABLE_BY_FORM) == calibrated_confidence(
            sure, TABLE_BY_FORM
        )


def test_day_from_weekday_reads_the_expression_that_dates_the_event() -> None:
    tuesday = ms("2026-02-10T18:00:00")
    assert day_from_weekday("I went to the climbing gym last Friday.", tuesday) == datetime(
        2026, 2, 6, tzinfo=UTC
    )
    assert day_from_weekday("We met on Wed to plan it.", tuesday) is not None
    assert day_from_weekday("Two days ago I went, on a Friday like always.", tuesday) is None
    assert day_from_weekday("I went climbing last month.", tuesday) is None
    assert day_from_weekday("No time said here.", tuesday) is None
    assert weekday_in("see you Thurs") and not weekday_in("a sunny month")


def test_a_whole_sentence_handed_over_is_not_a_direct_answer() -> None:
    nodes = [
        memory(
            "m1",
            "Priya Anand: Honestly the thing that keeps me going on long shifts is the "
            "thought of the coast trip we planned for the autumn.",
            "2026-02-02T10:00:00",
        )
    ]
    text, _, factors = answer(
        "How does Priya Anand keep going on long shifts?", IntentType.WHAT, nodes, ["Priya Anand"]
    )
    assert len(text.split()) > 8
    assert factors["direct"] == 0.0
    spans = [memory("m1", "Priya Anand: Yeah, I play the cello!", "2026-02-02T10:00:00")]
    text, _, factors = answer(
        "What instrument does Priya Anand play?", IntentType.WHAT, spans, ["Priya Anand"]
    )
    assert text == "cello."
    assert factors["direct"] == 1.0


def test_words_said_in_a_conversation_are_told_from_a_note() -> None:
    turn = [memory("m1", "Priya Anand: I play the cello in a quartet.", "2026-02-02T10:00:00")]
    note = [memory("m1", "Priya Anand plays the cello in a quartet.", "2026-02-02T10:00:00")]
    question = "Which instrument does Priya Anand play?"
    _, _, said = answer(question, IntentType.WHAT, turn, ["Priya Anand"])
    _, _, written = answer(question, IntentType.WHAT, note, ["Priya Anand"])
    assert said["spoken"] == 1.0 and "spoken" not in written
    assert keys_of(said)[0].split("/")[1] == "p"
    assert keys_of(written)[0].split("/")[1] == "q"


def test_an_answer_from_the_graphs_read_from_a_conversation_rests_on_words_said() -> None:
    def graph(best_memory: str) -> list[ContextNode]:
        return [
            entity("priya", "Priya Anand", "person"),
            entity("ward", "Ward 7", "place", 0.8),
            memory("m1", best_memory, "2026-02-02T10:00:00", 0.9),
        ]

    # A relation of the asked person: the graphs answer, beside the memory they came from.
    works = [ContextEdge(source="priya", target="ward", type="E_RELATES", label="works on")]
    question = "Who is Priya Anand?"
    chat_graph = graph("Priya Anand: I work night shifts on Ward 7.")
    notes_graph = graph("Priya Anand works night shifts on Ward 7.")
    _, _, chat = answer(question, IntentType.WHO, chat_graph, edges=works)
    _, _, notes = answer(question, IntentType.WHO, notes_graph, edges=works)
    assert chat["quoted"] == notes["quoted"] == 0.0  # both answer from the graphs
    assert chat.get("spoken") == 1.0 and "spoken" not in notes
    assert source_of(chat["quoted"] == 1.0, chat.get("spoken") == 1.0) == "p"


def test_a_causal_chain_holding_none_of_the_asked_words_stays_capped() -> None:
    # Asked why the payment gateway failed, the only chain in memory is the auth outage's:
    # whatever share right its group has, the chain explains something else.
    table = Calibration({"all": 20.0}, 0.0)
    off = {"raw": 0.15, "route_why": 1.0, "match": 0.0, "found": 1.0, "chain": 0.75}
    on = {**off, "match": 0.6}
    assert calibrated_from_factors(off, table) == CONTRADICTED_CAP
    assert calibrated_from_factors(on, table) == 0.75  # no surer than its chain
