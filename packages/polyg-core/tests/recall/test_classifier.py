"""The rule classifier on the seeds' example questions and arbitrary text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.recall.classifier import RuleClassifier
from polyg_core.text.normalize import normalize_name
from polyg_shared.intents import CausalDirection, Intent, IntentType, default_depth_hints

REF = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)  # a Wednesday
KNOWN = [
    (name, normalize_name(name))
    for name in [
        "auth-service",
        "payment-service",
        "deploy-v2.3.1",
        "AUTH_SECRET",
        "Project X",
        "Alice",
        "PostgreSQL",
    ]
]

WHY, WHEN, WHO, WHAT, EXPLORE = (
    IntentType.WHY,
    IntentType.WHEN,
    IntentType.WHO,
    IntentType.WHAT,
    IntentType.EXPLORE,
)


@pytest.mark.parametrize(
    ("question", "intent_type", "entities"),
    [
        ("Why did the auth service fail?", WHY, ["auth-service"]),
        ("Why did the deployment fail last Tuesday?", WHY, []),
        ("Why did the build fail?", WHY, []),
        ("Why did auth crash?", WHY, ["auth-service"]),
        ("Why did auth fail after Tuesday's deploy?", WHY, ["auth-service"]),
        ("What caused the outage?", WHY, []),
        ("What led to the AuthService crash?", WHY, ["auth-service"]),
        ("Why did the database connections run out?", WHY, []),
        ("What happened last Tuesday?", WHEN, []),
        ("When did the deploy fail?", WHEN, []),
        ("Show me the timeline of deploy-v2.3.1", WHEN, ["deploy-v2.3.1"]),
        ("What was true on 2024-03-15?", WHEN, []),
        ("Who is working on Project X?", WHO, ["Project X"]),
        ("Who owns the payment service?", WHO, ["payment-service"]),
        ("Which team owns the payment service?", WHO, ["payment-service"]),
        ("Whose change removed AUTH_SECRET?", WHO, ["AUTH_SECRET"]),
        ("What is Alice working on?", WHAT, ["Alice"]),
        ("What is the status of the migration?", WHAT, []),
        ("Describe the auth service", WHAT, ["auth-service"]),
        ("What version of postgresql do we run?", WHAT, ["PostgreSQL"]),
        ("Tell me about the deployment", EXPLORE, []),
        ("What do we know about the auth system?", EXPLORE, ["auth-service"]),
        ("Summarize everything about payment-service", EXPLORE, ["payment-service"]),
        ("hello there", EXPLORE, []),
        # "when" opening a clause inside a question for a thing or a person asks no time.
        ("What seat should you pick when booking my flights?", WHAT, []),
        ("Who covers the pager when Alice is away?", WHO, ["Alice"]),
        # ... or for an amount.
        ("How much did Alice charge when she fixed the shelves?", WHAT, ["Alice"]),
        ("Do you remember when Alice joined?", WHEN, ["Alice"]),
        ("What time is the standup?", WHEN, []),
    ],
)
def test_example_questions_classify(
    question: str, intent_type: IntentType, entities: list[str]
) -> None:
    intent = RuleClassifier().classify(question, KNOWN, REF)
    assert intent.type == intent_type
    assert [e for e in intent.entities if e in dict(KNOWN)] == entities
    assert intent.depth_hints == default_depth_hints(intent_type)


def test_depth_hints_follow_seed_001_table() -> None:
    why = RuleClassifier().classify("Why did the auth service fail?", KNOWN, REF).depth_hints
    when = RuleClassifier().classify("When did it fail?", KNOWN, REF).depth_hints
    who = RuleClassifier().classify("Who owns it?", KNOWN, REF).depth_hints
    explore = RuleClassifier().classify("Tell me about it", KNOWN, REF).depth_hints
    assert (why.semantic, why.entity, why.temporal, why.causal) == (1, 1, 1, 3)
    assert (when.semantic, when.entity, when.temporal, when.causal) == (1, 1, 3, 1)
    assert (who.semantic, who.entity, who.temporal, who.causal) == (1, 2, 1, 1)
    assert (explore.semantic, explore.entity, explore.temporal, explore.causal) == (2, 2, 2, 2)


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        ("Why did the auth service fail?", CausalDirection.UPSTREAM),
        ("What caused the outage?", CausalDirection.UPSTREAM),
        ("What happens if AUTH_SECRET is removed?", CausalDirection.DOWNSTREAM),
        ("What is the impact of deploy-v2.3.1 on auth-service?", CausalDirection.DOWNSTREAM),
        ("What was the effect of the migration?", CausalDirection.DOWNSTREAM),
        ("Who owns the payment service?", CausalDirection.BOTH),
    ],
)
def test_causal_direction(question: str, direction: CausalDirection) -> None:
    intent = RuleClassifier().classify(question, KNOWN, REF)
    assert intent.causal_direction == direction
    if direction == CausalDirection.DOWNSTREAM:
        assert intent.type == WHY


def test_known_names_match_in_any_spelling_and_near_misses() -> None:
    known = [("AuthService", "authservice")]
    for question in [
        "Why did the auth service fail?",
        "why did auth-service fail",
        "Why did AUTH_SERVICE fail?",
        "Why did the authservise fail?",  # a typo, ratio >= 90
    ]:
        assert RuleClassifier().classify(question, known, REF).entities == ["AuthService"]


def test_new_names_are_reported_when_unknown() -> None:
    intent = RuleClassifier().classify("Who is working on Project Zephyr?", [], REF)
    assert intent.entities == ["Project Zephyr"]


def test_timeframe_is_resolved_against_the_reference() -> None:
    intent = RuleClassifier().classify("What happened last Tuesday?", KNOWN, REF)
    assert intent.timeframe is not None
    assert intent.timeframe.start == datetime(2026, 1, 13, tzinfo=UTC)
    assert intent.timeframe.end == datetime(2026, 1, 14, tzinfo=UTC) - timedelta(milliseconds=1)
    assert intent.timeframe.phrase == "last Tuesday"


def test_semantic_query_drops_question_and_time_words() -> None:
    intent = RuleClassifier().classify("Why did the auth service fail yesterday?", KNOWN, REF)
    assert intent.semantic_query == "auth service fail"


@pytest.mark.parametrize(
    ("question", "inferential"),
    [
        ("Would Alice likely enjoy a theme park?", True),
        ("Would Bob be considered a morning person?", True),
        ("What might the payments team do next quarter?", True),
        ("Is the auth service probably down?", True),
        ("When did Alice join the auth team?", False),
        ("What would you like to know about Bob?", False),
    ],
)
def test_inferential_questions_are_flagged_and_lose_their_hedges(
    question: str, inferential: bool
) -> None:
    intent = RuleClassifier().classify(question, KNOWN, REF)
    assert intent.inferential is inferential
    hedges = {"would", "might", "likely", "probably", "considered"}
    assert not hedges.intersection(intent.semantic_query.lower().split())


def test_confidence_is_low_without_cues() -> None:
    vague = RuleClassifier().classify("auth service", KNOWN, REF)
    clear = RuleClassifier().classify("Why did the auth service fail?", KNOWN, REF)
    assert vague.type == EXPLORE
    assert vague.confidence < 0.5 < clear.confidence


@pytest.mark.parametrize(
    ("question", "multi_hop"),
    [
        ("Why did the auth service fail?", False),
        ("How is Alice related to the payment service?", True),
        ("Did deploy-v2.3.1 break auth-service?", True),
        ("What chain of events led to the outage?", True),
    ],
)
def test_multi_hop(question: str, multi_hop: bool) -> None:
    assert RuleClassifier().classify(question, KNOWN, REF).multi_hop is multi_hop


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_any_text_gives_a_valid_intent(question: str) -> None:
    intent = RuleClassifier().classify(question, KNOWN, REF)
    assert Intent.model_validate(intent.model_dump()) == intent
    assert 0.0 <= intent.confidence <= 1.0


@settings(max_examples=100)
@given(
    st.lists(
        st.sampled_from(
            ["why", "when", "who", "what", "auth", "service", "Alice", "last", "Tuesday", "the",
             "AUTH_SECRET", "impact", "of", "since", "2024-03-15", "?", "caused", "team"]
        ),
        max_size=12,
    ).map(" ".join)
)  # fmt: skip
def test_cue_word_soup_gives_a_valid_intent(question: str) -> None:
    intent = RuleClassifier().classify(question, KNOWN, REF)
    assert Intent.model_validate(intent.model_dump()) == intent


def test_a_date_is_a_timeframe_never_an_entity() -> None:
    intent = RuleClassifier().classify("What happened to Alice on Jan 5?", KNOWN, REF)
    assert intent.entities == ["Alice"]
    assert intent.timeframe is not None and intent.timeframe.phrase == "Jan 5"
    quarter = RuleClassifier().classify("What did Alice ship in Q4 2025?", KNOWN, REF)
    assert quarter.entities == ["Alice"]
    assert quarter.timeframe is not None
    assert quarter.timeframe.start == datetime(2025, 10, 1, tzinfo=UTC)


def test_what_happened_to_something_asks_for_events() -> None:
    intent = RuleClassifier().classify(
        "What happened to payment-service during the outage?", KNOWN, REF
    )
    assert intent.type == WHEN
    assert intent.entities == ["payment-service"]


@pytest.mark.parametrize(
    ("question", "intent_type"),
    [
        # A value at a time is WHAT (or WHO) at that time, not WHEN.
        ("What did Alice work on before June 2025?", IntentType.WHAT),
        ("Where did Alice live in 2024?", IntentType.WHAT),
        ("What did Alice do during March 2025?", IntentType.WHAT),
        ("Who did Alice report to after 2024?", IntentType.WHO),
        ("How did Alice take her coffee before?", IntentType.WHAT),
        # A time, a duration or a frequency is WHEN, whatever the question is about.
        ("When did Alice move to Munich?", IntentType.WHEN),
        ("How long was the auth outage?", IntentType.WHEN),
        ("How often does Alice run the restore drill?", IntentType.WHEN),
        ("How long has Alice lived in Munich?", IntentType.WHEN),
        ("What happened to Alice in October?", IntentType.WHEN),
        ("Where does Alice live?", IntentType.WHAT),
    ],
)
def test_the_classifier_tells_when_from_what_at_a_time(
    question: str, intent_type: IntentType
) -> None:
    assert RuleClassifier().classify(question, KNOWN, REF).type == intent_type


def test_before_without_a_time_asks_for_history() -> None:
    intent = RuleClassifier().classify("How did Alice take her coffee before?", KNOWN, REF)
    assert intent.history
    assert intent.timeframe is None


@pytest.mark.parametrize(
    ("question", "intent_type"),
    [
        # An amount is a value, at any time it held; "how much time" a duration.
        ("How much is the rent on the Quay Street flat?", WHAT),
        ("How much was I paying into the savings pot before the raise?", WHAT),
        # ... at a time, named by no one: still an amount.
        ("How much was I putting into my pension last year before April?", WHAT),
        ("How much time does the nightly build take?", None),
    ],
)
def test_how_much_asks_an_amount(question: str, intent_type: IntentType | None) -> None:
    got = RuleClassifier().classify(question, KNOWN, REF).type
    if intent_type is None:
        assert got is not WHAT
    else:
        assert got is intent_type


def test_when_before_what_one_is_doing_asks_no_time() -> None:
    rules = RuleClassifier()
    assert rules.classify("Should I pick aisle or window when booking Ola's trains?").type != (
        IntentType.WHEN
    )
    assert rules.classify("Did Ola call when the storm hit?").type == IntentType.WHEN


@pytest.mark.parametrize(
    ("question", "intent_type"),
    [
        # A clause of time before the comma; the question after it asks for a value.
        ("Back when Odile still kept geese, what did she eat?", WHAT),
        ("When we lived in Harrowby, who was our GP?", IntentType.WHO),
        ("When Ana moved, where did she go?", WHAT),
        # A time is still asked when the clause is the question.
        ("When is the dentist, and what should I bring?", IntentType.WHEN),
        ("When did the 31 leave before the timetable change?", IntentType.WHEN),
    ],
)
def test_a_clause_of_time_before_a_question_for_a_value(
    question: str, intent_type: IntentType
) -> None:
    assert RuleClassifier().classify(question, KNOWN, REF).type is intent_type
