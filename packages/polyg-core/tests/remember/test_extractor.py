"""The rule extractor on narratives, facts, instructions and arbitrary text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.remember.extractor import RuleExtractor
from polyg_shared.intents import Extraction
from polyg_shared.nodes import MemoryCategory

REF = datetime(2026, 1, 7, 16, 0, tzinfo=UTC)
NARRATIVE = (
    "Deploy v2.3.1 removed AUTH_SECRET from the config. "
    "Because AUTH_SECRET was missing, the auth-service crashed at 14:30."
)
KNOWN = ["deploy-v2.3.1", "AUTH_SECRET", "auth-service"]


def test_deployment_failure_yields_entities_with_types() -> None:
    extraction = RuleExtractor().extract(NARRATIVE, KNOWN, REF)
    assert {(e.name, e.entity_type) for e in extraction.entities} == {
        ("deploy-v2.3.1", "deployment"),
        ("AUTH_SECRET", "config"),
        ("auth-service", "service"),
    }


def test_unknown_names_are_found_from_their_shape() -> None:
    extraction = RuleExtractor().extract(NARRATIVE, [], REF)
    assert {(e.name, e.entity_type) for e in extraction.entities} == {
        ("Deploy v2.3.1", "deployment"),
        ("AUTH_SECRET", "config"),
        ("auth-service", "service"),
    }


def test_deployment_failure_yields_timed_events() -> None:
    events = RuleExtractor().extract(NARRATIVE, KNOWN, REF).events
    assert [(e.description, e.occurred_at, e.entities) for e in events] == [
        (
            "Deploy v2.3.1 removed AUTH_SECRET from the config",
            REF,  # no time of its own: the reference time
            ["deploy-v2.3.1", "AUTH_SECRET"],
        ),
        (
            "Because AUTH_SECRET was missing, the auth-service crashed at 14:30",
            datetime(2026, 1, 7, 14, 30, tzinfo=UTC),
            ["AUTH_SECRET", "auth-service"],
        ),
    ]


def test_deployment_failure_yields_a_causal_chain() -> None:
    links = RuleExtractor().extract(NARRATIVE, KNOWN, REF).causal_links
    pairs = [(link.cause, link.effect, link.confidence) for link in links]
    assert ("AUTH_SECRET was missing", "auth-service crashed", 0.7) in pairs
    # The removal explains the missing secret: chained with a lower confidence.
    assert (
        "Deploy v2.3.1 removed AUTH_SECRET from the config",
        "AUTH_SECRET was missing",
        0.5,
    ) in pairs
    explicit = next(link for link in links if link.confidence == 0.7)
    assert explicit.evidence == (
        "Because AUTH_SECRET was missing, the auth-service crashed at 14:30."
    )
    assert set(explicit.entities) == {"AUTH_SECRET", "auth-service"}


@pytest.mark.parametrize(
    ("text", "cause", "effect"),
    [
        ("The traffic spike caused connection pool exhaustion.", "traffic spike", "connection pool exhaustion"),
        ("The outage was caused by a bad config push.", "bad config push", "outage"),
        ("The cache went cold because Redis restarted.", "Redis restarted", "cache went cold"),
        ("Logins failed due to an expired certificate.", "expired certificate", "Logins failed"),
        ("The memory leak led to repeated OOM kills.", "memory leak", "repeated OOM kills"),
        ("A schema change resulted in slow queries.", "schema change", "slow queries"),
        ("The disk filled up; therefore the writes failed.", "disk filled up", "writes failed"),
        ("The disk filled up. Therefore, the writes failed.", "disk filled up", "writes failed"),
    ],
)  # fmt: skip
def test_causal_cue_words(text: str, cause: str, effect: str) -> None:
    links = RuleExtractor().extract(text, [], REF).causal_links
    assert [(link.cause, link.effect) for link in links] == [(cause, effect)]
    assert links[0].confidence == 0.7


def test_so_is_a_weaker_cue() -> None:
    links = RuleExtractor().extract("The pool was exhausted, so we raised its size.", [], REF)
    assert [(c.cause, c.effect, c.confidence) for c in links.causal_links] == [
        ("pool was exhausted", "we raised its size", 0.6)
    ]


def test_facts_and_relations() -> None:
    text = "Alice works on the auth service. Bob owns PaymentGateway. Alice is the tech lead."
    extraction = RuleExtractor().extract(text, ["auth-service"], REF)
    assert [(f.subject, f.predicate, f.object) for f in extraction.facts] == [
        ("Alice", "works_on", "auth-service"),
        ("Bob", "owns", "PaymentGateway"),
        ("Alice", "is", "tech lead"),
    ]
    assert all(f.valid_from == REF and f.valid_to is None for f in extraction.facts)
    assert [(r.source, r.target, r.relationship_type) for r in extraction.relations] == [
        ("Alice", "auth-service", "works_on"),
        ("Bob", "PaymentGateway", "owns"),
    ]
    assert ("Alice", "person") in {(e.name, e.entity_type) for e in extraction.entities}


def test_sentences_without_a_time_take_the_last_time_named() -> None:
    text = "Yesterday at 09:15 the pool was exhausted. Then the API crashed."
    events = RuleExtractor().extract(text, [], REF).events
    assert [e.occurred_at for e in events] == [datetime(2026, 1, 6, 9, 15, tzinfo=UTC)] * 2


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("To deploy, run make deploy. Then check the dashboard.", MemoryCategory.PROCEDURAL),
        ("How to rotate secrets: open the vault and create a new key.", MemoryCategory.PROCEDURAL),
        ("Restart the worker. Check the logs.", MemoryCategory.PROCEDURAL),
        (NARRATIVE, MemoryCategory.EPISODIC),
        ("PostgreSQL stores data in tables.", MemoryCategory.SEMANTIC),
        ("Alice works on the auth service.", MemoryCategory.SEMANTIC),
    ],
)
def test_category(text: str, category: MemoryCategory) -> None:
    assert RuleExtractor().extract(text, [], REF).category == category


def test_concepts_are_a_few_salient_phrases_not_entities() -> None:
    text = (
        "The connection pool was exhausted during the traffic spike. "
        "We doubled the connection pool size after the traffic spike."
    )
    concepts = RuleExtractor(max_concepts=3).extract(text, [], REF).concepts
    names = [c.name for c in concepts]
    assert 1 <= len(names) <= 3
    assert "connection pool" in names and "traffic spike" in names
    assert all(c.description for c in concepts)


@settings(max_examples=150)
@given(st.text(max_size=400))
def test_any_text_gives_a_valid_extraction(text: str) -> None:
    extraction = RuleExtractor().extract(text, KNOWN, REF)
    assert Extraction.model_validate(extraction.model_dump()) == extraction


@settings(max_examples=100)
@given(
    st.lists(
        st.sampled_from(
            ["Because", "because", "AUTH_SECRET", "was", "missing", ",", ".", "the", "auth-service",
             "crashed", "at", "14:30", "caused", "led to", "so", "Therefore", "Alice", "works on",
             "yesterday", "deploy-v2.3.1", "is", "a", "run"]
        ),
        max_size=25,
    ).map(" ".join)
)  # fmt: skip
def test_narrative_soup_gives_a_valid_extraction(text: str) -> None:
    extraction = RuleExtractor().extract(text, KNOWN, REF)
    assert Extraction.model_validate(extraction.model_dump()) == extraction


# --- people, moves, and what must not become an entity or a concept ------------------------


def test_a_move_between_teams_gives_people_teams_and_facts() -> None:
    x = RuleExtractor().extract(
        "Alice moved from the payments team to the auth team on June 1st.", [], REF
    )
    june_1 = datetime(2025, 6, 1, tzinfo=UTC)
    assert {(e.name, e.entity_type) for e in x.entities} == {
        ("Alice", "person"),
        ("payments team", "team"),
        ("auth team", "team"),
    }
    facts = {(f.subject, f.predicate, f.object): f for f in x.facts}
    assert set(facts) == {
        ("Alice", "member_of", "payments team"),
        ("Alice", "member_of", "auth team"),
    }
    assert facts["Alice", "member_of", "auth team"].valid_from == june_1
    assert facts["Alice", "member_of", "auth team"].valid_to is None
    assert facts["Alice", "member_of", "payments team"].valid_to == june_1
    # The ended fact comes first, so the one replacing it is written after it.
    assert x.facts[-1].object == "auth team"
    # The relation to the new team carries the move's date.
    assert [
        (r.source, r.relationship_type, r.target, r.valid_from, r.valid_to) for r in x.relations
    ] == [("Alice", "member_of", "auth team", june_1, None)]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Omar joined the platform team on Monday.", ("Omar", "member_of", "platform team")),
        ("Dmitri joined Northwind Bank in 2024.", ("Dmitri", "works_at", "Northwind Bank")),
        ("Kevin moved from Boston to Denver.", ("Kevin", "lives_in", "Denver")),
        ("Rachel works at Lumen Labs.", ("Rachel", "works_at", "Lumen Labs")),
        ("Maya: I moved to Lisbon last year.", ("Maya", "lives_in", "Lisbon")),
        ("The growth team owns the notification-service.", ("growth team", "owns", "notification-service")),
        ("The notification-service is owned by the growth team.", ("growth team", "owns", "notification-service")),
        ("Felix joined the billing squad and reports to Marta.", ("Felix", "reports_to", "Marta")),
    ],
)  # fmt: skip
def test_memberships_and_their_predicates(text: str, fact: tuple[str, str, str]) -> None:
    x = RuleExtractor().extract(text, [], REF)
    assert fact in {(f.subject, f.predicate, f.object) for f in x.facts}


def test_leaving_ends_a_membership_at_the_sentence_time() -> None:
    x = RuleExtractor().extract("Sam left the infra team yesterday.", [], REF)
    [fact] = x.facts
    assert (fact.subject, fact.predicate, fact.object) == ("Sam", "member_of", "infra team")
    assert fact.valid_to == datetime(2026, 1, 6, tzinfo=UTC)
    assert x.relations == []  # a membership that ended is no current relation


@pytest.mark.parametrize(
    "text",
    [
        "We ran 14 miles on Fri.",
        "We need 14 of them instead of 12.",
        "On June 14 the pool was exhausted.",
        "The Q4 freeze starts on 15 December and lasts 2 weeks.",
    ],
)
def test_numbers_and_dates_are_not_entities(text: str) -> None:
    x = RuleExtractor().extract(text, [], REF)
    assert x.entities == []
    assert not any(ch.isdigit() for c in x.concepts for ch in c.name)


@pytest.mark.parametrize(
    "text",
    [
        "I think running is better than swimming instead.",
        "That is so much better than last time, honestly.",
        "Honestly I'd rather stay home instead of going out tonight.",
    ],
)
def test_stop_words_are_not_concepts(text: str) -> None:
    x = RuleExtractor().extract(text, [], REF)
    words = {w for c in x.concepts for w in c.name.split()}
    assert not words & {"better", "instead", "honestly", "think"}
    assert x.entities == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hey Carla! I went to the swim club yesterday.", "Carla"),
        ("Hi Maya, congrats on the new job!", "Maya"),
        ("Thanks Priya, the class was amazing.", "Priya"),
        ("Good morning Oliver! Did you finish the plan?", "Oliver"),
        ("Congratulations Arjun!", "Arjun"),
    ],
)
def test_a_greeting_names_the_person_not_the_greeting(text: str, name: str) -> None:
    x = RuleExtractor().extract(text, [], REF)
    assert [(e.name, e.entity_type) for e in x.entities] == [(name, "person")]
    assert not {c.name for c in x.concepts} & {"hey", "hi", "thanks", "good", "congratulations"}


@pytest.mark.parametrize(
    "text", ["Hey!", "Hi there, good morning!", "ok sounds good", "Wow, thanks!"]
)
def test_small_talk_gives_no_entities(text: str) -> None:
    assert RuleExtractor().extract(text, [], REF).entities == []


def test_a_speaker_prefix_is_a_person_and_i_is_the_speaker() -> None:
    x = RuleExtractor().extract("Tom: I live in Lisbon with my sister Jane.", [], REF)
    assert {(e.name, e.entity_type) for e in x.entities} == {
        ("Tom", "person"),
        ("Lisbon", "place"),
        ("Jane", "person"),
    }
    assert [(f.subject, f.predicate, f.object) for f in x.facts] == [("Tom", "lives_in", "Lisbon")]


def test_a_known_team_is_not_mistaken_for_a_known_service_with_the_same_first_word() -> None:
    x = RuleExtractor().extract("Bob joined the auth team.", ["auth-service"], REF)
    assert {e.name for e in x.entities} == {"Bob", "auth team"}


def test_an_llm_fact_with_an_end_and_no_start_keeps_its_end() -> None:
    from polyg_core.remember.extractor import ExtractionDraft, check_extraction
    from polyg_core.remember.rule_extractor import UNKNOWN_START
    from polyg_core.text.names import EntityMatcher

    draft = ExtractionDraft.model_validate(
        {
            "facts": [
                {"subject": "Alice", "predicate": "member_of", "object": "payments team",
                 "valid_to": "2025-06-01T00:00:00Z"},
                {"subject": "Alice", "predicate": "member_of", "object": "auth team",
                 "valid_from": "2025-06-01T00:00:00Z"},
            ]
        }
    )  # fmt: skip
    x = check_extraction(draft, "", EntityMatcher(), REF)
    june_1 = datetime(2025, 6, 1, tzinfo=UTC)
    assert [(f.object, f.valid_from, f.valid_to) for f in x.facts] == [
        ("payments team", UNKNOWN_START, june_1),
        ("auth team", june_1, None),
    ]
