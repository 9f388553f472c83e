"""The rules that shape an extractive answer and its confidence, on small built subgraphs.

Short answers where the question asks for a short thing (a date, a duration, a span, a
count), relative dates resolved against the time the evidence was stated, and a
confidence that falls when the evidence does not answer what is asked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from polyg_core.recall.answer.confidence import CONTRADICTED_CAP, Evidence, confidence_of
from polyg_core.recall.answer.event_time import duration_in, resolve
from polyg_core.recall.answer.extractive import Answer, extractive_answer
from polyg_core.recall.answer.shapes import asks_previous, states_schedule
from polyg_core.recall.answer.span import asked_span
from polyg_core.recall.answer.words import best_sentence, terms
from polyg_core.recall.currency import says_change
from polyg_shared.intents import Intent, IntentType, Timeframe
from polyg_shared.retrieval import ContextEdge, ContextNode, MergedSubgraph


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


NOW = ms("2023-11-01T12:00:00")


def node(uuid: str, label: str, text: str, score: float = 1.0, **attrs: Any) -> ContextNode:
    graph = {"S_Memory": "semantic", "T_Event": "temporal", "T_Fact": "temporal"}.get(
        label, "entity"
    )
    return ContextNode(
        uuid=uuid, label=label, graph=graph, text=text, score=score, attributes=dict(attrs)
    )


def memory(uuid: str, text: str, said: str, score: float = 1.0) -> ContextNode:
    return node(uuid, "S_Memory", text, score, created_at=ms(said))


def changed(uuid: str, text: str, said: str, by: str, score: float = 1.0) -> ContextNode:
    """A memory recall marked as changed by the memory `by`."""
    return node(uuid, "S_Memory", text, score, created_at=ms(said), superseded_by=by)


def ask(
    question: str,
    kind: IntentType,
    nodes: list[ContextNode],
    entities: list[str] | None = None,
    edges: list[ContextEdge] | None = None,
    timeframe: Timeframe | None = None,
) -> tuple[Answer, float]:
    intent = Intent(type=kind, entities=entities or [], timeframe=timeframe)
    answer = extractive_answer(
        question, intent, MergedSubgraph(nodes=nodes, edges=edges or []), NOW
    )
    return answer, confidence_of(answer.evidence)


def ask_dana(
    question: str, kind: IntentType, said: str, at: str = "2023-06-01T10:00:00"
) -> tuple[Answer, float]:
    """`ask` with one thing Dana said (at `at`), Dana named by the question."""
    return ask(question, kind, [memory("m1", f"Dana: {said}", at)], entities=["Dana"])


# -- relative dates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "said", "phrase"),
    [
        ("I went to the chess club yesterday", "2025-03-11T09:20:00", "2025-03-10 (10 March 2025)"),
        ("I baked for the village fete last Saturday", "2025-04-24T16:05:00", "the Saturday before 24 April 2025 (2025-04-19)"),
        ("I joined the rowing club last Tues", "2025-08-14T18:40:00", "the Tuesday before 14 August 2025 (2025-08-12)"),
        ("The plumber came on Friday", "2025-08-12T09:00:00", "the Friday before 12 August 2025 (2025-08-08)"),
        ("We met on Friday 8 August", "2025-08-14T18:40:00", "2025-08-08 (8 August 2025)"),
        ("I told you about my pottery demo last week", "2025-02-06T19:10:00", "the week before 6 February 2025"),
        ("The ferry trip this past weekend was rough", "2025-11-19T10:00:00", "the weekend before 19 November 2025"),
        ("I built that garden shed last year", "2025-03-11T09:20:00", "2024"),
        ("I'm going to a conference this month", "2025-09-02T11:30:00", "September 2025"),
        ("We're thinking about repainting the kitchen next month", "2025-04-24T10:00:00", "May 2025"),
        ("We met on 5 August and talked", "2025-08-14T18:40:00", "2025-08-05 (5 August 2025)"),
    ],
)  # fmt: skip
def test_a_relative_date_is_resolved_against_when_it_was_said(
    sentence: str, said: str, phrase: str
) -> None:
    dated = resolve(sentence, ms(said))
    assert dated is not None
    assert dated.phrase == phrase
    assert dated.resolved


@pytest.mark.parametrize(
    "sentence", ["Nothing dated here", "In the past week I did a lot", "We talked at 9"]
)
def test_a_sentence_without_a_date_of_its_own_resolves_to_nothing(sentence: str) -> None:
    # "the past week" ends when the text was written: it dates nothing more than the text.
    assert resolve(sentence, ms("2025-08-14T18:40:00")) is None


def test_durations_are_read_as_stated() -> None:
    assert duration_in("I've kept bees for 4 years, since we bought the farm") == "4 years"
    assert duration_in("I started about five years ago and loved it") == "five years ago"
    assert duration_in("We moved in March") is None


# -- WHEN ----------------------------------------------------------------------------------------


def test_when_answers_with_the_resolved_date_alone_for_a_quoted_memory() -> None:
    answer, confidence = ask(
        "When did Dana go to the chess club?",
        IntentType.WHEN,
        [
            memory("m1", "Dana: I went to a chess club yesterday and it was fun.", "2025-03-11T09:20:00"),
            memory("m2", "Lee: I went hiking with my kids.", "2025-03-11T09:30:00", 0.5),
        ],
        entities=["Dana"],
    )  # fmt: skip
    assert answer.text == "2025-03-10 (10 March 2025)."
    assert answer.sources[0] == "m1"
    # The evidence stays in the reasoning.
    assert "chess club yesterday" in answer.reasoning.temporal_context[0]
    assert answer.evidence.entity == 1.0  # "Dana" found inside the quoted sentence
    assert confidence >= 0.6


def test_when_keeps_a_short_record_of_the_event_after_its_time() -> None:
    answer, _ = ask(
        "When did the build break?",
        IntentType.WHEN,
        [node("e1", "T_Event", "Nightly build broke on main", occurred_at=ms("2026-01-07T14:05:00"))],
    )  # fmt: skip
    assert answer.text == "2026-01-07 14:05 UTC (7 January 2026): Nightly build broke on main."


def test_a_record_of_an_event_is_dated_by_its_own_time_not_a_date_it_mentions() -> None:
    slipped = ms("2025-10-20T09:00:00")
    record = node("e1", "T_Event", "Beta launch slipped to next Monday", occurred_at=slipped)
    answer, _ = ask("When did the beta launch slip?", IntentType.WHEN, [record])
    assert answer.text.startswith("2025-10-20 09:00 UTC (20 October 2025)")
    # Someone's words with a clock time: the time is when it was said, its date is read.
    said = node("e2", "T_Event", "Dana: I slipped on the ice yesterday", occurred_at=slipped)
    answer, _ = ask("When did Dana slip?", IntentType.WHEN, [said], entities=["Dana"])
    assert answer.text == "2025-10-19 (19 October 2025)."


def test_how_long_is_answered_by_the_stated_duration() -> None:
    answer, with_duration = ask_dana(
        "How long has Dana kept bees?",
        IntentType.WHEN,
        "I've kept bees for 4 years, since we bought the farm.",
    )
    assert answer.text == "4 years."
    assert answer.evidence.shaped
    # Without a stated duration the answer is a date, not what was asked: trusted less.
    dated, without = ask_dana(
        "How long has Dana kept bees?",
        IntentType.WHEN,
        "I started keeping bees when we bought the farm.",
    )
    assert not dated.evidence.shaped
    assert without < with_duration


def test_a_question_that_asks_no_time_is_trusted_less_with_a_date() -> None:
    _, when = ask_dana(
        "When did Dana go to the aquarium?",
        IntentType.WHEN,
        "I went to the aquarium yesterday.",
        "2025-05-15T10:00:00",
    )
    answer, how = ask_dana(
        "How did Dana feel at the aquarium?",
        IntentType.WHEN,
        "I went to the aquarium yesterday.",
        "2025-05-15T10:00:00",
    )
    assert not answer.evidence.shaped
    assert how < when


def test_evidence_outside_the_asked_time_caps_the_confidence() -> None:
    events = [
        node("e1", "T_Event", "Database pool exhausted", occurred_at=ms("2026-01-05T09:15:00"))
    ]
    _, inside = ask("When was the database pool exhausted?", IntentType.WHEN, events)
    answer, outside = ask(
        "When was the database pool exhausted in 2024?",
        IntentType.WHEN,
        events,
        timeframe=Timeframe(
            phrase="2024",
            start=datetime(2024, 1, 1, tzinfo=UTC),
            end=datetime(2024, 12, 31, 23, 59, tzinfo=UTC),
        ),
    )  # fmt: skip
    assert answer.evidence.time == 0.0
    assert outside <= CONTRADICTED_CAP < inside


# -- WHAT / HOW MANY spans -----------------------------------------------------------------------


def test_what_is_answered_by_the_asked_span_of_the_sentence() -> None:
    answer, _ = ask_dana(
        "What sports does Dana coach?",
        IntentType.WHAT,
        "Yeah, I coach netball! It helps me relax.",
    )
    assert answer.text == "netball."
    assert answer.evidence.shaped


@pytest.mark.parametrize(
    ("question", "about", "sentence", "span"),
    [
        ("What did Dana study?", {"study"}, "Studying old railway maps, it's been a joy.", "old railway maps"),
        ("How many kids does Dana have?", {"kid"}, "I took my three kids to the beach.", "3"),
        # The asked word is the subject of what follows: no span, the sentence stays.
        ("What has Dana knitted?", {"knit"}, "This knitting is awesome.", None),
        # An amount keeps its currency sign.
        ("How much is the allotment rent?", {"allot", "rent"}, "allotment rent €65 a year, pay the treasurer", "€65 a year"),
        # A question for money is answered by the amount, with its unit.
        ("What was Dana paid an hour at first?", {"paid", "hour", "first"}, "started at the depot today, £11.40/hr", "£11.40/hr"),
        ("How much was Dana's ticket?", {"ticket"}, "ticket $41.50, booked the aisle", "$41.50"),
        # A new clause follows the asked word: no span.
        ("What does Dana do to relax?", {"relax"}, "A great way to relax and forget the week.", None),
        # A bare number keeps the kind it numbers.
        ("Which plot does Dana have?", {"plot"}, "dana's on plot 7 now, sunnier", "plot 7"),
        ("Which gate does Dana's flight leave from?", {"gat", "flight", "leav"}, "gate 14B, boarding 9:40", "gate 14B"),
    ],
)  # fmt: skip
def test_asked_spans(question: str, about: set[str], sentence: str, span: str | None) -> None:
    assert asked_span(question, about, sentence) == span


def test_a_what_question_answered_by_a_whole_sentence_is_trusted_less() -> None:
    found, with_span = ask_dana(
        "What sports does Dana coach?", IntentType.WHAT, "Yeah, I coach netball!"
    )
    sentence, without = ask_dana("What sports does Dana coach?", IntentType.WHAT, "Yeah, I coach!")
    assert found.evidence.shaped and not sentence.evidence.shaped
    assert without < with_span


# -- questions memory cannot answer --------------------------------------------------------------


def owner_graph() -> tuple[list[ContextNode], list[ContextEdge]]:
    nodes = [
        node("alice", "E_Entity", "Alice", entity_type="person"),
        node("auth", "E_Entity", "auth-service", entity_type="service"),
        node("team", "E_Entity", "Platform", entity_type="team"),
    ]
    edges = [
        ContextEdge(source="alice", target="auth", type="E_RELATES", label="owns"),
        ContextEdge(source="alice", target="team", type="E_RELATES", label="member_of"),
    ]
    return nodes, edges


def test_an_unanswerable_question_gets_a_low_confidence() -> None:
    nodes, edges = owner_graph()
    answered, sure = ask("Who owns auth-service?", IntentType.WHO, nodes, ["auth-service"], edges)
    assert answered.text.startswith("Alice owns auth-service")
    # An entity memory does not hold: nothing found.
    missing, none = ask(
        "Who owns the billing ledger?", IntentType.WHO, nodes, ["billing ledger"], edges
    )
    assert not missing.evidence.found
    # An entity memory holds, a detail it never recorded: its other facts answer nothing asked.
    detail, unsure = ask(
        "What is the SLA of auth-service?", IntentType.WHAT, nodes, ["auth-service"], edges
    )
    assert not detail.evidence.shaped
    assert none <= 0.1 < unsure < 0.4 < sure


def test_a_missing_asked_entity_lowers_the_confidence() -> None:
    events = [
        node("e1", "T_Event", "Ken joined the Mobile team", occurred_at=ms("2025-06-02T09:00:00"))
    ]
    edges = [
        ContextEdge(source="e1", target="ken", type="X_INVOLVES"),
        ContextEdge(source="e1", target="mobile", type="X_INVOLVES"),
    ]
    people = [
        node("ken", "E_Entity", "Ken"),
        node("mobile", "E_Entity", "Mobile"),
        node("data", "E_Entity", "Data"),
    ]
    right, sure = ask(
        "When did Ken join the Mobile team?",
        IntentType.WHEN,
        events + people,
        ["Ken", "Mobile"],
        edges,
    )
    wrong, unsure = ask(
        "When did Ken join the Data team?", IntentType.WHEN, events + people, ["Ken", "Data"], edges
    )
    assert right.evidence.entity == 1.0 and wrong.evidence.entity == 0.5
    assert unsure < sure - 0.2
    # Another entity altogether: capped.
    other, capped = ask(
        "When did Lena join the Data team?", IntentType.WHEN, events + people, ["Lena"], edges
    )
    assert other.evidence.entity == 0.0
    assert capped <= CONTRADICTED_CAP


def test_a_compound_question_answered_in_part_is_trusted_less() -> None:
    events = [
        node("e1", "T_Event", "Incident INC-7 resolved", occurred_at=ms("2026-01-12T10:00:00"))
    ]
    whole, sure = ask("When was incident INC-7 resolved?", IntentType.WHEN, events)
    part, unsure = ask(
        "When was incident INC-7 resolved and who paid the customer credits?",
        IntentType.WHEN,
        events,
    )
    assert whole.evidence.shaped and not part.evidence.shaped
    assert unsure < sure


def test_confidence_orders_the_evidence_factors() -> None:
    base = Evidence(match=1.0, entity=1.0, agreement=2, margin=0.5)
    assert confidence_of(
        Evidence(match=1.0, entity=1.0, agreement=2, margin=0.5, shaped=False)
    ) < confidence_of(base)
    assert confidence_of(Evidence(match=1.0, entity=0.5, agreement=2, margin=0.5)) < confidence_of(
        base
    )
    assert (
        confidence_of(Evidence(match=1.0, entity=0.0, agreement=2, margin=0.5)) <= CONTRADICTED_CAP
    )
    assert confidence_of(Evidence(found=False, match=1.0)) <= 0.1


def test_a_title_before_a_name_ends_no_sentence() -> None:
    text = "My new GP is Dr. Ilse Marr at Quayside. The clinic shuts on Fridays."
    assert best_sentence({"gp"}, text) == "My new GP is Dr. Ilse Marr at Quayside."


def test_what_is_left_of_a_possessive_or_a_contraction_is_no_asked_word() -> None:
    # "What's my niece's puppy called?": the "s" is no word "SHE'S HOME" holds.
    text = "SHE'S HOME. 8 wks, 2.1kg. they called him Pesto!!! tiny paws"
    wanted = terms("What's my niece's puppy called?")
    assert "s" not in wanted
    assert best_sentence(wanted, text) == "they called him Pesto!!!"


def test_a_few_words_give_way_to_a_sentence_that_can_hold_the_value() -> None:
    text = "NEW PB!!! 25:58 at Riverside this morning, legs are jelly"
    assert best_sentence({"fastest", "5k"}, text).startswith("25:58 at Riverside")


def test_a_current_schedule_is_answered_as_stated_not_as_a_day_it_fell_on() -> None:
    lesson = memory("m1", "Cello with Ines Abara moved to Sundays now, 11am", "2023-10-20T09:00:00")
    answer, _ = ask("When do I have cello with Abara?", IntentType.WHEN, [lesson])
    assert "Sundays" in answer.text
    assert "2023" not in answer.text
    pickup = memory("m2", "new bus route - pickup 7:15 starting Monday", "2023-10-20T09:00:00")
    answer, _ = ask("What time is the bus pickup?", IntentType.WHEN, [pickup])
    assert "7:15" in answer.text


@pytest.mark.parametrize(
    ("question", "sentence", "span"),
    [
        # A verb and its preposition after the asked word are no value: the sentence stays.
        ("What CI system are we on?", "CI runs on the Forgeline server ci-01", None),
        ("What does the user charge per hour?", "My hourly rate is 60 euros.", None),
        # A label's value follows its colon; a version keeps its decimals.
        ("What was my previous 5k best?", "5k PB: 27:42 at the Riverside parkrun", "27:42"),
        (
            "What Python version is Lanternfish pinned to?",
            "Lanternfish is pinned to Python 3.9.",
            "Python 3.9",
        ),
        # The name before the asked kind is what it is called; a capital joins it.
        ("Which veg box do we get?", "first Hedgerow box came, mostly kale", "Hedgerow"),
        (
            "Which bank do I use?",
            "switched to Calder Bank, the app is better",
            "Calder Bank",
        ),
        # ... not a unit, nor a name before a word the question asks about besides the kind.
        ("What speed is our broadband?", "internet: Solway Broadband 80Mb, acct 2281", "80Mb"),
        ("What speed was the old plan?", "Larkline, 500 Mbps plan, router in the hall", None),
        # A number before the asked kind names it; a percentage keeps its sign; a thing
        # asked with "pay" is no amount.
        ("Which bus does Ama take to work?", "commute: the 42 bus to St Clare's", "42"),
        ("What rate is the fix?", "2-yr fix 4.35%, Harrowgate BS", "4.35%"),
        (
            "Which venue did we pay the deposit to?",
            "venue Kilmory Hall - deposit £900 paid",
            "Kilmory Hall",
        ),
        # A label whose value the rule does not find is no answer: the sentence stays.
        ("What was the old shot recipe's yield?", "recipe card: 18g in / 36g out / 28s", None),
        # An amount keeps its sign after it; "paying" asks an amount.
        ("What did the tram pass cost me?", "monthly tram pass 86€, buy at the machine", "86€"),
        (
            "What was Noor paying per cello lesson?",
            "Noor cello w/ Ms Varga, £28 per lesson, tuesdays after school",
            "£28",
        ),
        # A question for a number to ring is answered by the phone number.
        (
            "What number do I ring if the boiler breaks?",
            "boiler died AGAIN, rang 0345 601 8899, engineer came at 4",
            "0345 601 8899",
        ),
        ("What's Hamid's mobile?", "hamid mob 07700 914 332, text first", "07700 914 332"),
        # A clause that places the question in time anchors no span: the sentence stays.
        (
            "Which firm was Odile at when she knew the depot crew?",
            "odile - payroll at Carrowmore Freight, knows the depot crew well",
            None,
        ),
        (
            "Before the merger, what time was the depot opening?",
            "merger talks dragging on, depot opens at 5am sharp",
            "5am sharp",
        ),
    ],
)
def test_a_span_is_a_value_not_a_verb_or_a_label(
    question: str, sentence: str, span: str | None
) -> None:
    assert asked_span(question, terms(question), sentence) == span


def test_a_focus_with_nothing_recorded_is_answered_by_the_stored_text() -> None:
    focus = node("e1", "E_Entity", "Taxes", 1.0, entity_type="person")
    note = memory("m1", "Taxes: Greta Holm CPA does ours, about 400 a year", "2023-10-01T09:00:00")
    answer, _ = ask("Who does our taxes?", IntentType.WHO, [focus, note], entities=["Taxes"])
    assert "Greta Holm" in answer.text
    assert "no current facts" not in answer.text


def test_a_when_question_about_now_is_answered_by_the_update_not_what_it_changed() -> None:
    old = node(
        "m1",
        "S_Memory",
        "Kitchen reno: Larchwood Builders, start Mar 3, about six weeks",
        0.9,
        created_at=ms("2023-03-01T09:00:00"),
        superseded_by="m2",
    )
    new = memory("m2", "Larchwood pushed the kitchen start to Apr 14", "2023-10-01T09:00:00")
    answer, _ = ask("What's the start date for the kitchen reno?", IntentType.WHEN, [old, new])
    assert "Apr" in answer.text or "April" in answer.text
    assert "Mar" not in answer.text.split("Until")[0]


def test_an_updates_sentence_that_says_the_change_holds_the_new_value() -> None:
    text = "Dairy and the oat stuff are out completely. Just a black americano for me now."
    assert best_sentence({"coffee"}, text, says_change).startswith("Just a black americano")
    # A few words that say a change ("NEW PB!!!") still give way to a sentence with a value.
    text = "NEW PB!!! 25:58 at Riverside this morning, legs are jelly"
    assert best_sentence({"fastest", "5k"}, text, says_change).startswith("25:58")


def test_a_time_asked_before_a_change_is_the_changed_notes_stated_time() -> None:
    old = memory("m1", "Ines Okoro usually goes to bed around 11:30pm.", "2023-03-01T09:00:00")
    old = old.model_copy(update={"attributes": {**old.attributes, "superseded_by": "m2"}})
    new = memory(
        "m2",
        "Sleep experiment week 6: Ines now does lights out at 10pm sharp.",
        "2023-09-20T09:00:00",
    )
    answer, _ = ask(
        "What time did Ines go to bed before the sleep experiment?", IntentType.WHEN, [old, new]
    )
    assert "11:30pm" in answer.text
    assert "2023-03-01" not in answer.text


def test_a_day_in_a_labelled_planning_note_is_read_ahead() -> None:
    note = memory("m1", "Kestrel launch target: June 12.", "2023-02-01T09:00:00")
    answer, _ = ask("What date was the Kestrel launch planned for?", IntentType.WHEN, [note])
    assert "2023-06-12" in answer.text


def test_asked_before_a_change_the_changed_memory_answers_without_an_asked_word() -> None:
    old = memory(
        "m1", "Checkup: BP 145/95, doc wants to recheck in 3 months.", "2023-03-01T09:00:00"
    )
    old = old.model_copy(update={"attributes": {**old.attributes, "superseded_by": "m2"}})
    new = memory("m2", "log: BP 128/82 at pharmacy, meds working.", "2023-09-20T09:00:00", 1.001)
    answer, _ = ask("What was my blood pressure before the meds?", IntentType.WHEN, [old, new])
    assert answer.text.startswith("Checkup: BP 145/95")


def test_a_memory_about_someone_close_to_whom_is_asked_does_not_answer_for_now() -> None:
    # Recall marked the sister's news as about someone close to Tomasz; it is the latest
    # memory naming him and scores a hair higher, but says nothing of where he works.
    old = memory("m1", "Tomasz Wrobel works as a surveyor at Kellan Homes.", "2023-01-01T09:00:00")
    old = old.model_copy(update={"attributes": {**old.attributes, "superseded_by": "m2"}})
    new = memory("m2", "Tomasz: first month at Brightwater went fine.", "2023-08-01T09:00:00")
    sister = node(
        "m3",
        "S_Memory",
        "Tomasz's sister Ola just got promoted at Kellan Homes.",
        1.01,
        created_at=ms("2023-10-01T09:00:00"),
        about_someone_close=True,
    )
    answer, _ = ask(
        "Where does Tomasz work at the moment?", IntentType.WHAT, [old, new, sister], ["Tomasz"]
    )
    assert "Brightwater" in answer.text
    assert "Ola" not in answer.text


def test_no_before_a_number_ends_no_sentence() -> None:
    text = "ines new no. 07781 204 919 - the old one is gone. Call after six."
    assert best_sentence({"ines", "number"}, text).startswith("ines new no. 07781 204 919")
    assert best_sentence({"six"}, "I said no. Call after six.") == "Call after six."


def test_a_short_update_is_quoted_whole() -> None:
    # The update's first sentence says the change, its second holds the value asked.
    old = node(
        "m1",
        "S_Memory",
        "Broadband: Velocity 80Mb, account VB-2281.",
        0.9,
        created_at=ms("2023-01-01T09:00:00"),
        superseded_by="m2",
    )
    new = memory(
        "m2", "Engineer came today, router in the hall now. Lumenet, 900Mb!", "2023-08-01T09:00:00"
    )
    answer, _ = ask("Who's our home internet provider?", IntentType.WHO, [old, new])
    assert answer.text.startswith("Engineer came today, router in the hall now. Lumenet")
    assert "Until 2023-08-01: Broadband: Velocity" in answer.text


def test_the_value_before_a_change_answers_asked_with_a_window_or_before_a_deed() -> None:
    assert asks_previous("How did Ode get to work before she moved?")
    assert not asks_previous("When did Ode move?")
    old = changed(
        "m1", "Kestrel launch: Q3 ad budget approved at $40k.", "2023-01-05T09:00:00", "m2"
    )
    new = memory("m2", "Finance cut Kestrel's Q3 spend to $25k.", "2023-06-01T09:00:00", 0.9999)
    # "Q3" and "this month" are read as windows; recall marked the change: the value held
    # before it answers, not the update.
    window = Timeframe(start=datetime(2023, 7, 1, tzinfo=UTC), phrase="Q3")
    for question in (
        "What was Kestrel's Q3 ad budget before the cuts?",
        "What was Kestrel's ad budget before this month?",
    ):
        answer, _ = ask(question, IntentType.WHAT, [old, new], timeframe=window)
        assert answer.text.startswith("Kestrel launch: Q3 ad budget approved at $40k"), question


@pytest.mark.parametrize(
    ("text", "question", "stated"),
    [
        # A habit asked of before.
        ("Noa's swimming: sat 9am at Linden pool.", "When did Noa used to have swimming?", "9am"),
        # A day of the month asked for now.
        ("new job - rent money lands on the 20th now", "What date do I get paid?", "20th"),
        # How late or early something is open, asked for now.
        ("lido open till 9pm on weekdays from may", "How late is the lido open?", "9pm"),
        # A habit asked as "use to", and a frequency asked of the past.
        ("plan: swim mon+wed 7am before work", "When did I use to swim?", "7am"),
        (
            "harbour ferry every 30 min from the pier, first one 6:40",
            "How often did the harbour ferry run before the cuts?",
            "every 30 min",
        ),
        # The day of the week of what recurs, asked of before.
        ("kai youth judo thursdays 5pm", "What day was Kai's judo before the squad?", "thursdays"),
        # A clock time written with a dot, asked for now, by "what time", and of before a
        # change.
        ("school run, coffee, hens at 9.15 - much calmer", "When do I feed the hens?", "9.15"),
        ("the 31 from the square 7.45, last back 5.20", "What time's the first 31?", "7.45"),
        (
            "31 bus from the square 8.10 to town",
            "When did the 31 leave before the timetable change?",
            "8.10",
        ),
        # What someone can do now, on the days that recur.
        ("oskar can do weekdays only now, sundays are family", "When can Oskar work?", "weekdays"),
        # A length written with a hyphen.
        ("2-week sprints, planning mon, demo fri", "How long were our sprints before?", "2-week"),
    ],
)
def test_a_schedule_asked_of_a_habit_or_for_now_is_answered_as_stated(
    text: str, question: str, stated: str
) -> None:
    note = memory("m1", text, "2023-01-01T09:00:00")
    answer, _ = ask(question, IntentType.WHEN, [note])
    assert stated in answer.text
    assert "2023-01-01" not in answer.text


def test_a_time_asked_for_now_comes_from_the_later_version_not_anothers_note() -> None:
    old = changed("m1", "routine: hens fed 6.00, then the school run", "2023-01-05T09:00:00", "m2")
    new = memory("m2", "drop-off, coffee, hens at 9.15 - calmer", "2023-06-01T09:00:00", 0.99)
    # Another's note shares more of the asked words.
    other = memory("m3", "Bryn feeds his hens at 6.00 still", "2023-06-10T09:00:00", 0.5)
    answer, _ = ask("When do I feed the hens?", IntentType.WHEN, [old, new, other])
    assert "9.15" in answer.text


def test_a_short_memory_is_whole_when_only_a_name_chose_its_sentence_or_it_was_changed() -> None:
    # The sentence naming Ode holds no other asked word: the one after it holds the city.
    note = memory("m1", "party at Ode's fri!! it's 4 Kiln Row, Leeds.", "2023-03-05T09:00:00")
    answer, _ = ask("Which city is Ode living in these days?", IntentType.WHAT, [note], ["Ode"])
    assert "Leeds" in answer.text
    # Asked what held before, a short memory a later one changed is quoted whole, not a
    # span of it ("C" of "bay C").
    old = changed("m1", "depot shift 6am, Ode in bay C", "2023-01-05T09:00:00", "m2")
    new = memory(
        "m2", "Ode cycles in since the move, bike shed by gate 2", "2023-06-01T09:00:00", 0.99
    )
    answer, _ = ask("Which bay did Ode park in before?", IntentType.WHAT, [old, new], ["Ode"])
    assert "bay C" in answer.text


def test_the_asked_kind_and_the_word_after_it_are_one_noun_not_a_value() -> None:
    # "car park" is no car; "gate B" names the gate, and keeps the kind it names, as a
    # number does ("plot 7").
    question = "What car does Imani drive?"
    about = terms(question) - {"imani"}
    assert asked_span(question, about, "meet her at the front, not the car park") is None
    question = "Which gate does Imani use?"
    assert asked_span(question, terms(question) - {"imani"}, "Imani at gate B") == "gate B"


def test_a_name_after_the_asked_relation_is_its_subject_not_the_value() -> None:
    question = "What was my sister's big hobby before?"
    about = terms(question)
    assert asked_span(question, about, "My sister Ottilie is obsessed with rowing.") is None


def test_hours_as_a_range_and_a_time_of_day_in_words_state_a_schedule() -> None:
    assert states_schedule("Book calls in the 9-12 window; afternoons are for drawing.")
    assert states_schedule("swimming at teatime now, the early slot was too much")
    assert not states_schedule("went to the dentist, all fine")
