"""What is current wins: updates rank above what they change for questions about now, the
answer gives the current value with the old one as history, the past keeps what held then."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from polyg_core.memory import Memory
from polyg_core.recall.answer.shapes import asks_previous
from polyg_core.recall.catalogue import CatalogueEntry
from polyg_core.recall.currency import (
    EndedValue,
    Supersession,
    accumulates,
    amounts,
    asks_about_earlier,
    asks_about_now,
    measures,
    says_change,
    supersede,
    unsettled,
    value_shapes,
    weekdays,
)
from polyg_core.recall.lexical import LexicalIndex
from polyg_core.recall.memories import states_then_asks
from polyg_core.recall.subjects import (
    about_a_named_person,
    about_a_relation,
    about_another_numbered,
    anothers_like_thing,
    introduced_as_a_relation,
    kin_by_name,
    like_another,
    titled_another,
    without_title,
    writes_name,
)
from polyg_shared.intents import Intent, Timeframe
from polyg_shared.retrieval import RecallResult

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)


async def _add(memory: Memory, text: str, days_ago: float) -> str:
    return await add_said(memory, text, NOW - timedelta(days=days_ago))


# -- pure rules -------------------------------------------------------------------------------


def test_change_language_is_recognised_in_many_phrasings() -> None:
    for text in (
        "Quentin took over the ledger from Odile.",
        "The kiln was replaced last week.",
        "Bea switched to night shifts.",
        "Rates were raised to 40 per hour.",
        "Tobiah no longer works weekends.",
        "The depot is now in Harwick.",
        "Mara moved to Leith.",
    ):
        assert says_change(text), text
    assert not says_change("The kiln sits in the east shed.")


def test_a_span_of_time_or_the_noun_change_is_not_an_update() -> None:
    # "now" closing a span, and "a change" as a thing, say nothing about a new value.
    assert not says_change("Four years now, and I still love the kiln.")
    assert not says_change("Painting was a real change of pace for Wren.")
    # ... but a value that holds since a named change is one.
    assert says_change("The ferry leaves from pier 4 since the timetable change.")
    assert says_change("Brisk Ltd changed to weekly invoices.")


def test_a_participle_that_describes_someone_says_no_change() -> None:
    # "a retired teacher" is who someone is; "retired in May" is news.
    assert not says_change("Aunt Wilma is seeing a retired harbour pilot, met at choir")
    assert not says_change("lunch with her married cousin Pim")
    assert says_change("Uncle Bas retired in May, golf every day")
    assert says_change("Pim and Joss got married in the spring")


def test_questions_that_gather_or_ask_for_the_earlier_value() -> None:
    assert accumulates("What events has Wren joined?")
    assert not accumulates("How often are the vault keys rotated?")
    assert not accumulates("Which crew runs the kiln shed?")
    assert asks_about_earlier("Which crew ran the kiln shed before?")
    assert asks_about_earlier("What did Wren drink originally?")
    assert not asks_about_earlier("Which crew runs the kiln shed?")


def test_a_question_about_the_past_is_not_about_now() -> None:
    plain = Intent()
    assert asks_about_now("Who runs the kiln?", plain, NOW_MS)
    assert not asks_about_now("Who ran the kiln before?", plain, NOW_MS)
    assert not asks_about_now("Which potter fixed the kiln and how?", plain, NOW_MS)
    assert not asks_about_now("Where did Mara live originally?", plain, NOW_MS)
    past = Intent(
        timeframe=Timeframe(
            start=datetime(2024, 1, 1, tzinfo=UTC),
            end=datetime(2024, 12, 31, tzinfo=UTC),
            phrase="2024",
        )
    )
    assert not asks_about_now("Where did Mara live in 2024?", past, NOW_MS)
    friday = Intent(
        timeframe=Timeframe(
            start=NOW - timedelta(days=3), end=NOW - timedelta(days=2), phrase="Friday"
        )
    )
    # A habit named by a weekday, asked in the present tense, is about now.
    assert asks_about_now("What does Mara order at the Friday market?", friday, NOW_MS)
    assert not asks_about_now("What did Mara order last Friday?", friday, NOW_MS)


@dataclass(frozen=True)
class _Note:
    uuid: str
    content: str
    created_at: int


def _supersede(
    notes: list[_Note],
    ranked: list[tuple[_Note, float]],
    question: str,
    *,
    idf_floor: int = 1000,
    **options: Any,
) -> Supersession:
    """`supersede` on `ranked` (fused scores, best first), with BM25 over `notes` as the
    lexical side (`idf_floor`: the collection size idf assumes at least; 0: the notes')."""
    index = LexicalIndex()
    for n in notes:
        index.add(n.content)

    def weight(term: str) -> float:
        return index.idf(term, at_least=idf_floor)

    return supersede(ranked, index.tokens(question), index.tokens, weight, **options)


def test_supersede_puts_the_update_first_and_leaves_bystanders() -> None:
    notes = [
        _Note("old", "The kiln shed is run by the Harrow crew.", 100),
        _Note("new", "The Plover crew took over the kiln shed from Harrow.", 300),
        _Note("other", "The Harrow crew paints the boats.", 200),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.6), (notes[2], 0.3)]
    moved = _supersede(
        notes,
        ranked,
        "Which crew runs the kiln shed?",
    )
    assert moved.superseded_by == {"old": "new"}
    assert moved.scores["new"] > moved.scores["old"]
    assert "other" not in moved.scores


def test_an_update_naming_the_attribute_inside_a_longer_word_supersedes() -> None:
    notes = [
        _Note("old", "The atlas viewer is released under the MIT license.", 100),
        _Note("new", "The atlas viewer was relicensed; it is MPL-2.0 now.", 300),
    ]
    # The update matches the question far less well than what it changes.
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.25)],
        "Which license is the atlas viewer released under?",
    )
    assert moved.superseded_by == {"old": "new"}


def test_an_update_holding_most_of_what_was_asked_supersedes_at_a_low_fused_score() -> None:
    # In three memories min-max scaling leaves the update far below what it changes.
    notes = [
        _Note("old", "Backup snapshots are kept for 14 days.", 100),
        _Note("new", "Backup snapshot retention was increased to 90 days.", 300),
        _Note("other", "Build logs are kept for 3 days.", 200),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[2], 0.4), (notes[1], 0.2)],
        "How long are backup snapshots kept?",
    )
    assert moved.superseded_by.get("old") == "new"
    assert moved.scores["new"] > moved.scores["old"]


def test_of_two_silent_later_notes_nearly_as_close_the_one_holding_more_asked_words_wins() -> None:
    notes = [
        _Note("old", "staff gym pass (interns) £15/month, sign up via the HR portal", 100),
        _Note("day", "gym day pass is £6 a visit!!! tell dad", 200),
        _Note("new", "HR email: intern gym pass £21/month from may. ugh", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.5), (notes[2], 0.4)],
        "What does the intern gym pass cost me per month?",
        # The day pass is a hair closer in meaning; the later price holds "intern" and
        # "month" as the first note does.
        meaning={"old": 0.70, "day": 0.49, "new": 0.48},
        kept=("old", "day", "new"),
    )
    assert moved.superseded_by.get("old") == "new"


@pytest.mark.parametrize(
    "change",
    [
        "cancelled vidora!! we're on Glimmer now, £6.99, fewer adverts",
        "deleted the vidora thing, too many adverts, glimmer on the tv now",
    ],
)
def test_a_change_that_says_it_cancelled_the_old_value_is_no_return_to_it(change: str) -> None:
    notes = [
        _Note("old", "streaming: Vidora £9.99, shared w/ Obi's family, login on the tv", 100),
        _Note(
            "reminder", "Reminder from Ines Marlow: the status page check runs every Monday.", 200
        ),
        _Note("new", change, 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.5), (notes[2], 0.4)],
        "Which streaming service are we on now?",
        # A reminder far from the question writes none of the first note's names: taken
        # as its silent later version, it would leave the change naming Vidora as a note
        # about the old value, but the change says it turned away from it.
        meaning={"old": 0.47, "reminder": 0.30, "new": 0.42},
        kept=("old", "reminder", "new"),
    )
    assert moved.superseded_by.get("old") == "new"


def test_supersede_for_an_earlier_value_puts_the_changed_memory_first() -> None:
    notes = [
        _Note("old", "The kiln shed is run by the Harrow crew.", 100),
        _Note("new", "The Plover crew took over the kiln shed from Harrow.", 300),
    ]
    # The update matches the question better (it names both crews and "took over").
    moved = _supersede(
        notes,
        [(notes[1], 1.0), (notes[0], 0.7)],
        "Which crew ran the kiln shed before?",
        earlier=True,
    )
    assert moved.scores["old"] > moved.scores["new"]


def test_an_ended_value_named_by_a_note_about_something_else_is_no_update() -> None:
    notes = [
        _Note("old", "Ilse Varga reports to Bram Tolle.", 100),
        _Note("bystander", "Bram Tolle chairs the budget meeting.", 150),
        _Note("new", "Ilse Varga reports to Cato Wels now.", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[2], 1.0), (notes[0], 0.9), (notes[1], 0.2)],
        "Who does Ilse Varga report to?",
        named=[{"old", "new"}],
        ended=[EndedValue("Bram Tolle", "Cato Wels")],
    )
    assert moved.superseded_by == {"old": "new"}


def test_an_ended_fact_supersedes_without_change_language() -> None:
    notes = [_Note("a", "Odile keeps bees in Corran.", 100), _Note("b", "Odile: Tarn.", 200)]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.2)],
        "Where does Odile keep bees?",
        idf_floor=0,
        ended=[EndedValue("Corran", "Tarn")],
    )
    assert moved.superseded_by == {"a": "b"}


# -- recall -----------------------------------------------------------------------------------


async def test_the_update_ranks_first_and_the_answer_gives_the_current_value(
    memory: Memory,
) -> None:
    old = await _add(memory, "The glazing studio is managed by Ottilie Brandt.", 200)
    new = await _add(memory, "Fenwick Aldous took over the glazing studio from Ottilie.", 2)
    await _add(memory, "Ottilie Brandt teaches the Tuesday pottery class.", 40)
    result = await memory.recall("Who manages the glazing studio?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]
    assert "Fenwick Aldous" in result.answer
    # The old value is named, only as history after the current one.
    assert "Until" in result.answer
    assert result.answer.index("Fenwick") < result.answer.index("Until")


async def test_a_question_about_before_gets_what_held_then(memory: Memory) -> None:
    old = await _add(memory, "The glazing studio is managed by Ottilie Brandt.", 200)
    await _add(memory, "Fenwick Aldous took over the glazing studio from Ottilie.", 2)
    result = await memory.recall("Who managed the glazing studio before?", reference_time=NOW)
    assert result.memories[0].uuid == old
    assert "Until" not in result.answer


async def test_three_memories_do_not_collapse_to_zero_and_ties_go_to_the_newer(
    memory: Memory,
) -> None:
    await _add(memory, "Keys for the seed vault are rotated every quarter.", 200)
    newer = await _add(memory, "Seed vault keys are now rotated every month.", 2)
    await _add(memory, "The seed vault door is painted green.", 30)
    result = await memory.recall("How often are the seed vault keys rotated?", reference_time=NOW)
    assert result.memories[0].uuid == newer
    # The runner-up keeps what it scored: min-max scaling no longer gives it nothing.
    second = result.memories[1]
    assert second.retrievers.get("lexical", 0.0) > 0.0
    assert "month" in result.answer


async def test_a_fact_ended_by_a_newer_one_ranks_its_memory_below(memory: Memory) -> None:
    old = await _add(memory, "Odile Marchetti keeps her bees in Corran.", 300)
    new = await _add(memory, "Odile Marchetti keeps her bees in Tarn.", 5)
    await memory.temporal.add_fact(
        memory.namespace, "Odile Marchetti", "keeps bees in", "Corran", NOW - timedelta(days=300)
    )
    await memory.temporal.add_fact(
        memory.namespace, "Odile Marchetti", "keeps bees in", "Tarn", NOW - timedelta(days=5)
    )
    result = await memory.recall("Where does Odile Marchetti keep her bees?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


async def test_before_question_prefers_the_replaced_memory_even_when_the_update_matches_more(
    memory: Memory,
) -> None:
    old = await _add(memory, "Wren Halloran reports to Ysolde Mark.", 300)
    new = await _add(memory, "After the merger Wren Halloran reports to Cato Wels instead.", 10)
    await _add(memory, "Ysolde Mark runs the harbour survey.", 40)
    result = await memory.recall(
        "Who did Wren Halloran report to before the merger?", reference_time=NOW
    )
    assert [m.uuid for m in result.memories[:2]] == [old, new]


async def test_before_a_named_change_the_answer_gives_the_old_value_and_the_new_one_as_later(
    memory: Memory,
) -> None:
    await _add(memory, "Wren Halloran reports to Ysolde Mark.", 300)
    await _add(memory, "After the merger Wren Halloran reports to Cato Wels instead.", 10)
    await _add(memory, "Ysolde Mark runs the harbour survey.", 40)
    result = await memory.recall(
        "Who did Wren Halloran report to before the merger?", reference_time=NOW
    )
    # What held before the merger answers; the new value only after it, as what came later.
    assert result.answer.startswith("Wren Halloran reports to Ysolde Mark.")
    later = (NOW - timedelta(days=10)).date().isoformat()
    assert f"Since {later}:" in result.answer
    assert (
        result.answer.index("Ysolde") < result.answer.index("Since") < result.answer.index("Cato")
    )


async def test_a_previous_value_with_no_later_change_is_answered_alone(memory: Memory) -> None:
    # Nothing later says the value changed: no "Since" is made up.
    await _add(memory, "Wren Halloran used to sail a red dinghy on the estuary.", 300)
    await _add(memory, "Wren Halloran sailed the estuary race in a gale.", 10)
    result = await memory.recall("What did Wren Halloran use to sail?", reference_time=NOW)
    assert "dinghy" in result.answer
    assert "Since" not in result.answer


async def test_a_gathering_question_keeps_every_value_in_place(memory: Memory) -> None:
    first = await _add(memory, "Wren Halloran joined the harbour choir.", 200)
    await _add(memory, "Wren Halloran joined the rowing club now that spring is here.", 5)
    result = await memory.recall("What groups has Wren Halloran joined?", reference_time=NOW)
    # Both are answers; the later one does not push the earlier one away as stale.
    assert first in {m.uuid for m in result.memories[:2]}
    assert result.memories[0].score == pytest.approx(
        max(m.score for m in result.memories), abs=1e-9
    )


# -- updates that share only the name, or say no change ----------------------------------------


async def test_a_name_no_entity_resolves_still_ties_the_update_to_its_subject(
    memory: Memory,
) -> None:
    # Three memories, all naming Tamsin, and no entity written for her: the update holds
    # none of the asked words; the question's name ties it to what it changes.
    old = await _add(memory, "Tamsin Okafor drinks her tea with lemon.", 300)
    new = await _add(memory, "Tamsin Okafor switched to oat milk chai.", 6)
    await _add(memory, "Tamsin Okafor likes espresso after lunch.", 90)
    now = await memory.recall("How does Tamsin Okafor take her tea?", reference_time=NOW)
    assert now.memories[0].uuid == new
    before = await memory.recall("How did Tamsin Okafor take her tea before?", reference_time=NOW)
    assert before.memories[0].uuid == old


async def test_a_later_note_that_says_no_change_still_supersedes(memory: Memory) -> None:
    # No change words: the later note about the same person answers the same question.
    old = await _add(memory, "Ansel Brandvik eats anything, he has no food allergies.", 300)
    new = await _add(memory, "Ansel Brandvik is allergic to peanuts since last winter.", 8)
    await _add(memory, "Ansel Brandvik books the meeting room every Thursday.", 40)
    result = await memory.recall("Does Ansel Brandvik have food allergies?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]
    assert "peanut" in result.answer


async def test_a_silent_note_gives_way_to_one_that_says_the_change(memory: Memory) -> None:
    # "parks in the garage" is newer but says no change; the note that says one is the update.
    old = await _add(memory, "Ivo Lindqvist drives a grey van to the depot.", 700)
    new = await _add(memory, "Ivo Lindqvist sold the van and walks to the depot now.", 60)
    await _add(memory, "Ivo Lindqvist parks in the north yard when it rains.", 20)
    result = await memory.recall("How does Ivo Lindqvist get to the depot?", reference_time=NOW)
    assert result.memories[0].uuid == new
    assert old in [m.uuid for m in result.memories[1:]]
    assert "walks" in result.answer


def test_a_silent_later_note_does_not_undo_a_stated_change() -> None:
    # As in a large namespace, the later silent note is close in meaning to the question.
    notes = [
        _Note("old", "Ivo Lindqvist drives a grey van to the depot.", 100),
        _Note("new", "Ivo Lindqvist sold the van and walks to the depot now.", 200),
        _Note("silent", "Ivo Lindqvist parks in the north yard when it rains.", 300),
    ]
    ivo = {"old", "new", "silent"}
    ranked = [(notes[0], 1.0), (notes[1], 0.8), (notes[2], 0.7)]
    moved = _supersede(
        notes,
        ranked,
        "How does Ivo Lindqvist get to the depot?",
        named=[ivo],
        meaning={"old": 1.0, "new": 0.8, "silent": 0.9},
    )
    assert moved.superseded_by["old"] == "new"
    assert "new" not in moved.superseded_by
    top = max(moved.scores, key=lambda u: moved.scores[u])
    assert top == "new"


def test_a_silent_later_note_about_what_someone_had_before_is_no_version() -> None:
    notes = [
        _Note("old", "Oren Falk rents a flat in Ghent, top floor.", 100),
        _Note("new", "Oren Falk's housewarming in Lyon on Saturday, bring wine.", 200),
        _Note("later", "Oren Falk sent a photo of the canal from his old balcony.", 300),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.9), (notes[1], 0.8)]
    moved = _supersede(
        notes,
        ranked,
        "Which city does Oren Falk live in?",
        named=[{"old", "new", "later"}],
        meaning={"old": 0.50, "new": 0.50, "later": 0.52},
    )
    assert moved.superseded_by["old"] == "new"
    assert "later" not in moved.superseded_by.values()


def test_a_change_that_began_the_old_value_gives_way_to_a_silent_note_tied_by_name() -> None:
    # "joined" says how the old value began, not a change a silent note cannot undo.
    notes = [
        _Note("old", "Odette Vance joined Kestrel Rowing - outings sat mornings", 100),
        _Note("new", "Odette Vance's first regatta in the Marlow Oars colours on sunday", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.5)],
        "Which rowing club is Odette Vance with at the moment?",
        named=[{"old", "new"}],
        meaning={"old": 0.55, "new": 0.50},
    )
    assert moved.superseded_by == {"old": "new"}
    # A user's note that says a change is not undone by a later one close only in meaning.
    notes = [
        _Note("bike", "bike to work most days now, 25 min along the towpath", 100),
        _Note("strike", "train strike Tuesday - glad I'm not affected", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.4)],
        "How do I get to work these days?",
        kept={"bike", "strike"},
        meaning={"bike": 0.36, "strike": 0.32},
    )
    assert moved.superseded_by == {}


def test_a_change_to_another_attribute_continues_no_line_of_the_asked_one() -> None:
    notes = [
        _Note("old", "Nana Edda's GP is Dr Mbeki at Riverside", 100),
        _Note("new", "Nana Edda's named GP going forward is Dr Sorensen", 200),
        _Note("frame", "Nana Edda swapped her walking frame for a stick", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.8), (notes[2], 0.6)],
        "Who is Nana Edda's doctor now?",
        named=[{"old", "new", "frame"}],
        meaning={"old": 0.51, "new": 0.46, "frame": 0.30},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_silent_later_note_supersedes_when_nothing_says_a_change() -> None:
    notes = [
        _Note("old", "Ansel Brandvik has no food allergies.", 100),
        _Note("new", "Ansel Brandvik is allergic to peanuts.", 300),
        _Note("other", "Ansel Brandvik books the meeting room on Thursdays.", 200),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.4), (notes[2], 0.1)]
    moved = _supersede(
        notes,
        ranked,
        "Does Ansel Brandvik have food allergies?",
        named=[{"old", "new", "other"}],
        # Cosine similarities to the question, as MiniLM gives them for these notes.
        meaning={"old": 0.78, "new": 0.71, "other": 0.59},
    )
    assert moved.superseded_by["old"] == "new"
    assert moved.scores["new"] > moved.scores["old"]


# -- change said in other ways, names said in part, questions about the user -----------------


def test_corrections_moved_dates_and_new_values_say_a_change() -> None:
    for text in (
        "Correction: the Lattice review is at 15:30, not 14:00.",
        "Actually, Senna's birthday is in October.",
        "The grant deadline was extended to 9 November.",
        "Harlow pushed the roof start to 3 May (scaffold delay).",
        "The depot rebooked our slot for Friday.",
        "Orders cut over to cluster db-21 on Monday.",
        "My new dentist is Dr. Achebe at Northgate.",
        "Quill and Ravi got engaged in Porto.",
        "Mara is not in the choir anymore.",
        "Ledger prod is on Postgres 17 since the upgrade.",
        "Expense approvals -> Yuki Tanaka (Finance Ops)",
        "I report to Lucas Ferreira from today.",
        "Net Gains captain this season: Bea.",
    ):
        assert says_change(text), text
    # A change denied is none; "actually" inside a turn seldom corrects anything.
    assert not says_change("The guest password hasn't changed, ask at the desk.")
    assert not says_change("That sounds great! I actually went hiking with my kids.")


def test_how_long_before_asks_a_duration_not_the_earlier_value() -> None:
    plain = Intent()
    question = "How long before an idle Quarry session times out?"
    assert not asks_about_earlier(question)
    assert asks_about_now(question, plain, NOW_MS)
    assert not asks_previous(question)
    assert not asks_previous("How long before it expires?")
    for earlier in (
        "Which desk did Oren previously have?",
        "What was the original Quarry launch date?",
        "Which timezone did Oren work in before relocating?",
        "Where did Oren live before Lisbon?",
    ):
        assert asks_previous(earlier), earlier
    assert not asks_previous("What did Oren work on before June 2025?")


def test_before_a_deadline_asks_about_now_not_the_earlier_value() -> None:
    plain = Intent()
    for deadline in (
        "What does the lighthouse lamp need before the gales?",
        "What do I pack before the trip?",
    ):
        assert not asks_about_earlier(deadline), deadline
        assert asks_about_now(deadline, plain, NOW_MS), deadline
        assert not asks_previous(deadline), deadline
    for earlier in (
        "Who owns the billing service before the reorg?",
        "Which CI did we use before the migration?",
        "Where did Oren live before the move to Lisbon?",
        "What was Oren doing before the trip?",
        "Who was my dentist before Marisol?",
    ):
        assert asks_about_earlier(earlier), earlier
        assert asks_previous(earlier), earlier


def test_a_name_is_said_whole_or_by_one_of_its_words_alone() -> None:
    parts = ["Bao", "Nguyen-Castillo"]
    assert writes_name("Bao's been into Georgian food lately.", parts, set())
    assert writes_name(
        "Bao Nguyen-Castillo's favourite cuisine is Ethiopian.", ["Bao", "Nguyen"], set()
    )
    assert not writes_name("Bao Tran cooked for everyone.", parts, set())
    # Another person of the same family name is not the one asked about.
    assert not writes_name("Kaisa Virtanen celebrates in March.", ["Lena", "Virtanen"], set())
    # A relation said in the possessive is someone else, unless asked or said to be who it is.
    sister = "Kaisa, Lena's sister, celebrates her birthday in March."
    assert not writes_name(sister, ["Lena", "Virtanen"], {"when", "is", "lena", "birthday"})
    assert writes_name(sister, ["Lena", "Virtanen"], {"who", "is", "lena", "sister"})
    assert writes_name(
        "Priya's manager is Ines Moen.", ["Priya", "Holt"], {"who", "priya", "report"}
    )


def test_a_silent_note_is_compared_by_cosine_so_three_memories_rank_as_many() -> None:
    # Of three memories a scaled score gives the runner-up nothing; cosine does not.
    notes = [
        _Note("old", "The Harbinger backend is written in Django.", 100),
        _Note("new", "Harbinger's backend runs on Go and Gin.", 300),
        _Note("front", "Harbinger's frontend is built with Vue.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.6), (notes[1], 0.5)]
    moved = _supersede(
        notes,
        ranked,
        "What framework does the Harbinger backend use?",
        named=[{"old", "new", "front"}],
        name_terms={"harbing"},
        # Cosine similarities to the question: the frontend note is as close as the update.
        meaning={"old": 0.72, "front": 0.71, "new": 0.61},
    )
    # The note about the backend is the update; the frontend one is about another thing,
    # no later version of either.
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_change_about_something_else_is_no_update_of_the_users_note() -> None:
    # Among many notes, one that says a change ranks near the user's note by chance: it
    # shares no word with it and is far from the question in meaning.
    notes = [
        _Note("diet", "User: I eat pretty much anything, big meat eater.", 100),
        _Note("filler", "The status page was switched to a new config by Arlo Crane.", 300),
        _Note("vegan", "User: three months fully vegan now, feeling good.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.97), (notes[2], 0.9)]
    moved = _supersede(
        notes,
        ranked,
        "What diet does the user follow?",
        kept={"diet", "filler", "vegan"},
        meaning={"diet": 0.55, "filler": 0.05, "vegan": 0.5},
    )
    assert moved.superseded_by["diet"] == "vegan"
    assert "filler" not in moved.superseded_by.values()
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "vegan"
    # Without the update, the user's note stays first.
    alone = _supersede(
        notes[:2],
        ranked[:2],
        "What diet does the user follow?",
        kept={"diet", "filler"},
        meaning={"diet": 0.55, "filler": 0.05},
    )
    assert alone.superseded_by == {}


def test_asked_before_the_later_value_the_earlier_note_need_not_be_close() -> None:
    # "before Tobias" names the later value: the earlier note is far from the question in
    # meaning, and is still the one the question asks for; a bystander far from it is not.
    notes = [
        _Note("old", "1:1s with Renata (my manager) every other Thursday", 100),
        _Note("new", "Org change: our team now reports to Tobias Wren.", 300),
        _Note("other", "Reminder from Ilse: the status check runs every Monday.", 50),
    ]
    ranked = [(notes[1], 1.0), (notes[0], 0.2), (notes[2], 0.1)]
    moved = _supersede(
        notes,
        ranked,
        "Who did I report to before Tobias?",
        earlier=True,
        named=[{"new"}],
        kept={"old", "new", "other"},
        meaning={"new": 0.61, "old": 0.2, "other": 0.1},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "old"


async def test_a_correction_in_a_namespace_of_three_ranks_first(memory: Memory) -> None:
    old = await _add(memory, "The Lattice design review is at 14:00 in room 2.", 30)
    new = await _add(memory, "Correction: the Lattice review is at 15:30, not 14:00.", 29)
    await _add(memory, "The Lattice retro is on Fridays at 11:00.", 10)
    result = await memory.recall("What time is the Lattice design review?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


async def test_a_question_about_the_user_reads_notes_in_the_first_person(
    memory: Memory,
) -> None:
    # The update shares no asked word: the user is its subject.
    old = await _add(memory, "I have a membership at Copperline Gym on Hale Road.", 300)
    new = await _add(memory, "Cancelled Copperline in March; I'm training at Brightwater now.", 40)
    result = await memory.recall("Which gym does the user go to?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]
    assert "Brightwater" in result.answer


async def test_terse_notes_a_user_keeps_are_about_the_user(memory: Memory) -> None:
    # Neither note says "I": a user's own log of their gym, then of the one they joined.
    old = await _add(memory, "Gym: Copperline on Hale Road, membership #40211", 300)
    new = await _add(memory, "joined Brightwater Fitness near the office, 5 min walk", 40)
    await _add(memory, "Copperline sent a 'we miss you' email", 10)
    result = await memory.recall("Which gym do I go to?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


async def test_a_users_later_note_that_says_no_change_is_the_current_one(
    memory: Memory,
) -> None:
    # The later note says no change word and names another dentist: the user's dentist now.
    old = await _add(
        memory, "Dr. Halloran at Fernside Dental is my dentist, cleanings twice a year", 400
    )
    new = await _add(
        memory, "cleaning with Dr. Ines Maro at Quayside Dental today, very gentle", 20
    )
    await _add(memory, "Fernside Dental sent another reminder postcard", 150)
    result = await memory.recall("Who's my dentist these days?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


async def test_a_note_about_what_a_named_person_did_is_not_the_users(memory: Memory) -> None:
    # The later notes say a change and share the asked word "notes", but report what Arlo
    # Crane and Vesna Bell did: no later version of the user's own note.
    old = await _add(memory, "User: I keep all my notes in Notewell.", 300)
    await _add(memory, "Arlo Crane switched the release notes to a new template.", 30)
    await _add(memory, "The meeting notes were moved to a new folder by Vesna Bell.", 20)
    result = await memory.recall("Which app does the user keep notes in?", reference_time=NOW)
    assert result.memories[0].uuid == old
    assert "Notewell" in result.answer


async def test_a_question_that_names_no_one_compares_every_note(memory: Memory) -> None:
    # No person, no "I": the household's wifi, then the new password after a reset.
    old = await _add(memory, "wifi pw: marigold-17", 300)
    new = await _add(memory, "router reset, the password is heron_58 now", 20)
    await _add(memory, "guest wifi has no password, it's the one called Porch", 100)
    result = await memory.recall("What's the wifi password at home?", reference_time=NOW)
    uuids = [m.uuid for m in result.memories]
    assert uuids[0] == new
    assert uuids.index(old) > 0
    assert "heron_58" in result.answer


async def test_a_question_about_us_is_about_the_users_household(memory: Memory) -> None:
    old = await _add(memory, "Streaming: Reelbox family plan, $17.99/mo, billed on the 3rd", 300)
    new = await _add(memory, "cancelled Reelbox, switched to Lumaplay at $11/mo", 30)
    result = await memory.recall("Which streaming service are we paying for?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


async def test_another_persons_note_is_no_update_of_the_asked_one(memory: Memory) -> None:
    # The latest note says "new" and shares the asked word "mentor", but is about Bram.
    await _add(memory, "Ilse Varga's mentor is Bram Kessel.", 300)
    new = await _add(memory, "Ilse Varga has a new mentor, Noor Hadid.", 30)
    await _add(memory, "Bram Kessel mentors three new interns this spring.", 10)
    result = await memory.recall("Who is Ilse Varga's mentor?", reference_time=NOW)
    assert result.memories[0].uuid == new
    assert "Noor Hadid" in result.answer


async def test_the_value_before_a_change_is_answered_from_the_changed_note(
    memory: Memory,
) -> None:
    old = await _add(memory, "Tavi Roos reports to Emre Kaya on the billing team.", 300)
    await _add(memory, "After the reorg, Tavi Roos's manager is Lise Moen.", 40)
    result = await memory.recall("Who was Tavi's manager before the reorg?", reference_time=NOW)
    assert result.memories[0].uuid == old
    assert result.answer.startswith("Tavi Roos reports to Emre Kaya")


async def test_a_person_asked_by_one_name_is_found_by_another_word_of_their_name(
    memory: Memory,
) -> None:
    # The question says "Varga" and shares no other word with the notes; the update calls
    # her "Oona"; an earlier note wrote both.
    old = await _add(memory, "Check-ins with Oona Varga - Tuesdays 9am, room 2C", 200)
    new = await _add(memory, "fyi moved the check-ins with Oona to Fridays, 3pm", 14)
    result = await memory.recall("When do I see Varga?", reference_time=NOW)
    assert [m.uuid for m in result.memories[:2]] == [new, old]


def test_a_greeting_before_a_name_is_no_longer_name() -> None:
    assert writes_name("Hey Ines! Ages since we spoke.", ["Ines"], set())
    assert writes_name("Hey Bao, the Georgian place is great.", ["Bao", "Tran"], set())


def test_a_later_note_without_a_name_the_earlier_one_shares_with_the_question_is_no_version() -> (
    None
):
    # "Q1" is asked and the earlier note holds it: a later note of Q2 is another value's.
    notes = [
        _Note("old", "Wrenfold campaign: Q1 budget approved at 30k.", 100),
        _Note("new", "Finance cut Wrenfold's Q1 spend to 18k.", 300),
        _Note("q2", "Wrenfold Q2 budget request (50k) goes to the board on Friday.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.9), (notes[2], 0.2)]
    moved = _supersede(
        notes,
        ranked,
        "How much money does Wrenfold have for Q1?",
        named=[{"old", "new", "q2"}, {"old", "new"}],
        meaning={"old": 0.78, "new": 0.77, "q2": 0.69},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_of_two_changes_to_the_users_thing_the_one_far_from_the_question_is_another() -> None:
    # Both later notes say a change and touch the user's laptop; the one about who got the
    # old machine is far from the question, so it changed something else.
    notes = [
        _Note("old", "my laptop's a ThinkPad X1", 100),
        _Note("new", "Using the MacBook Air from work as my only computer now.", 300),
        _Note("gift", "Sister took over the old ThinkPad X1, battery needs replacing.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.5), (notes[1], 0.4)]
    moved = _supersede(
        notes,
        ranked,
        "What laptop does the user have?",
        kept={"old", "new", "gift"},
        meaning={"old": 0.62, "new": 0.5, "gift": 0.33},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_silent_later_note_continues_a_line_only_if_it_answers_as_well_as_the_line() -> None:
    # The rota's first note is the closest to the question; the second changes it; the
    # third is about the rota's pay, close to the second but far below the first.
    notes = [
        _Note("old", "Support rota: one week per person, handover Monday 10:00.", 100),
        _Note("new", "From March, support shifts run two weeks; handover moves to Wednesday.", 300),
        _Note("pay", "Support rota bonus is paid with the March salary, HR to confirm.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.9), (notes[2], 0.1)]
    moved = _supersede(
        notes,
        ranked,
        "How long is each support stint?",
        kept={"old", "new", "pay"},
        meaning={"old": 0.57, "new": 0.52, "pay": 0.38},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_users_later_note_holding_most_of_the_asked_words_is_the_current_one() -> None:
    # The later note says where the photos are without "backed up": it holds most of what
    # the earlier one holds of the question, and its new value pulls it away in meaning.
    notes = [
        _Note("old", "Holiday photos backed up to Boxly (1TB plan).", 100),
        _Note("new", "All the holiday photos are on the home NAS in the attic.", 300),
        _Note("work", "Work still keeps client files on Boxly.", 400),
        # "back" and "up" are everyday words in a namespace: they weigh less.
        _Note("gym", "Back from the gym, picked up a parcel on the way.", 500),
        _Note("call", "Called the plumber back; he fixed the pipe up in an hour.", 600),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.5), (notes[2], 0.1)]
    moved = _supersede(
        notes,
        ranked,
        "Where are the user's holiday photos backed up?",
        kept={"old", "new", "work"},
        meaning={"old": 0.69, "new": 0.47, "work": 0.16},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_first_name_shortened_or_jotted_as_its_initial_is_the_same_person() -> None:
    asked = {"which", "team", "does", "magdalena", "coach"}
    assert writes_name("Magda's coaching the under-12s this season.", ["Magdalena"], asked)
    assert writes_name("Kas quit the pool; chess club on Saturdays now.", ["Kasimir"], asked)
    # Another name that starts alike, or two letters, is not a short form of it.
    assert not writes_name("Kasia moved to Lodz.", ["Kasimir"], asked)
    assert not writes_name("Ka said the pool is shut.", ["Kasimir"], asked)
    # Its initial, opening a note or in the possessive where a place is.
    asked = {"where", "does", "tomasz", "work", "now"}
    assert writes_name("T says the new depot is a 10 min cycle", ["Tomasz"], asked)
    assert writes_name("lunch at T's, pierogi and gossip", ["Tomasz"], asked)
    assert writes_name("T. sent the sort code for the kitty", ["Tomasz"], asked)
    # Another initial, a letter that is a word, or a letter after a word is no name.
    assert not writes_name("R says the new depot is a 10 min cycle", ["Tomasz"], asked)
    assert not writes_name("I said the depot is far", ["Ivo"], asked)
    assert not writes_name("A new depot opened", ["Ana"], asked)
    assert not writes_name("take vitamin D with breakfast", ["Dorota"], asked)
    assert not writes_name("plan B's cheaper", ["Bartek"], asked)


def test_a_note_about_a_relation_of_the_asked_person_is_about_someone_else() -> None:
    asked = {"what", "did", "leonie", "do", "for", "work", "before"}
    assert about_a_relation("Leonie's partner Achim is a paramedic.", "Leonie", asked)
    assert not about_a_relation("Leonie qualified as a midwife!", "Leonie", asked)
    # A note that names the person as themselves too, or says who the relation is, or a
    # relation the question asks about, is about them.
    assert not about_a_relation("Leonie and her partner Achim moved.", "Leonie", asked)
    assert not about_a_relation("Leonie's manager is Ines Roth.", "Leonie", asked)
    assert not about_a_relation(
        "Leonie's partner Achim is a paramedic.", "Leonie", asked | {"partner"}
    )
    # The user's relation: "My sister ...", "User's partner ...", "Partner's ...".
    asked = {"what", "diet", "do", "i", "follow"}
    assert about_a_relation("My sister Ilka went vegan in spring.", None, asked)
    assert about_a_relation("User's partner Sefa only drinks green tea.", None, asked)
    assert about_a_relation("Partner's passport expires in October.", None, asked)
    assert about_a_relation("kids' dentist still Dr Oyelaran at the clinic", None, asked)
    # Relations as people jot them: "husb", "bro", "flatmate".
    asked = {"which", "firm", "is", "odile", "with"}
    assert about_a_relation("Bastien (Odile's husb) interviewing at Farrow Gale", "Odile", asked)
    assert about_a_relation("Odile's bro 0412 558 930 - for the van", "Odile", asked)
    assert about_a_relation("Yara (Odile's flatmate) joined Pulse", "Odile", asked)
    # ... and those who work or learn under them.
    asked = {"what", "time", "does", "ottilie", "open", "the", "bakery"}
    assert about_a_relation("joss (ottilie's apprentice) opens at 6 now", "Ottilie", asked)
    assert not about_a_relation("My manager is Priyanka Voss.", None, asked)
    assert not about_a_relation("My diet is mostly plants.", None, asked)


def test_a_relation_jotted_in_lower_case_described_or_with_an_accent_is_someone_else() -> None:
    asked = {"where", "is", "oksana", "working", "at", "the", "moment"}
    # The name in lower case, anywhere in the note; a word between it and the relation.
    assert about_a_relation("oksana's husband teodor switched jobs, now at Pell", "Oksana", asked)
    assert about_a_relation("gift for oksana's mum too, she's still at Fenby", "Oksana", asked)
    assert about_a_relation("oksana's best mate rhea still at Kilnworth", "Oksana", asked)
    # A relation described, not named, is still someone else: "is a team lead" says what
    # the brother does; "is Ines Roth" says who the relation is.
    assert about_a_relation("oksana's brother is a nurse at Vell", "Oksana", asked)
    assert not about_a_relation("Oksana's manager is Ines Roth.", "Oksana", asked)
    assert not about_a_relation("oksana started at Pell on monday", "Oksana", asked)
    # A name written with an accent and asked without it.
    asked = {"what", "bike", "has", "zoe", "got"}
    assert about_a_relation("Tiago (Zoë's bro) has a spare bike", "Zoe", asked)
    assert writes_name("Zoë rang from her new flat", ["Zoe"], asked)
    # What was the person's before ("old", "former") is not what holds now, unless asked.
    asked = {"where", "does", "oksana", "live", "now"}
    assert about_a_relation("Rhea found the keys to Oksana's old flat", "Oksana", asked)
    assert not about_a_relation("Oksana's old flat: 3 Mill Lane", "Oksana", asked | {"old"})
    # The user's relation described.
    asked = {"what", "diet", "do", "i", "follow"}
    assert about_a_relation("my sister is vegan now, no more cheese", None, asked)
    # A parent as their child writes of them, bare.
    asked = {"who", "is", "my", "doctor", "these", "days"}
    assert about_a_relation("mum asked me to book her eye test with Dr Ode", None, asked)
    assert not about_a_relation("Mumbai trip: new GP letter to bring", None, asked)


async def test_a_relations_news_in_a_namespace_of_three_notes_that_all_name_the_person(
    memory: Memory,
) -> None:
    # The asked name is in every note (a name in most memories says nothing of a subject),
    # and the relation's news says a change: it is still no later version of her job.
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("Oksana does claims at Fenby Insurance", 300),
            ("oksana's first month at Kilnworth Bank - she likes it", 60),
            ("oksana's husband teodor switched to Pell Freight in june", 30),
        ],
        "Where is Oksana working at the moment?",
    )
    assert result.memories[0].uuid == new
    assert "Kilnworth" in result.answer


async def test_a_wish_or_a_rumour_is_no_later_version_and_no_answer_for_now(
    memory: Memory,
) -> None:
    (_, new, wish), result = await _asked_after(
        memory,
        [
            ("Benedek runs the night desk at Tarn Freight", 400),
            ("Benedek's first week at Orla Pay went well, the canteen is great", 60),
            ("Benedek wants to try product design someday, not yet", 5),
        ],
        "Who does Benedek work for now?",
    )
    assert result.memories[0].uuid == new
    assert "Orla Pay" in result.answer
    # Asked about the plan itself, the wish answers.
    result = await memory.recall("What is Benedek hoping to do someday?", reference_time=NOW)
    assert result.memories[0].uuid == wish


async def test_a_note_about_the_users_relation_is_not_about_the_user(memory: Memory) -> None:
    await _add(memory, "I'm vegetarian, but fish now and then is fine.", 400)
    new = await _add(memory, "Fully plant-based since January: vegan, basically.", 60)
    sister = await _add(memory, "My sister Ilka went vegan in spring and loves it.", 10)
    result = await memory.recall("What diet do I follow these days?", reference_time=NOW)
    order = [m.uuid for m in result.memories]
    assert order.index(new) < order.index(sister)
    # ... but a note that says who the relation is stays about the user.
    manager = await _add(memory, "My manager is Priyanka Voss, pretty hands-off.", 5)
    result = await memory.recall("Who does the user report to?", reference_time=NOW)
    assert result.memories[0].uuid == manager


def test_a_note_that_states_before_it_asks_holds_a_value() -> None:
    assert states_then_asks("Anabela lives in Porto, visit her at Easter?")
    assert not states_then_asks("That's great, what did you do?")
    assert not states_then_asks("How is the new flat?")
    assert not states_then_asks("Wow, Noor! What trail did you hike?")


async def test_a_business_that_opens_a_users_note_is_no_person(memory: Memory) -> None:
    await _add(memory, "Car service at Brackley Motors, ask for Sam", 500)
    new = await _add(
        memory, "Fennick's Garage did the brakes for half what Brackley quoted. Using them now.", 45
    )
    result = await memory.recall("Where do I take the car for servicing?", reference_time=NOW)
    assert result.memories[0].uuid == new


async def test_one_named_persons_news_is_not_the_users_and_a_first_shift_says_a_change(
    memory: Memory,
) -> None:
    await _add(memory, "signed up with Eastgate food pantry - driver, thursday pickups", 400)
    new = await _add(
        memory, "first shift coordinating the sorting volunteers at Eastgate. 12 people, chaos", 85
    )
    await _add(memory, "Rowan's stepped back from the food pantry runs, his knee's gone", 30)
    result = await memory.recall("What do I do at the food pantry these days?", reference_time=NOW)
    assert result.memories[0].uuid == new


def test_news_of_a_named_person_against_a_thing_or_a_place_opening_a_note() -> None:
    assert about_a_named_person("Arlo Crane moved the design review to Friday")
    assert about_a_named_person("Rowan's stepped back from the pantry runs, his knee's gone")
    # "Hip's been ..." opens as "Rowan's stepped back ..." does, but the note says "it".
    assert not about_a_named_person("Hip's been grumbling so it's aqua jogging for now")
    assert not about_a_named_person("Quarry Road band: Mr Okonjo conducting, practice weds 7")
    assert not about_a_named_person("Gallo's Garage did the brakes")
    # A team named with its article is another's news too.
    assert about_a_named_person("The Quill team owns the expense tool and answers its pages")


async def test_a_place_that_opens_a_note_is_no_person(memory: Memory) -> None:
    await _add(
        memory, "Quarry Road band: Mr Okonjo conducting again this term, practice weds 7", 240
    )
    new = await _add(
        memory,
        "voice memo so practice tonight was run by this bloke Tobiah Renner, he's taking us "
        "through to the summer I think, very strict on tuning",
        50,
    )
    await _add(memory, "saw Mr Okonjo at the market, says he might teach in Leeds next year", 25)
    result = await memory.recall("Who's running band practice at the moment?", reference_time=NOW)
    assert result.memories[0].uuid == new


def test_now_and_then_is_no_change_and_now_asks_the_present_of_a_habit() -> None:
    assert not says_change("User is vegetarian but eats fish now and then.")
    assert not says_change("Every now and again I cycle to work.")
    assert says_change("Now and then we met in Leeds, but now we live in York.")
    # "What does X do ...?" gathers; asked with "now" it asks what holds now.
    assert accumulates("What does Juno do to unwind?")
    assert not accumulates("What does Juno do on the team now?")
    assert not accumulates("What does Juno do on Saturdays these days?")


async def test_the_note_written_after_a_users_question_is_no_reply_to_it(memory: Memory) -> None:
    # Notes written the same day: the later one is not an answer to the earlier's question.
    blitz = await _add(memory, "online blitz rating 1320, stuck forever", 400)
    await _add(memory, "rapid rating 1320?? same as blitz lol", 200)
    other = await _add(memory, "The status page was switched to a new config on Thursday.", 200)
    result = await memory.recall("What's my blitz rating?", reference_time=NOW)
    order = [m.uuid for m in result.memories]
    assert order[0] == blitz
    assert other not in order[:2]


def test_the_users_first_person_notes_are_no_name_a_later_version_must_hold() -> None:
    # "I" asks about the user and "Bean Theory" is a name of two words: the notes said in
    # the first person join the names compared, but a later note need not say "my".
    notes = [
        _Note("old", "my usual at Bean Theory: oat flat white, extra hot", 100),
        _Note("new", "iced americano, black - every morning this month at Bean Theory", 300),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.9)]
    moved = _supersede(
        notes,
        ranked,
        "What do I usually order at Bean Theory?",
        named=[{"old", "new"}, {"old"}],
        required=[{"old", "new"}],
        people=[{"old", "new"}],
        meaning={"old": 0.48, "new": 0.45},
    )
    assert moved.superseded_by == {"old": "new"}


def test_a_silent_later_note_that_drops_an_asked_word_the_line_kept_continues_no_line() -> None:
    # The first two notes are about the billing queue's escalation; the latest is about
    # another queue's, as close in meaning, and has no "billing".
    notes = [
        _Note("old", "On-call for the billing queue: escalate to Odile Marchetti.", 100),
        _Note("new", "Billing queue escalation: Kwame Asante (Odile away till June).", 300),
        _Note("search", "Search queue escalation contact is Pia Lind.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.95), (notes[2], 0.2)]
    moved = _supersede(
        notes,
        ranked,
        "Who do I escalate billing queue problems to?",
        kept={"old", "new", "search"},
        meaning={"old": 0.45, "new": 0.44, "search": 0.36},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_new_routine_most_days_and_a_date_that_slipped_say_a_change() -> None:
    assert says_change("walk to the studio most days now, 20 min by the river")
    assert says_change("Orrin launch slipped again, board signed off on May 9.")
    assert says_change("The release slid to June.")
    assert not says_change("Gran slipped on the ice, nothing broken.")
    assert not says_change("Been on the night bus for three days now.")


def test_a_state_begun_at_a_time_and_a_first_week_somewhere_say_a_change() -> None:
    assert says_change("Ilse takes the ferry since the hip op")
    assert says_change("dinner w Ilse - dairy-free since feb")
    assert says_change("Ilse's first month at Orla Pay went fine")
    assert says_change("first term with Maren went fine, says the teacher")
    assert says_change("first shift coordinating the sorting volunteers at Eastgate")
    assert says_change("Ivo's first game for Harrow Vale, two assists")
    assert says_change("AGM tonight - my first one as secretary")
    assert not says_change("first coffee with Ilse in ages")
    # For good, no more, a job taken.
    assert says_change("Ilse's staying with her brother in Tarnby for good")
    assert says_change("meds by post, no more queueing at the chemist")
    assert says_change("since I took the fixtures sec job the emails never stop")
    assert not says_change("no more than 2 tickets each")
    assert not says_change("took a photo of the job board for Ilse")
    # A span since a year, or since one's schooldays, is how long a value held.
    assert not says_change("Ilse has lived in Tarnby since 2019")
    assert not says_change("known Ilse since school")
    assert not says_change("first pancakes of the year")


def test_a_note_jotted_in_lower_case_that_opens_with_the_name_names_the_person() -> None:
    asked = {"what", "time", "does", "ines", "finish"}
    assert writes_name("ines stays till 6 now on thursdays", ["Ines"], asked)
    assert not writes_name("ines's partner lou finishes at 5", ["Ines"], asked)
    assert not writes_name("inessa finishes at 5", ["Ines"], asked)
    # A proper name jotted in lower case inside a note, where it can be nothing else: in
    # the possessive, or a name of several words written whole.
    assert writes_name("voice memo um so ines's new shifts start at 7", ["Ines"], asked)
    assert not writes_name("voice memo um ines's partner lou finishes at 5", ["Ines"], asked)
    menu = {"which", "day", "is", "casa", "lumbre", "closed"}
    assert writes_name("tried casa lumbre on a weds, shut!!", ["Casa", "Lumbre"], menu)
    assert not writes_name("tried casa nova on a weds", ["Casa", "Lumbre"], menu)
    # A one-word name in lower case anywhere, unless it is an everyday word too.
    assert writes_name(
        "coffee w odile, she's been with the brandt group since may", ["Odile"], set()
    )
    assert not writes_name("will ring the bank on monday", ["Will"], {"will"})
    assert writes_name("will's new bank is Harlow Mutual", ["Will"], {"will"})
    assert not writes_name("chapel service at 9:45 every sunday", ["Sunday"], set())
    # Two words in a row of a longer name; one of its words alone is a word.
    mill = ["Tallow", "Mill", "Candles"]
    assert writes_name("call w/ dario @ tallow mill, wicks 2 wks late now", mill, set())
    assert not writes_name("beef tallow from the mill shop", mill, set())
    # A name asked in lower case is no proper name: "eng" opens many notes of a team.
    assert not writes_name("eng chat lives in Parlour", ["eng", "team"], {"eng", "team"})


async def _asked_after(
    memory: Memory, notes: list[tuple[str, float]], question: str
) -> tuple[list[str], RecallResult]:
    """Each note added (text, days ago), then `question` asked: the notes' uuids in the
    order given, and the result."""
    uuids = [await _add(memory, text, days) for text, days in notes]
    return uuids, await memory.recall(question, reference_time=NOW)


@pytest.mark.parametrize(
    ("notes", "question"),
    [
        pytest.param(
            [
                ("Payments service owned by Team Heron (contact: Ola).", 300),
                ("Team Osprey took over payments from Heron as of sprint 12.", 40),
                ("Heron picked up the search indexer this quarter.", 30),
            ],
            "Which team owns the payments service now?",
            # "payments service" is asked as a name; the update writes only "payments":
            # a thing said in fewer words, not someone else.
            id="a thing of two lower-case words is no person",
        ),
        pytest.param(
            [
                ("Summer trip booked: Madeira, 3-10 June.", 200),
                ("Ferry strike, ugh. Rebooked for Menorca, same dates.", 40),
                ("The Okafors are going to Rhodes in August.", 25),
            ],
            "Where are we going this summer?",
            id="a trip rebooked is a later version of the trip booked",
        ),
        pytest.param(
            [
                ("Odile - bookkeeper at Fenmarsh Freight, hates the phones", 330),
                ("Odile's email sig: 'Odile Brant | Finance Manager | Fenmarsh' -- fancy", 80),
                (
                    "Tobin (odile's colleague) moved from finance over to bookkeeping, Odile "
                    "thinks he's brave",
                    40,
                ),
            ],
            "What does Odile do at work these days?",
            id="someone introduced in brackets as a colleague",
        ),
        pytest.param(
            [
                ("4-day week signed off!! mondays off from next month", 300),
                ("wednesdays off suit me better - quiet pool, empty shops, no emails", 85),
                ("Ines got mondays off now too, jammy", 40),
            ],
            "Which day of the week don't I work?",
            id="another person with the same day off too",
        ),
        pytest.param(
            [
                ("load-in 6pm, kit in Oskar's red Berlingo, he needs petrol money", 270),
                ("Oskar's Kangoo fits the bass amp if you fold the back seats. tight", 80),
                ("Lennart selling his old Berlingo £1.5k ono, asked if the band wants it", 40),
            ],
            "What van is Oskar driving us around in?",
            id="a new van written where the old one was",
        ),
        pytest.param(
            [
                ("teodor driving nights for quickfreight, hates the m6", 260),
                ("bumped into teodor in his parcelhub fleece at the garage, loves the routes", 40),
                ("teodor's son starting at the depot on earlies", 10),
            ],
            "who does teodor drive for?",
            id="a name asked in lower case and a note about their son",
        ),
        pytest.param(
            [
                ("Auntie Precious mob: 07700 900123", 400),
                (
                    "text from a new no: 'hi love its Aunty Precious, old phone died' 07811 900456",
                    70,
                ),
                ("Precious's son Kago new number 07956 900789 (work phone)", 20),
            ],
            "What's Auntie Precious's mobile number?",
            id="a name asked with a title and written with another",
        ),
        pytest.param(
            [
                ("Grandad Emeka uses his old walking cane, refuses anything else", 370),
                (
                    "OT came by for Grandad Emeka: a grey walker with wheels, he's off round the "
                    "garden on it",
                    80,
                ),
                ("Mr Adeyemi across the road got a mobility scooter, Grandad Emeka jealous", 40),
            ],
            "What does Grandad Emeka use to get around now?",
            id="someone named with a title of address",
        ),
        pytest.param(
            [
                ("my addr for forms: Flat 3, 12 Alder Way, Thornby TB2 5QR", 620),
                ("keys collected!! Heron Court, flat 5, TB2 8LS. first night on an air bed", 200),
                (
                    "old neighbour Rosalind from Alder Way says the new tenant in my place has "
                    "three dogs",
                    60,
                ),
            ],
            "What's my home address now?",
            id="a relation named before their name",
        ),
        pytest.param(
            [
                ("ilsa (chippy) - based in Carnford, yard behind her mum's. cash fine", 380),
                (
                    "Ilsa fitted the sash cords today, said the run from her new unit in Wexby "
                    "took 50 min so she charges travel",
                    70,
                ),
                (
                    "word at the timber yard: Ilsa the joiner might be working out of Dunmere "
                    "with a firm?? prob not",
                    15,
                ),
            ],
            "Where's Ilsa the joiner working out of these days?",
            id="a rumour written as a question",
        ),
        pytest.param(
            [
                ("Noor - silver Fiesta, parks by the chapel on market days", 300),
                ("Noor turned up in a blue Jimny, the Fiesta went to her nephew", 40),
                ("Idris (Noor's other half) got a Land Cruiser w/ the forestry job", 20),
            ],
            "What is Noor driving now?",
            id="someone introduced as another's other half",
        ),
        pytest.param(
            [
                ("herd vet = Corrie Vets, Mr Tallis, scanning Mar", 400),
                (
                    "scanning booked w/ Fellside Farm Vets - Ms Oduya, 4th Mar, need 2 at the crush",
                    80,
                ),
                ("Corrie fine for the cat, keep Pip there", 15),
            ],
            "Which vets see to the herd?",
            id="a user's note with a new practice where the old one was",
        ),
        pytest.param(
            [
                ("Van insurance with Harlow Mutual, renews in May, £620/yr.", 380),
                ("Brackenfield Direct - £455/yr, same cover, paid in full.", 25),
                ("Harlow Mutual sent a survey about the claims line", 10),
            ],
            "How much am I paying a year to insure the van?",
            id="a new insurer opening a user's note",
        ),
        pytest.param(
            [
                ("Film club meets the first Tuesday of every month at Cafe Lumen.", 220),
                ("Film club moved to the first Thursday of the month, same cafe.", 14),
                ("Quiz club meets on Tuesdays in the church hall.", 80),
            ],
            "What day does the film club meet?",
            id="another club of the same kind",
        ),
        pytest.param(
            [
                ("oren fully remote, only in for the summer party", 210),
                ("oren comes in tue-thu, desk by the lifts on 3, bring him the adapters", 33),
                ("oren's dog Pesto at the office friday?? apparently allowed", 5),
            ],
            "Is Oren in the office at all these days?",
            id="another's news written as a question",
        ),
        pytest.param(
            [
                ("nursery pickup 3:00, Tobi at the blue door", 210),
                ("Tobi in the after-school club till 5:45 mon-thu, collect from the hall", 30),
                ("hanne's boy also in club mon-thu, she can collect tobi if i'm late", 10),
            ],
            "What time do I collect Tobi Monday to Thursday?",
            id="another also in the club",
        ),
    ],
)
async def test_the_update_second_of_three_notes_ranks_first(
    memory: Memory, notes: list[tuple[str, float]], question: str
) -> None:
    (_, new, _), result = await _asked_after(memory, notes, question)
    assert result.memories[0].uuid == new


async def test_a_note_about_a_relation_is_no_later_version_nor_the_answer(memory: Memory) -> None:
    (_, new, _, _), result = await _asked_after(
        memory,
        [
            ("Tomasz Wrobel works as a surveyor at Kellan Homes, long commute.", 400),
            ("Tomasz: first month at Brightwater went fine, likes the crew.", 60),
            ("Tomasz's sister Ola just got promoted at Kellan Homes.", 20),
            ("Tomasz mentioned applying to Pellworth Surveys, never heard back.", 150),
        ],
        "Where does Tomasz work at the moment?",
    )
    assert result.memories[0].uuid == new
    assert "Brightwater" in result.answer


async def test_what_someone_does_on_a_weekday_in_the_plural_is_what_holds_now(
    memory: Memory,
) -> None:
    # "on Tuesdays" recurs: no Tuesday's window picks the note written on one.
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("Ayo swimming Tues 5pm at the lido, bring £4", 240),
            ("Ayo @ Gorse Lane riding school tuesdays 5.15, hat + boots, obsessed", 35),
            ("Ayo's friend Efa started swim club on Tues", 20),
        ],
        "What does Ayo do on Tuesdays?",
    )
    assert result.memories[0].uuid == new
    assert "riding" in result.answer


def test_a_later_note_that_says_a_change_but_drops_the_lines_asked_word_is_no_version() -> None:
    # The retro moved; a later note moves the design review, sharing "moved" and a day
    # with the retro notes but not "retro".
    notes = [
        _Note("old", "Retro every other Friday at 15:00, Birch room.", 100),
        _Note("new", "Retro moved to Thursdays 14:00 from next sprint.", 300),
        _Note("review", "Design review moved to 16:00 on Fridays.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.9), (notes[2], 0.5)]
    moved = _supersede(
        notes,
        ranked,
        "When is the retro?",
        kept={"old", "new", "review"},
        meaning={"old": 0.6, "new": 0.55, "review": 0.4},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_a_later_note_giving_a_value_of_the_same_shape_is_a_version_farther_in_meaning() -> None:
    # The new address is given without the word "email": a value of the same shape.
    notes = [
        _Note("old", "uncle teodor email: teo.marr61@plumpost.it", 100),
        _Note("new", "Uncle Teodor writing from t.marr.casa@ventomail.it - old one hacked", 300),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.6)]
    moved = _supersede(
        notes,
        ranked,
        "What's Uncle Teodor's email address?",
        named=[{"old", "new"}],
        meaning={"old": 0.9, "new": 0.7},
    )
    assert moved.superseded_by == {"old": "new"}
    assert value_shapes("teo.marr61@plumpost.it") == {"email"}
    assert value_shapes("new no. 07781 204 919") == {"phone"}
    assert value_shapes("Tilde Direct: £410/yr") == {"price"}
    assert value_shapes("standup 9:30 daily, swim sat 9am") == {"clock"}
    assert value_shapes("base URL https://api.example.io/v2") == {"url"}
    assert value_shapes("in 2024 we had 3 kids") == set()
    assert value_shapes("Opa takes his thyroid pill in the morning") == {"part of day"}
    assert value_shapes("levothyroxine at night, absorbs better") == {"part of day"}
    assert value_shapes("quiz night at the Swan") == set()


def test_a_named_persons_later_note_giving_a_time_of_day_in_words_is_a_version() -> None:
    # Both give a time of day in words: the later one is farther from the question by
    # meaning (it names the drug, not the pill) and is still the same attribute.
    notes = [
        _Note("old", "Opa takes his thyroid pill in the morning before coffee", 100),
        _Note("new", "Opa - levothyroxine at night, pharmacist said it absorbs better", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.6)],
        "When does Opa take his thyroid pill?",
        named=[{"old", "new"}],
        meaning={"old": 0.63, "new": 0.46},
    )
    assert moved.superseded_by == {"old": "new"}


@pytest.mark.parametrize(
    "text",
    [
        "permit renewed: level 2 of the multi-storey, £49/mo from 1 Apr",
        "memo: clinic opens 08:15 w/ effect from 3rd March",
        "from June 9 the gate code is 4471",
        "ok all, I'm running the quiz from tonight, Bram handed me the list",
        "book club meets at the library from here on",
        "physio slot's fridays 9:15 from here, same room",
        "day 1 on Tallyhub, expenses from my phone at last",
        "so um yeah, we're going with Lidia Sousa for the flowers",
    ],
)
def test_a_value_from_a_day_a_first_day_and_a_choice_made_say_a_change(text: str) -> None:
    assert says_change(text)


@pytest.mark.parametrize(
    "text",
    [
        # a month alone may come back every year; a name is no month; a span of hours
        "hayfever: loratadine 1/day from april",
        "heard from jules, not confirmed",
        "open from 9 to 5 on saturdays",
        "day one of the cricket was rained off",
    ],
)
def test_a_month_alone_a_name_and_hours_say_no_change(text: str) -> None:
    assert not says_change(text)


def test_a_users_later_note_sharing_a_word_is_a_version_farther_but_continues_no_line() -> None:
    # "trains" is shared, not asked: the window note is the aisle note's later version,
    # 0.2 farther from the question. The latest note shares "window" with it and is as
    # far again: it continues no line.
    notes = [
        _Note("old", "Always book me an aisle seat on trains.", 100),
        _Note("new", "Trains: window please - I sleep better against the wall.", 300),
        _Note("glass", "Window cleaner comes on the 3rd, cash only.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.3), (notes[2], 0.1)]
    moved = _supersede(
        notes,
        ranked,
        "Which place should be reserved for me on rail journeys?",
        kept={"old", "new", "glass"},
        meaning={"old": 0.7, "new": 0.5, "glass": 0.32},
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"
    # A later version is close to the question; the latest shares a word with it and is
    # 0.24 farther than the line's closest: not close enough to continue the line.
    moved = _supersede(
        notes,
        ranked,
        "Which place should be reserved for me on rail journeys?",
        kept={"old", "new", "glass"},
        meaning={"old": 0.55, "new": 0.5, "glass": 0.31},
    )
    assert moved.superseded_by == {"old": "new"}


def test_a_bystander_far_below_the_question_keeps_no_words_for_a_line() -> None:
    # A reminder about the release notes shares "notes" with the user's notes app and is
    # far from the question: it starts no line that the update ("everything lives in
    # Scrivly now", found by words only) would have to hold "notes" for.
    notes = [
        _Note("filler", "Reminder: the release notes check runs every Thursday.", 50),
        _Note("old", "User: I keep all my notes in Jotwell.", 100),
        _Note("new", "User: everything lives in Scrivly now, it syncs better.", 300),
    ]
    ranked = [(notes[1], 1.0), (notes[0], 0.5), (notes[2], 0.3)]
    moved = _supersede(
        notes,
        ranked,
        "Which app does the user keep notes in?",
        named=[{"old", "new"}],
        kept={"filler", "old", "new"},
        meaning={"filler": 0.35, "old": 0.7},
    )
    assert moved.superseded_by.get("old") == "new"
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


@pytest.mark.parametrize(
    ("texts", "question", "meaning"),
    [
        pytest.param(
            [
                "parking permit: zone C, £90 a year",
                "permit renewed - zone F now after the boundary review, £120",
                "Odile switched her permit to zone C, £90 a year like mine was",
            ],
            "What parking zone is my permit for?",
            (0.7, 0.6, 0.62),
            # A neighbour's permit repeats the old zone and price with a change word.
            id="after a line of versions",
        ),
        pytest.param(
            [
                "Choir practice: Tuesdays 7pm at the Mill Lane hall",
                "choir practice moved to Wednesdays 7.30pm, hall floor being redone",
                "choir social moved to the Mill Lane hall, Tuesdays 7pm as before",
            ],
            "When is choir practice?",
            (0.7, 0.62, 0.6),
            # Practice moved; the social later moved into the old hall and slot.
            id="of two later changes to one note",
        ),
    ],
)
def test_a_later_note_going_back_to_the_value_a_change_replaced_is_no_version(
    texts: list[str], question: str, meaning: tuple[float, float, float]
) -> None:
    notes = [
        _Note(u, t, at)
        for u, t, at in zip(("old", "new", "other"), texts, (100, 300, 400), strict=True)
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.85), (notes[1], 0.55)]
    moved = _supersede(
        notes,
        ranked,
        question,
        kept={"old", "new", "other"},
        meaning=dict(zip(("old", "new", "other"), meaning, strict=True)),
    )
    assert moved.superseded_by == {"old": "new"}
    assert max(moved.scores, key=lambda u: moved.scores[u]) == "new"


def test_of_two_silent_later_notes_the_one_going_back_to_the_old_value_goes_below() -> None:
    # The commute changed without a change word; a later note about someone else repeats
    # the old train: it is about the old value, and ranks below the current one.
    notes = [
        _Note("old", "commute: the 7:50 from Harwick, platform 2", 100),
        _Note("new", "e-bike arrived, canal path to work takes 25 min", 300),
        _Note("other", "Pim catches the 7:50 from Harwick too", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.8), (notes[1], 0.4)]
    moved = _supersede(
        notes,
        ranked,
        "How do I get to work?",
        kept={"old", "new", "other"},
        meaning={"old": 0.6, "new": 0.55, "other": 0.58},
    )
    assert moved.superseded_by == {"old": "new"}
    assert moved.old_values == {"other"}
    scores = {u: moved.scores.get(u, s) for u, s in [("old", 1.0), ("other", 0.8), ("new", 0.4)]}
    assert max(scores, key=lambda u: scores[u]) == "new"
    # Asked about the past, nothing is about an old value.
    earlier = _supersede(
        notes,
        ranked,
        "How did I get to work before?",
        kept={"old", "new", "other"},
        meaning={"old": 0.6, "new": 0.55, "other": 0.58},
        earlier=True,
    )
    assert earlier.old_values == set()


def test_a_note_naming_the_old_value_replaces_nothing_the_update_must_avoid() -> None:
    # The reminder card names the old practice: it drops the checkup words, but the
    # update that repeats them is no note about the old value for that.
    notes = [
        _Note("old", "Dr Halloway at Fenwick Dental is my dentist, checkup every 6 months", 100),
        _Note("card", "Fenwick Dental sent another reminder card", 200),
        _Note(
            "new", "checkup with Dr Sunniva Brand at Quayside Dental today, next in 6 months", 300
        ),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.7), (notes[2], 0.6)]
    moved = _supersede(
        notes,
        ranked,
        "Who's my dentist these days?",
        kept={"old", "new", "card"},
        meaning={"old": 0.7, "new": 0.6, "card": 0.58},
    )
    assert moved.superseded_by.get("old") == "new"


@pytest.mark.parametrize(
    ("notes", "question", "current"),
    [
        pytest.param(
            [
                "rent £910 pcm, due the 1st, paid to mrs okafor",
                "letter from Harbourside Lettings: rent £965 from next month, due on the 3rd",
                "tom's rent went up to £910 too, ridiculous",
            ],
            "How much is my rent now?",
            "£965",
            id="another's rent at the old amount, said with a change word",
        ),
        pytest.param(
            [
                "gym: Corewell, £29/mo, direct debit on the 2nd",
                "Ironbark Fitness induction done, £34 a month, 24h access",
                "Tamsin joined Corewell too, £29/mo like mine",
            ],
            "Which gym am I a member of now?",
            "Ironbark",
            id="the old gym named again after a silent update",
        ),
    ],
)
async def test_a_note_about_the_old_value_ranks_below_the_update_and_does_not_answer(
    memory: Memory, notes: list[str], question: str, current: str
) -> None:
    (_, new, _), result = await _asked_after(
        memory, [(notes[0], 400), (notes[1], 70), (notes[2], 30)], question
    )
    assert result.memories[0].uuid == new
    assert current in result.answer


def test_a_change_that_says_it_left_the_old_value_is_no_note_about_it() -> None:
    # The update names the old editor it left; an earlier silent note dropped the word:
    # the update is still the change, not a note about the old value.
    notes = [
        _Note("old", "Ilse Marr writes all her code in Vim.", 100),
        _Note("notes", "Ilse Marr keeps her notes in plain text files.", 300),
        _Note("new", "Ilse Marr no longer uses Vim; she codes in Zed now.", 400),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.7), (notes[1], 0.6)]
    moved = _supersede(
        notes,
        ranked,
        "Which editor does Ilse Marr use?",
        named=[{"old", "notes", "new"}],
        name_terms={"ilse", "marr"},
        meaning={"old": 0.7, "notes": 0.5, "new": 0.66},
    )
    assert moved.superseded_by["old"] == "new"
    assert moved.old_values == set()


def test_someone_introduced_in_brackets_as_a_relation_is_whom_the_note_is_about() -> None:
    asked = {"what", "does", "odile", "do", "at", "work"}
    # The note is about Tobin, whoever else it names after the brackets.
    assert introduced_as_a_relation(
        "Tobin (odile's colleague) moved from payroll over to audit, Odile thinks he's brave",
        asked,
    )
    assert introduced_as_a_relation("Arvo (Odile's studio partner): arvo@kilnworks.example", asked)
    assert introduced_as_a_relation("Pepper (next door's cat) in at Sandhill Vets", asked)
    # ... not when it is the asked person so introduced, nor the asked relation.
    assert not introduced_as_a_relation("odile (bram's sister) - 12 Wick Lane, Hexham", asked)
    assert not introduced_as_a_relation(
        "Tobin (odile's colleague) in the office tues", {"odile", "colleague"}
    )
    # Brackets that say no relation leave the note alone.
    assert not introduced_as_a_relation("fwd (dad's email): Welcome to Voltmere Energy", asked)
    assert not introduced_as_a_relation("Aunt Wendeline (Dad's side) visits in July", asked)


def test_a_first_clause_that_says_someone_has_it_too_is_anothers_news() -> None:
    assert like_another("Ines got wednesdays off now too, jammy", set())
    assert like_another("Brigid has fridays off too now, lunch?", set())
    assert like_another("Corrin's chapel (St Ebba's) does 9:30 too", set())
    assert like_another("The billing exporter runs on Python 3.12 as well.", set())
    # ... unless it is about whom is asked, or the user has it as well.
    assert not like_another("corrin's rent went up to £810 too, grim", {"corrin"})
    assert not like_another("me too, booked the same slot", set())
    # "too" in a later clause adds to the note's own news.
    assert not like_another("Salary into the Quillon account now, moved the debits too.", set())


def test_news_about_the_old_value_is_no_later_version() -> None:
    # The broker's contact moved firms: news of the old value, not a new broker ...
    notes = [
        _Note("old", "van insurance broker = Cobbold & Reyes, contact Hamish", 100),
        _Note("news", "Hamish from Cobbold & Reyes moved to a firm up north apparently", 300),
        _Note("new", "Hamish from Cobbold & Reyes moved it to Tarrant Risk this year", 300),
    ]
    # The user's notes, asked about the user's things.
    kept = {"old", "news", "new"}
    question = "Who's the van broker?"
    moved = _supersede(notes, [(notes[0], 1.0), (notes[1], 0.6)], question, kept=kept)
    assert "old" not in moved.superseded_by
    # ... but one that names a new value is the change.
    moved = _supersede(notes, [(notes[0], 1.0), (notes[2], 0.6)], question, kept=kept)
    assert moved.superseded_by["old"] == "new"


def test_a_name_written_where_the_old_value_was_is_a_version_farther_in_meaning() -> None:
    notes = [
        _Note("old", "Noor's flat in Hull - spare room free, she said just text", 100),
        _Note("new", "housewarming @ Noor's sat 9th!! Dundee, top floor no lift", 300),
        _Note("same", "tea at Noor's in Hull sunday, that bay window!", 300),
    ]
    noor = {"old", "new", "same"}
    question = "Where's Noor living at the moment?"
    # 0.2 below the old note in meaning: a version when it writes a new place instead ...
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.5)],
        question,
        named=[noor],
        name_terms={"noor"},
        meaning={"old": 0.5, "new": 0.3},
    )
    assert moved.superseded_by["old"] == "new"
    # ... not when it still writes the old one.
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[2], 0.5)],
        question,
        named=[noor],
        name_terms={"noor"},
        meaning={"old": 0.5, "same": 0.3},
    )
    assert "old" not in moved.superseded_by


def test_the_named_subject_with_a_new_name_where_the_value_was_is_a_version_farther_still() -> None:
    notes = [
        _Note("old", "Teodor banks with Quarrymoor Mutual since uni, never moving", 100),
        _Note("new", "T. sent the sort code for the kitty - it's a Corvane account", 300),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.5)]
    question = "Which bank is Teodor with these days?"
    meaning = {"old": 0.52, "new": 0.22}
    moved = _supersede(
        notes, ranked, question, named=[{"old", "new"}], name_terms={"teodor"}, meaning=meaning
    )
    assert moved.superseded_by["old"] == "new"
    # Tied only as the user's notes, as far in meaning is too far.
    moved = _supersede(notes, ranked, "Which bank am I with?", kept={"old", "new"}, meaning=meaning)
    assert "old" not in moved.superseded_by


def test_a_relative_named_by_kin_word_and_name_is_someone_else() -> None:
    asked = {"what", "language", "am", "i", "learning"}
    assert kin_by_name("cousin jomar learning Tagalog for his wedding", asked, set())
    assert kin_by_name("Aunt Odile's evening carer switched again", asked, set())
    # ... not the relative asked about, nor one who brings news of whom is asked.
    assert not kin_by_name("uncle bao picked us up in a red hatchback", {"uncle", "bao"}, set())
    assert not kin_by_name("aunt bev on phone: nia left uni", {"my", "cousin", "nia"}, {"nia"})


async def test_a_note_about_someone_close_is_no_earlier_version_either(memory: Memory) -> None:
    (_, new, _, _), result = await _asked_after(
        memory,
        [
            ("anouk joined riverside striders, track on tuesdays", 300),
            ("anouk's in the blue kestrel road club vest in all her race photos now", 50),
            (
                "ilse (anouk's sis) joined riverside striders running club, got anouk's old club top",
                30,
            ),
            ("anouk switched to a standing desk, says her back is better", 10),
        ],
        "which running club is anouk in these days?",
    )
    assert result.memories[0].uuid == new


def test_a_title_is_no_part_of_a_name_and_a_titled_person_opening_a_note_is_another() -> None:
    assert without_title("Aunt Mbali") == "Mbali"
    assert without_title("Mr Hiroshi Tanaka") == "Hiroshi Tanaka"
    assert without_title("Dr. Okafor") == "Okafor"
    # ... what is left must be a name, not an initial.
    assert without_title("Aunt K") == "Aunt K"
    assert without_title("Grandpa") == "Grandpa"
    assert without_title("Aunt -") == "Aunt -"
    asked = {"which", "bay", "is", "mine"}
    assert titled_another("Mr Lindqvist (flat 6) got bay 21, right next to mine", asked, set())
    # ... not when it passes news on, is whom is asked, or speaks of the user.
    assert not titled_another("Mrs Okoye: bins are tuesdays now", asked, set())
    assert not titled_another("Mr Hale (no. 4) says bins are tuesdays now", asked, set())
    assert not titled_another("Mr Lindqvist got bay 21", {"lindqvist"}, set())
    assert not titled_another("Mr Lindqvist swapped bays with me", asked, set())
    # A councillor is named with a title too.
    assert without_title("Cllr Bronwen Price") == "Bronwen Price"
    who = {"who", "is", "our", "councillor"}
    assert titled_another("Cllr Tunde Balogun (next ward over) switched parties", who, set())


def test_a_place_named_in_full_is_written_short_in_an_address() -> None:
    asked = {"when", "is", "elm", "court", "handed", "over"}
    assert writes_name("Elm Ct: client signed off a new handover date", ["Elm", "Court"], asked)
    assert writes_name("elm court snagging list", ["Elm", "Court"], asked)
    assert writes_name("Fenwick Road flat viewing", ["Fenwick", "Rd"], set())
    assert not writes_name("Elmwood Ct handover moved", ["Elm", "Court"], asked)
    assert not writes_name("Elm Street handover moved", ["Elm", "Court"], asked)


def test_a_relation_before_their_name_or_after_anothers_possessive_is_someone_else() -> None:
    asked = {"where", "do", "i", "live"}
    assert about_a_relation("old neighbour Pilar says the new tenant plays drums", None, asked)
    assert about_a_relation("Sipho's lad keeps parking in bay 14", None, {"which", "bay"})
    # ... a relation given as a labelled value is the user's own.
    assert not about_a_relation("manager: Ines Ruiz", None, {"who", "manager"})
    assert not about_a_relation("Dana's office moved to the fourth floor", None, asked)


async def test_a_request_or_an_offer_is_no_later_version(memory: Memory) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("Kestrel SC: I'm on the tea rota, 2nd saturday, scones", 330),
            ("remind me, I'm race officer at the sailing club this season, radio charged", 60),
            ("maeve asked if i'd take a role on the sailing club tea rota with her", 20),
        ],
        "what's my role at the sailing club now?",
    )
    assert result.memories[0].uuid == new
    assert unsettled("Oskar offered to drive the kit to the gig")
    assert not unsettled("I asked about the rota, it's mondays now")


def test_a_pets_walker_is_someone_else_unless_the_walking_is_asked() -> None:
    note = "luna's walker Dario switched to afternoons"
    assert about_a_relation(note, "Luna", {"what", "is", "luna", "eating"})
    assert not about_a_relation(note, "Luna", {"who", "walks", "luna"})
    # A person's carer is who looks after them: no one else.
    assert not about_a_relation("Dad's carer from Brightcare = Agnieszka", "Dad", {"who"})
    assert like_another("mo's thesis also due 30 sept - retreat together?", set())
    assert not like_another("I also moved my thesis to 30 sept", set())


def test_a_users_note_with_a_new_name_is_a_version_one_with_the_old_name_is_news_of_it() -> None:
    question = "Who services our kiln?"
    old = _Note("old", "kiln svc: Emberline Services, Joss 07700 900111, annual Mar", 100)
    # A new firm where the old one was, said far from the question in meaning ...
    new = _Note("new", "kiln svc booked w/ Glowfire Kilns - Ana, elements done, next Mar", 300)
    # ... and news of the old firm, sharing a word with the old note as well.
    news = _Note("news", "Emberline did the kiln at Hatch Pottery, apparently rubbish", 400)
    for later, version in ((new, True), (news, False)):
        moved = _supersede(
            [old, later],
            [(old, 1.0), (later, 0.3)],
            question,
            kept={"old", later.uuid},
            meaning={"old": 0.6, later.uuid: 0.3},
        )
        assert (moved.superseded_by.get("old") == later.uuid) is version, later.content


def test_a_change_word_inside_a_wish_or_a_request_is_part_of_it() -> None:
    # What is asked for or rumoured may be new; the note still holds no value.
    assert unsettled("Leila asked if we'd send rhubarb crowns for the new garden")
    assert unsettled("gossip: Tomasz might go in w/ a new firm")
    assert unsettled("Harrowfield want their own courier (Bexley Freight) for the big order")
    # ... a change said outside that clause is said.
    assert not unsettled("Mum asked about aqua aerobics, she's switched to the Tuesday class now")
    # A wish of someone else inside a note that gives a value is no wish of the note.
    assert not unsettled("Booked! Ljubljana, same dates - the kids already want to see the castle")


def test_a_named_persons_team_is_someone_else_the_users_own_team_is_not() -> None:
    asked = {"what", "days", "is", "ottilie", "in", "the", "office"}
    assert about_a_relation("Ottilie's team switched from Slack to Teams", "Ottilie", asked)
    assert about_a_relation("ottilie's squad moved to the 3rd floor", "Ottilie", asked)
    # ... unless the team is what is asked, or it is the user's own.
    asked = {"what", "team", "is", "ottilie", "on"}
    assert not about_a_relation("ottilie's team is Security now", "Ottilie", asked)
    assert not about_a_relation("our team moved to Slack", None, {"what", "chat", "app"})


def test_a_later_note_without_the_shape_of_the_value_asked_gives_no_new_value() -> None:
    # The question asks a phone number: a later note about the same person that gives
    # none is no later version of the note that gives one, whatever its closeness.
    notes = [
        _Note("old", "Nadia mob 07700 900 123", 100),
        _Note("number", "hiya it's Nadia, save this one: 07811 222 333, old phone died", 300),
        _Note("hours", "Nadia said ring her after 7, she's on lates all week", 350),
    ]
    ranked = [(notes[0], 1.0), (notes[2], 0.5), (notes[1], 0.4)]
    moved = _supersede(
        notes,
        ranked,
        "What's Nadia's mobile number?",
        named=[{"old", "number", "hours"}],
        meaning={"old": 0.65, "number": 0.51, "hours": 0.52},
    )
    assert moved.superseded_by == {"old": "number"}
    assert moved.scores["number"] > moved.scores["old"]


def test_an_application_not_yet_answered_is_unsettled() -> None:
    assert unsettled("<reefwalker> applied to be treasurer of the rowing club, wish me luck")
    assert unsettled("applying for the deputy head post at Brookfield")
    assert not unsettled("new treasurer is Ines, she applied and the vote was unanimous, moved")


async def test_a_note_about_another_of_a_numbered_thing_is_no_later_version(
    memory: Memory,
) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("bay 4 linen delivery tues, porter signs for it", 240),
            ("rota line: Fri 09:00 | LINEN DELIVERY | Bay 4 | porter", 35),
            ("tues linen cage for bay 6 - short again", 15),
        ],
        "Which day does bay 4 get its linen?",
    )
    assert result.memories[0].uuid == new


def test_another_numbered_thing_is_told_by_its_number() -> None:
    @dataclass
    class _Entry:
        uuid: str
        content: str

    read = [
        _Entry("same", "Ward 8 top-up moved to mon"),
        _Entry("other", "weds trolley for ward 9 - late again"),
        _Entry("both", "ward 9 and ward 8 share a pharmacist"),
        _Entry("none", "pharmacy closes at 6"),
    ]
    question = "Which day is the ward 8 pharmacy top-up?"
    assert about_another_numbered(question, read) == {"other"}  # type: ignore[arg-type]
    assert about_another_numbered("Which day is the pharmacy top-up?", read) == set()  # type: ignore[arg-type]


async def test_a_users_change_with_a_new_name_far_in_meaning_is_the_update(
    memory: Memory,
) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("Heating oil & electric with Brackenfield Energy, fixed till March.", 300),
            ("We're on Tidewell Power now, the switch went through on the 9th.", 40),
            ("Tidewell meter reading due end of the month.", 10),
        ],
        "Who's our energy supplier?",
    )
    assert result.memories[0].uuid == new
    assert "Tidewell" in result.answer


async def test_anothers_change_with_a_new_name_is_no_update_of_the_users_note(
    memory: Memory,
) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("got an allotment!!! plot 4 at Millbrook, damp corner by the gate", 500),
            ("first proper dig on plot 19 today, full sun, much better than the damp corner", 150),
            ("Henrike's taken over plot 11 from Walt (he's 88, finally giving up)", 60),
        ],
        "Which allotment plot do I have?",
    )
    print([m.content[:40] for m in result.memories[:3]])
    assert result.memories[0].uuid == new


def test_nothing_changed_denies_a_change() -> None:
    assert not says_change("invoices still go to Lapwing, nothing moved there")
    assert says_change("moved to Lapwing, nothing else new")


async def test_a_users_change_said_in_other_words_is_the_update(memory: Memory) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("pescatarian since 2022, still eating prawns + feta", 400),
            ("Going fully plant-based as of this month. Soy milk in the fridge for guests.", 40),
            ("quiz night at the Swan moved to thursdays", 10),
        ],
        "what diet am I following?",
    )
    assert result.memories[0].uuid == new


@pytest.mark.parametrize(
    "someone",
    [
        "bogdan on £14.20 now he says",
        "Bogdan switched to nights for the extra £1.40",
    ],
)
def test_someones_change_is_no_users_change_said_in_other_words(someone: str) -> None:
    # A later note about someone (as he or she, or opening with what they did) is held to
    # the narrower margin: a user's note in other words may be farther from the question.
    notes = [
        _Note("old", "started at the depot today, picker, £12.10/hr", 100),
        _Note("other", someone, 300),
        _Note("own", "payslip: £13.60/hr, the team lead bump came through", 200),
    ]
    ranked = [(notes[0], 1.0), (notes[1], 0.5), (notes[2], 0.4)]
    question = "what's my hourly rate?"
    meaning = {"old": 0.55, "other": 0.36, "own": 0.38}
    moved = _supersede(notes, ranked, question, meaning=meaning, kept={"old", "other", "own"})
    assert moved.superseded_by.get("old") != "other"


def test_a_date_that_slipped_says_a_change() -> None:
    assert says_change("Kestrel slipped - go-live is June 3 per the board")
    assert says_change("the handover date slipped.")
    assert not says_change("slipped on the ice outside the depot, wrist ok")


@pytest.mark.parametrize(
    ("question", "gathers"),
    [
        ("what hours is Ilse working?", False),
        ("Which days is Tomek around in the studio?", False),
        ("What kind of shifts is Aoife on?", False),
        ("What kind of art does Aoife make?", True),
        ("What books has Aoife read?", True),
    ],
)
def test_a_schedule_asked_in_the_singular_is_one_value(question: str, gathers: bool) -> None:
    assert accumulates(question) is gathers


def test_the_hours_of_a_shift_as_a_range_are_a_clock_value() -> None:
    assert value_shapes("Ilse in the office doing payroll, 9-5 mon-fri") == {"clock"}
    assert value_shapes("ilse: 'on 6-2 now, home by half 2'") == {"clock"}
    assert value_shapes("Madeira, 3-10 June") == set()
    assert value_shapes("ref AB-12-3") == set()


async def test_what_came_after_is_no_answer_to_what_held_before_it(memory: Memory) -> None:
    (old, new, _), result = await _asked_after(
        memory,
        [
            ("Moved into the flat on Tanner Lane, Hull. Landlord is Mrs Okoro.", 600),
            ("Keys for 9 Quarry Rise, York! Boxes everywhere, chips on the floor", 40),
            ("Hull trip w/ Ade for the match in May, train booked", 10),
        ],
        "Where did I live before Quarry Rise?",
    )
    assert result.memories[0].uuid == old
    assert "Tanner Lane" in result.answer
    assert new in [m.uuid for m in result.memories]


def test_a_users_change_in_other_words_may_be_farther_from_the_question() -> None:
    # The user's notes share no word; the later one says a change and is 0.16 farther
    # from the question than the earlier one (more than `MEANING_MARGIN`).
    notes = [
        _Note("old", "pescatarian since 2022, still eating prawns + feta", 100),
        _Note("new", "Going fully plant-based as of this month. Soy milk for guests.", 300),
    ]
    moved = _supersede(
        notes,
        [(notes[0], 1.0), (notes[1], 0.3)],
        "what diet am I following?",
        meaning={"old": 0.41, "new": 0.25},
        kept={"old", "new"},
    )
    assert moved.superseded_by == {"old": "new"}


@pytest.mark.parametrize(
    ("notes", "question"),
    [
        pytest.param(
            [
                ("station bike locker row C, £40/yr, renew online", 300),
                ("locker key came - row F after the shelter rebuild, £45", 50),
                ("Tomek's locker still row C, his side of the racks", 15),
            ],
            "Which row is my bike locker in?",
            id="a thing of someone named once",
        ),
        pytest.param(
            [
                ("my boat Wren - Dacron mainsail, patched twice, tired", 400),
                ("Wren's laminate mainsail went on today, flies now", 45),
                ("sail loft quote for a new jib, £600", 10),
            ],
            "What mainsail does my boat have?",
            # "Wren" is written in the user's other notes too: the user's own boat.
            id="a name the user's notes write is the user's thing",
        ),
        pytest.param(
            [
                ("expenses: Tallyho app, snap receipts, export monthly", 330),
                ("Ledgerly monthly export: 42 receipts, £1,310 claimable", 70),
                ("Priya likes doing her expenses in a spreadsheet, old school", 160),
            ],
            "What do I use for my expenses?",
            id="what someone named once does",
        ),
        pytest.param(
            [
                ("sunday roast = the Plough, 1pm booking", 260),
                ("roast at the Feathers again this sunday, the Plough queue was mental", 40),
                ("Nadia says the Plough does the best sunday roast in town", 8),
            ],
            "Where do we go for sunday roast?",
            id="what someone named once says",
        ),
        pytest.param(
            [
                ("you're on lates from Tue 9th, 4 in a row. earplugs!!", 20),
                ("lates block moved to thu 11th-sun. tue 9th = training day instead", 5),
                ("Kofi's on lates from the 2nd, he says bring snacks for the 22:00 dip", 12),
            ],
            "When does my next run of late shifts begin?",
            id="where someone named once is",
        ),
        pytest.param(
            [
                ("groceries: Fernway, delivery thurs, min spend £40", 300),
                ("Everything's on the Brindle Market app now, cheaper and it does sundays", 40),
                ("Fernway voucher in the drawer, expires june", 15),
            ],
            "Who do we get our food shopping from?",
            # "Everything" is no one: the note is the user's.
            id="a pronoun is no one named",
        ),
    ],
)
async def test_a_thing_of_someone_named_once_is_no_version_of_the_users(
    memory: Memory, notes: list[tuple[str, float]], question: str
) -> None:
    (_, new, _), result = await _asked_after(memory, notes, question)
    assert result.memories[0].uuid == new


async def test_a_change_of_another_attribute_of_the_named_subject_is_no_update(
    memory: Memory,
) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("Noor's chess club: Tuesday 6pm, Marsh Lane library, bring a board", 240),
            ("Noor: chess club Thursdays 5pm at the scout hut, shorter walk for her", 60),
            ("Noor's gymnastics moved to sat mornings", 20),
        ],
        "When does Noor have her chess club?",
    )
    assert result.memories[0].uuid == new
    assert "Thursdays" in result.answer


@pytest.mark.parametrize(
    "news",
    [
        pytest.param(
            "Ilona Varga is now working a new job at the council offices", id="a person's"
        ),
        pytest.param("The Quarry team is now working on the new job board", id="a team's"),
    ],
)
async def test_what_a_named_person_did_goes_below_the_users_notes(
    memory: Memory, news: str
) -> None:
    (_, _, stranger), result = await _asked_after(
        memory,
        [
            ("started at the Kettle & Crumb cafe, barista, early shifts", 300),
            ("first week as a library assistant at Elm Road branch, quiet and lovely", 60),
            (news, 20),
        ],
        "What's my job now?",
    )
    # The news holds every word asked; asked about the user, it is someone else's.
    assert result.memories[-1].uuid == stranger


async def test_a_change_without_a_time_of_day_is_no_new_time(memory: Memory) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("library reading hour: saturdays 10:30 in the children's room", 300),
            ("reading hour pushed to 11:15 so it doesn't clash with the craft table", 50),
            ("library reading hour extended from 45 to 60 minutes", 9),
        ],
        "What time is the library reading hour?",
    )
    # "What time" asks a clock time: the later change of its length gives none.
    assert result.memories[0].uuid == new
    assert "11:15" in result.answer


async def test_a_change_without_the_shape_of_the_value_asked_is_no_update(
    memory: Memory,
) -> None:
    (_, _, new), result = await _asked_after(
        memory,
        [
            ("Teodor mob 07700 900517", 400),
            ("Teodor changed jobs - now at the port authority, logistics", 200),
            ("text from Teodor: 'old phone's gone, this one's me' 07700 900864", 30),
        ],
        "What's Teodor's mobile number?",
    )
    assert result.memories[0].uuid == new
    assert "07700 900864" in result.answer


async def test_a_later_note_closer_to_the_question_is_no_return_to_the_old_value(
    memory: Memory,
) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            (
                "note to self, alarm code is the one on the fuse box lid, 4719, dont forget the hash",
                200,
            ),
            ("gym alarm: 2255, asks for your member no", 60),
            (
                "wrote the alarm one, 8830, on a card by the fuse box for when the neighbours feed the cat",
                18,
            ),
        ],
        "what's the alarm code these days?",
    )
    # The gym note writes none of the first note's names, and the last note writes words
    # of the first ("fuse box", "one") but no name or number of it, and is closer to the
    # question than the gym note: it is the later version, not a note about the old value.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "8830" in result.answer


async def test_a_change_that_says_no_more_of_a_code_is_no_return_to_it(memory: Memory) -> None:
    (_, _, new), result = await _asked_after(
        memory,
        [
            ("X9 from Mill Rd stop 06:05 -> depot gate 06:40. day ticket £4.20", 280),
            ("X9 diverted via Eastgate for roadworks til end of month per the app", 60),
            (
                "lift w/ Sana Mon/Thu earlies, she picks up 06:15 at the post office corner, "
                "£3 a day for petrol. no more X9 at silly o'clock",
                25,
            ),
        ],
        "How am I getting to the depot for early shifts these days?",
    )
    # "no more X9" turns away from the bus: the lift is the change itself, not a note
    # about the old value after the diversion.
    assert result.memories[0].uuid == new


async def test_who_to_phone_asks_a_person_not_a_number(memory: Memory) -> None:
    (old, new, _), result = await _asked_after(
        memory,
        [
            (
                "rowing club sec is Marta Reyes - ring her if i can't make training. 07700 900555",
                240,
            ),
            (
                "note, if i'm off sick it's Tomas Wilde i ring now, he's club sec since marta moved",
                28,
            ),
            ("marta's farewell at the boathouse was lovely, must send her a card", 110),
        ],
        "Who should I phone at the rowing club if I'm ill and can't make training?",
    )
    # "phone" here is what to do, not a phone number asked for: the later note needs none.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0


def test_a_phone_number_may_end_a_sentence() -> None:
    assert "phone" in value_shapes("old phone went in the canal. 07961 402113. T")
    assert "phone" in value_shapes("ring 07961 402113.")
    assert "phone" not in value_shapes("build 1.2.3456789.0")


async def test_a_note_without_the_shape_asked_goes_below_one_with_it(memory: Memory) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("ilse (site mgr) mob 07700 900231 - text, she never answers", 250),
            ("msg from ilse: 'new sim, this is me now: 07700 900972'", 35),
            ("ilse says the gate alarm rings her phone now so text her if it goes off", 10),
        ],
        "What's Ilse's mobile?",
    )
    assert result.memories[0].uuid == new


def test_a_day_now_lately_and_a_first_time_say_a_change() -> None:
    assert says_change("Maren can only do Thursdays now, 5pm")
    assert says_change("K's usual lately: iced chai, no syrup")
    assert says_change("best thing on the radio at the mo")
    assert says_change("Oona took the minutes for the first time")
    assert not says_change("I've had this bike four days now")
    assert not says_change("weekly shop on Thursdays")


async def test_a_users_new_name_with_a_value_of_the_same_shape_is_a_version(
    memory: Memory,
) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("home insurance w Larkmoor, £312/yr, renews may", 300),
            ("done! Fennick Mutual, £268, policy FM-20417, starts 2 jun. cancel the DD", 40),
            ("Pia's contents cover is only £90 a year apparently", 15),
        ],
        "Who's my home insurance with?",
    )
    assert result.memories[0].uuid == new


def _filler(n: int) -> list[str]:
    """`n` invented work notes, none about the asked subject."""
    people = ["Arlo Venn", "Bea Quist", "Cato Rhee", "Dara Holm", "Eno Pratt", "Fey Lund"]
    verbs = ["reviewed", "fixed", "documented", "benchmarked", "demoed"]
    things = ["load balancer", "mail templates", "quota checker", "test suite", "build cache"]
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
    notes = [
        f"{p} {v} the {t} with the platform team on {d}."
        for p in people
        for v in verbs
        for t in things
        for d in days
    ]
    return notes[:n]


async def test_a_later_version_far_from_the_question_is_found_among_many_memories(
    memory: Memory,
) -> None:
    old = await _add(
        memory, "my tandem partner: Liesel, thurs after work @ Cafe Brasa, de for en", 200
    )
    new = await _add(memory, "first swap w/ Tobiah at the library, he wants football vocab lol", 40)
    await _add(memory, "Liesel submitted her thesis!! drinks sat", 18)
    for i, text in enumerate(_filler(400)):
        await _add(memory, text, 300 - i * 0.7)
    result = await memory.recall(
        "who am I doing language exchange with at the moment?", reference_time=NOW
    )
    ranked = [m.uuid for m in result.memories]
    assert new in ranked
    assert old in ranked
    assert ranked.index(new) < ranked.index(old)


async def test_others_news_does_not_keep_the_users_notes_from_being_compared(
    memory: Memory,
) -> None:
    old = await _add(memory, "fav game atm: Quillpoint, could play it every week", 240)
    new = await _add(memory, "switched to Tidebound for game night, Quillpoint deck sold", 30)
    firsts = ["Arlo", "Bea", "Cato", "Dara", "Eno", "Fey", "Gil", "Hana"]
    lasts = ["Venn", "Quist", "Rhee", "Holm", "Pratt"]
    for i, (f, s) in enumerate((f, s) for f in firsts for s in lasts):
        # Another's news that holds every word asked but "my".
        await _add(memory, f"{f} {s} prefers card games over most other hobbies.", 200 - i)
    for i, text in enumerate(_filler(300)):
        await _add(memory, text, 300 - i * 0.9)
    result = await memory.recall("What's my favourite card game these days?", reference_time=NOW)
    ranked = [m.uuid for m in result.memories]
    # The user's notes are compared and the later one is first.
    assert ranked[0] == new
    assert old in ranked


async def test_what_was_written_beside_anothers_news_does_not_rise_with_it(
    memory: Memory,
) -> None:
    old = await _add(memory, "fav game atm: Quillpoint, could play it every week", 240)
    new = await _add(memory, "switched to Tidebound for game night, Quillpoint deck sold", 30)
    news = {
        await _add(memory, f"{name} prefers card games over most other hobbies.", 150 - i)
        for i, name in enumerate(["Arlo Venn", "Bea Quist", "Cato Rhee", "Dara Holm", "Eno Pratt"])
    }
    # Work notes written every day: some within hours of each piece of news.
    for i, text in enumerate(_filler(250)):
        await _add(memory, text, 300 - i)
    result = await memory.recall("What's my favourite card game these days?", reference_time=NOW)
    ranked = [m.uuid for m in result.memories]
    assert ranked[:2] == [new, old]
    # Asked about the user, another's news lends nothing to the notes beside it in time:
    # none of them ranks among the news.
    assert set(ranked[:7]) == {new, old} | news


async def test_a_time_of_day_in_words_answers_when_a_habit_happens_now(memory: Memory) -> None:
    (_, new, _), result = await _asked_after(
        memory,
        [
            ("practice routine: 30 min scales before breakfast, then coffee", 270),
            ("practising in the van at lunchtime now, depot car park, 20 min. not bad", 46),
            ("Ottla's practice routine: 10 min after school, sticker chart", 15),
        ],
        "When do I get my practice in?",
    )
    assert result.memories[0].uuid == new
    assert "lunchtime" in result.answer


@pytest.mark.parametrize(
    ("question", "earlier"),
    [
        ("What dose was I first put on?", True),
        ("Which crew did Ilan use to sail with?", True),
        ("Who was my coach at the start of the season?", True),
        ("Who was Miso's groomer at the old salon?", True),
        ("What did we pay back when we first signed up?", True),
        ("When is my first lesson?", False),
        ("Who is my old friend from school?", False),
    ],
)
def test_a_first_value_an_old_thing_and_a_start_ask_about_earlier(
    question: str, earlier: bool
) -> None:
    assert asks_about_earlier(question) is earlier


async def test_a_past_question_about_the_first_value_ranks_the_earlier_note_first(
    memory: Memory,
) -> None:
    (old, _, _), result = await _asked_after(
        memory,
        [
            ("gp put me on ramipril 2.5mg, review in 6 wks", 300),
            ("ramipril dose now 5mg after the review, bp finally down", 120),
            ("mum's on amlodipine, same gp", 30),
        ],
        "What ramipril dose was I first put on?",
    )
    assert result.memories[0].uuid == old


async def test_someone_elses_like_thing_jotted_in_lower_case_is_no_version(
    memory: Memory,
) -> None:
    (old, other, new), result = await _asked_after(
        memory,
        [
            ("rafi piano lessons weds 4:45 w/ mrs lund, bring the grade 2 book", 300),
            ("noor: zain's piano got moved to fri 4:45, can we swap lifts?", 80),
            (
                "msg from the music school re Rafi: passed grade 2! grade 3 class is "
                "mondays 5:30pm, room 4",
                35,
            ),
        ],
        "what time is rafi's piano lesson now?",
    )
    # "zain's piano" is another child's, though it says a change and the new note says
    # none: the music school's message is the later version of Rafi's lessons.
    ranked = [m.uuid for m in result.memories]
    assert ranked[0] == new
    assert ranked.index(old) < ranked.index(other)
    assert "5:30" in result.answer


def test_someone_elses_like_thing_needs_the_asked_words_after_the_name() -> None:
    def entry(uuid: str, text: str) -> CatalogueEntry:
        return CatalogueEntry(
            uuid=uuid,
            content=text,
            source_id=None,
            created_at=NOW_MS,
            recorded_at=NOW_MS,
            category="episodic",
            tags=(),
            concepts=(),
            author=None,
        )

    notes = [
        entry("a", "noor: zain's piano got moved to fri"),
        entry("b", "zain's mum says the car-pool is full"),
        entry("c", "rafi and zain's piano concert is on the 9th"),
        entry("d", "Tanabe-Lund's piano tuner comes in may"),
    ]
    # Another's piano (a, d), not another's mum (b), nor a note that names Rafi too (c);
    # a hyphenated name is one name (d is the asked owner's in the second question).
    assert anothers_like_thing(notes, "when is rafi's piano lesson?") == {"a", "d"}
    assert anothers_like_thing(notes, "Who tunes Tanabe-Lund's piano?") == {"a", "c"}
    assert anothers_like_thing(notes, "what's the car-pool rota?") == set()
    # "new" says which of a kind, not the kind: another's new bike is no school.
    bike = [*notes, entry("e", "elif's new bike is too big for her")]
    assert anothers_like_thing(bike, "what's rafi's new school called?") == set()


async def test_a_silent_note_that_gives_the_value_anew_beats_one_closer_in_meaning(
    memory: Memory,
) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            ("pip insurance DD £9.80 a month, comes out on the 5th", 330),
            ("rabbit insurance staying the same this yr, phew", 70),
            ("renewal doc for pip came. £12.40 monthly, 'age loading' bc she's 11. grr", 25),
        ],
        "How much am I paying a month to insure the dog?",
    )
    # Neither later note says a change; the renewal gives a new price where the first note
    # gave one, the rabbit's note none, however much closer it is to the question.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "£12.40" in result.answer


async def test_a_silent_note_without_a_value_replaced_none(memory: Memory) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            ("lunch break 12:30-1, sit in the yard if sunny", 260),
            ("canteen kettle broken again, bring cold lunch", 80),
            ("my break slot on the night rota is 1:30, eat b4 or starve", 24),
        ],
        "When's my break at work?",
    )
    # The kettle note gives no time: it replaced none, so the rota note, which writes a
    # number of the first ("1:30" beside "12:30-1"), is its later version, not a note
    # about the old value.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "1:30" in result.answer


async def test_another_price_of_the_named_subject_may_be_told_far_from_the_question(
    memory: Memory,
) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            ("Larchfield £19/night per cat, inc meds", 340),
            ("pinewood £27/night but they send photos", 70),
            ("larchfield quote for easter: £23 a night each, 6 nights x 2 = £276", 80),
        ],
        "What does Larchfield charge per cat per night?",
    )
    # The quote says no change and is far from the question in meaning, but it gives
    # another price of the named cattery: a later version.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "£23" in result.answer


async def test_another_amount_of_a_unit_is_a_new_value(memory: Memory) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            ("pepper (cat) heart tabs 1.25mg twice a day w food", 180),
            ("pharmacy at the vets shuts 4pm sundays", 90),
            ("scan back, vet upping pepper to 2.5mg am + 1.25mg pm. recheck in a month", 20),
        ],
        "What's Pepper's morning heart dose?",
    )
    # "2.5mg" is another amount in the unit the first note wrote: a later version, though
    # the note holds none of the asked words but the name.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "2.5mg" in result.answer


async def test_another_day_of_the_week_answers_when(memory: Memory) -> None:
    (old, _, new), result = await _asked_after(
        memory,
        [
            ("stand-up mon 9:15 by the whiteboard", 250),
            ("stand-up at the offsite was 40 mins of coffee chat", 100),
            ("missed the stand-up this thurs before the release, priya sent me the notes", 29),
        ],
        "When is the stand-up?",
    )
    # "When" asks a day or a time: "thurs" is another day where the first note gave
    # "mon"; the offsite note gives neither.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0


def test_amounts_and_days_of_the_week_as_jotted() -> None:
    assert measures("every 6 wks, 15kg") == {("wk", "6"), ("kg", "15")}
    assert measures("going 8 weeks between, 2.5mg am, 5%") == {
        ("wk", "8"),
        ("mg", "2.5"),
        ("%", "5"),
    }
    assert weekdays("tills tue + thu 9-2, Saturdays off") == {"tue", "thu", "sat"}
    assert weekdays("most days, a monitor") == set()


async def test_a_quick_note_may_leave_the_named_subject_out(memory: Memory) -> None:
    (old, _, _, new), result = await _asked_after(
        memory,
        [
            ("book Pip in for a trim every 5 weeks, fur knots fast", 250),
            ("luna brushed today, hair everywhere", 100),
            ("Luna's trim was £30, ouch", 60),
            (
                "groomer reckons the coat's fine going 7 weeks between trims, booked next for 3 aug",
                15,
            ),
        ],
        "How often is Pip getting a trim?",
    )
    # The groomer's note names no one, holds "trim" and gives another number of weeks:
    # Pip's later version, though it does not write "Pip". Luna's note names another.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "7 weeks" in result.answer


async def _remembered_after(
    memory: Memory, notes: list[tuple[str, float]], question: str
) -> tuple[list[str], RecallResult]:
    """As `_asked_after`, each note told through `remember` (its entities, facts and
    events extracted as a user's `remember` call does): the notes' memory uuids in the
    order given, and the result."""
    uuids: list[str] = []
    for text, days in notes:
        said = await memory.remember(text, reference_time=NOW - timedelta(days=days))
        uuids.append(said.memory_uuid)
    return uuids, await memory.recall(question, reference_time=NOW)


async def test_a_silent_note_that_gives_the_value_anew_comes_before_one_that_holds_the_words(
    memory: Memory,
) -> None:
    (old, new, _), result = await _remembered_after(
        memory,
        [
            ("water bill brookvale utilities £29/mo - on Tariq's card, we pay him back", 350),
            ("house acct statement: DD Brookvale Utilities £31, Voltra £140, Fibrenet £24", 140),
            ("Lena's asking if anyone wants a water filter jug", 90),
        ],
        "what does the water bill come out of now?",
    )
    # Lena's note holds the asked "water" and gives nothing; the statement holds no asked
    # word but gives another price of the bill: it is the later version.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "house acct" in result.answer


async def test_an_amount_without_its_currency_sign_is_another_price(memory: Memory) -> None:
    (old, _, new), result = await _remembered_after(
        memory,
        [
            ("cake slice £3.00, brownie £2.50", 310),
            ("Honeycomb raised wholesale on carrot cake 50p", 62),
            ("chalkboard today: CAKE OF THE DAY – 3.50, BROWNIE 2.80, SCONE + JAM 2.60", 12),
        ],
        "how much is a slice of cake now?",
    )
    # The board writes its prices without "£": still other prices of the first note's,
    # so the wholesale note (which gives none) did not replace the first before it.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "3.50" in result.answer
    assert amounts("CAKE OF THE DAY – 3.50, BROWNIE 2.80") == {"3.50", "2.80"}
    assert amounts("£1,850 pcm from 14.05.2026, v2.10") == frozenset()


async def test_a_note_copied_out_again_with_a_new_value_beats_a_change_said_of_another(
    memory: Memory,
) -> None:
    (old, _, other), result = await _remembered_after(
        memory,
        [
            ("hours: mon-fri 7:30-15:30 / sat 8-14 / sun closed", 400),
            (
                "proof from printers for window decal: MON–FRI 8:00–16:00 · SAT 8–14 · SUN closed",
                70,
            ),
            ("Dough & Co across the road opening 7:00 now, losing the early builders to them?", 25),
        ],
        "what time do doors open on a weekday?",
    )
    # The proof writes the first note out again with other times; the bakery's note says a
    # change but writes none of the first note's words: the proof is the later version of
    # the hours, and the first note is no answer.
    assert result.memories[0].uuid != old
    assert "8:00–16:00" in result.answer
    assert "7:30-15:30" not in result.answer
    assert other in [m.uuid for m in result.memories]


async def test_a_note_about_another_attribute_replaced_none_before_a_said_change(
    memory: Memory,
) -> None:
    (old, _, new), result = await _remembered_after(
        memory,
        [
            ("rent £1,400 pcm to Mr Castellano, SO on the 1st", 500),
            ("business rates bill £1,980 for the yr?? relief not applied, ring council", 130),
            ("Castellano letter re rent review: from 1 July rent will be £1,575 pcm", 20),
        ],
        "how much am I paying in rent each month?",
    )
    # The rates bill holds no word of the rent: it replaced nothing, so the letter that
    # names the landlord again is the rent's later version, not a note about the old one.
    assert result.memories[0].uuid == new
    assert [m.uuid for m in result.memories].index(old) > 0
    assert "£1,575" in result.answer


async def test_a_question_about_the_first_value_is_answered_with_it_the_change_after(
    memory: Memory,
) -> None:
    (old, _), result = await _remembered_after(
        memory,
        [
            ("paying 4% into pension, employer 3%", 300),
            ("bumped my pension contrib to 8% from the April payslip, barely noticed", 100),
        ],
        "How much was I first putting into my pension?",
    )
    # "first" asks what held before the change, as "before" does: the old value leads and
    # the change comes after it as what came later.
    assert result.memories[0].uuid == old
    assert result.answer.index("4%") < result.answer.index("8%")
    assert "Since" in result.answer


def test_a_note_copied_out_again_writes_the_earlier_notes_names() -> None:
    notes = [
        _Note(
            "gunnar", "Reminder from Gunnar Thistlewood: the triage check runs every Tuesday", 100
        ),
        _Note(
            "quilla", "Reminder from Quilla Thistlewood: the triage check runs every Thursday", 200
        ),
        _Note(
            "agent", "Harwood Lettings: the inspection has been rescheduled to Thursday 2pm", 300
        ),
    ]
    meaning = {"gunnar": 0.29, "quilla": 0.28, "agent": 0.34}
    moved = _supersede(
        notes,
        [(notes[2], 1.0), (notes[0], 0.9), (notes[1], 0.8)],
        "When is the inspection?",
        meaning=meaning,
        asked_shapes=frozenset({"weekday"}),
        kept={"gunnar", "quilla", "agent"},
    )
    # Quilla's reminder writes Gunnar's words again with another day, but not his name: it
    # is someone else's reminder, no copy of his; the agent's note, which says a change,
    # stays his later version among these three.
    assert moved.superseded_by.get("gunnar") == "agent"
