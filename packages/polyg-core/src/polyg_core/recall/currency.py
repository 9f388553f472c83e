"""What is current: a later memory that changes an earlier one about the same thing ranks
first for a question about the present; a question about the past keeps what held then.

A pair of ranked memories is an update when

* the later one says that something changed: change language ("moved to", "replaced",
  "switched", "took over", "changed to", "now", "no longer", "raised to", "instead" ...);
* both are about what the question asks: the asked words they share carry most of the
  weight (BM25 idf) of the asked words the earlier one holds, and at least one shared word
  is specific (not a name found in most memories);
* or, without change words, the later one names the same specific subject as the earlier
  one (a name the question asks about) and answers the question by meaning about as well:
  its cosine similarity to the question at most `MEANING_MARGIN` below the earlier one's
  ("Kemal is gluten-free" after "Kemal has no dietary restrictions"), unscaled, so that
  three memories compare as three thousand do (`SAME_WORDS_MARGIN` when both give a value
  of one shape: an email address, a URL, a phone number, a price, a clock time, see
  `value_shapes`). Of several such notes, one that holds an asked word the earlier one
  holds besides the names (the attribute asked about: "backend" in "What does the Ledger
  backend use?") is preferred to one that does not (the frontend note), and then the
  closest in meaning;
* or, without change words or names, the later one holds every asked word the earlier
  one holds (of the user's notes, two or more and half their weight), and those carry
  most of the question's weight ("Friday takeout: Nonna Rosa's" after "Friday takeout:
  Golden Lotus"), within `SAME_WORDS_MARGIN` by meaning;
* for a question about the user, or about no one, the notes the user keeps are one subject
  (`subjects.Subjects.kept`): two of them are versions of each other when they share a
  word (a verb done again is the same: "booked", "rebooked"), or when the earlier one is
  about as close to the question as the closest memory (or the question names the later
  value: "before Tobias?"); one that shares a word with the first of a line answers
  within `SAME_WORDS_MARGIN` ("Trains: window please" after "Always book me an aisle
  seat on trains"); a later note that is the earlier one with only an asked word
  put another way is no version of it ("before the yearly audit" for a question about the
  quarterly one);
* or the temporal graph says so: a fact about the question's subject was ended by a newer
  one, the earlier memory holds the ended fact's value and the later one the new value,
  and both name what the question asks about (a note that only names the old value, "Bram
  chairs the budget meeting", is no earlier version of "Ilse reports to Bram").

A later version holds every asked name the earlier one holds ("Fernleaf's Q4 budget" is
no version of "Fernleaf's Q3 budget"). Of several later notes that say a change to one
earlier note, those more than `VERSION_MARGIN` farther from the question than the closest
changed another attribute of the subject, and are no later versions of the closest either
("swapped his walking frame for a stick" after "Dr Lindqvist is his GP going forward"
changed "his GP is Dr Okafor"). A note that says no change continues a line of
versions only if it answers about as well as the closest of the line, not only as well as
the version before it (a rota's pay note after the rota's length changed), and only if it
holds the asked words the last two versions share ("Search queue escalation: Pia" after two
notes on the billing queue's). A note about someone close to whom is asked ("Tomasz's
sister Ola got promoted") is no later version of a note about them, and neither is a note
that holds what a line of versions dropped, two of its words, a number or a name ("rent
went up to £910 for Tom too" after "rent £965 from next month" changed "rent £910 pcm"):
it is about the old value. Of two later notes that may both update one note, the later
one that holds what the earlier one dropped of it is likewise about the old value, when
the earlier one says a change or names none of the note's names ("Ironbark induction
done, £34 a month" then "Tamsin joined Corewell too, £29/mo" after "gym: Corewell,
£29/mo"), unless it says it turned away from a name the note wrote ("no longer uses
Emacs"). For a question about now, a note about an old value goes just below the latest
version of its line and answers nothing (`Supersession.old_values`).

A note that says a change holds until a later one says another: a later note that says
none is no version of it ("parks in the garage when it rains" after "sold the car and
cycles now"). Not so for the first note of a line, whose change is how the old value
began ("joined Harbour Harriers", "salary -> Harbourline Bank"), when the later note is
tied to it by a name or a word, not by meaning alone; nor for a change said only for a
period ("conducting again this term"). A silent note that speaks of what someone had
before ("sent a pic from his old balcony") is no later version either.

For a present-tense question the update takes the earlier memory's place (or keeps its
own, if higher) and the earlier one goes just below it. A question that asks about a past
window ("in 2024", "last year") or about history ("before", "used to", "originally",
"previously", "old", "first") is left alone: what held then is what it wants. "before"
and a thing in a present-tense question is a deadline ("What does the lamp need before
the gales?"), not history.
Ties between memories are broken by recency for present-tense questions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from polyg_shared.intents import Intent
from polyg_shared.timeutil import to_epoch_ms

from polyg_core.recall.multihop import asks_to_gather
from polyg_core.recall.subjects import FIRST_PERSON, HE_OR_SHE
from polyg_core.text.timeparse import CLOCK_TIME

__all__ = [
    "ASKS_WEEKDAY",
    "CHANGE_LANGUAGE",
    "CHANGE_NOUNS",
    "PAST_VERB",
    "PHONE",
    "WEEKDAY",
    "WEEKDAY_STEM",
    "Candidate",
    "EndedValue",
    "Supersession",
    "accumulates",
    "amounts",
    "asks_about_earlier",
    "asks_about_now",
    "measures",
    "says_change",
    "shapes_asked",
    "supersede",
    "unsettled",
    "value_shapes",
    "weekdays",
    "without_deadline",
]

CONSIDERED = 10
"""How many of the best ranked memories are compared pairwise: an update and what it
changes both answer the question, so both rank high."""
SHARED_WEIGHT = 0.3
"""The share of the earlier memory's asked-word weight the later one must also hold."""
ASKED_WEIGHT = 0.5
"""The share of the question's word weight (of words any considered memory holds) the
earlier memory must hold: what is changed is what was asked about, not a bystander."""
RELEVANT_SHARE = 0.4
"""An update scores at least this share of what it changes (fused, before the swap)."""
HELD_SHARE = 0.6
"""The share of the earlier memory's asked-word weight an update holding it speaks to."""
MEANING_MARGIN = 0.15
"""A later memory about the same named subject that says no change supersedes an earlier
one when its cosine similarity to the question is at most this much below the earlier
one's: it answers the same question with another value."""
SAME_WORDS_MARGIN = 0.25
"""The same for a later memory that holds the asked words the earlier one holds, two or
more (of the user's notes, `SAME_WORDS_SHARE` of their weight): its other words, a new
value told at length, pull its vector away from the question's."""
SAME_WORDS_SHARE = 0.5
"""For the user's own notes, the share of the weight of the asked words an earlier note
holds that a later one must hold too for `SAME_WORDS_MARGIN` ("holiday photos" of "holiday
photos backed up"); other memories must hold them all."""
SWAP_MARGIN = 0.35
"""The same for a later memory that names the question's specific subject and writes a new
name where the earlier one's value was (`_Pairs._swaps_value`): the value changed, said in
words far from the question ("housewarming @ Noor's!! Dundee" after "Noor's flat in
Hull")."""
VERSION_MARGIN = 0.1
"""Of several later memories that say a change to one earlier memory, those whose cosine
similarity to the question is more than this below the closest one's changed another
attribute of the subject ("Henrike took over the rota" beside "the rota bonus went up")."""
HELD_TIE = 0.1
"""Of later notes that may silently replace one, how much holding all the earlier note's
asked words adds to closeness in meaning (`_Pairs._best_silent`): a tie-break."""

BELOW = 1e-4
"""How far below its update a superseded memory is placed."""

# Nouns naming a change: "after the reorg", "since the upgrade".
CHANGE_NOUNS = (
    r"change|upgrade|update|migration|move|reorg|reorgani[sz]ation|merger|rename|switch|"
    r"handover|promotion"
)

# A participle after an article or a possessive describes someone ("seeing a retired
# dentist", "his married sister"): it says no change.
_NOT_DESCRIBING = "".join(
    rf"(?<!\b{w}\s)" for w in ("a", "an", "the", "my", "his", "her", "our", "their", "your")
)

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

CHANGE_LANGUAGE = re.compile(
    r"\b(?:"
    r"moved|relocated|replaced|replaces|switched|swapped|took\s+over|taken\s+over|"
    r"takes\s+over|handed\s+(?:over|off)|changed|changes?\s+(?:to|from|over)|"
    # "after the reorg", "since last weekend's upgrade", "following the migration"
    r"(?:after|since|following|with)\s+(?:the\s+|a\s+|an\s+)?(?:[\w'’-]+\s+){0,2}?"
    rf"(?:{CHANGE_NOUNS})s?|"
    # "now", unless it closes a span of time ("seven years now": nothing changed; "most
    # days now" is a new routine; "Sundays now" is a new day) nor "now and then" (sometimes)
    r"(?<!years\s)(?<!year\s)(?<!months\s)(?<!weeks\s)(?<!(?<!most\s)\bdays\s)(?<!while\s)now"
    r"(?!\s+and\s+(?:then|again)\b)|no\s+longer|"
    r"not\s+anymore|any\s?more|cancell?ed|went\s+(?:up|down)|goes\s+up|"
    r"(?:raised|lowered|increased|decreased|reduced|bumped|upgraded|downgraded|pushed|"
    r"shifted|ported)\s+(?:\S+\s+){0,6}?to|rebooked|cut\s?over|"
    r"(?:has|have|got|is|are)\s+(?:a|an|the)\s+new|dropped|"
    r"upgraded|downgraded|migrated|transferred|reassigned|promoted|renamed|relicensed|"
    # "the new landlord is", "New goal: ...", "at its new spot": a new value
    r"new|cut\s+to|starting|effective|"
    # "from today", "from this sprint on", "this season"
    r"from\s+(?:today|tomorrow|tonight|now|this\s+\w+|next\s+\w+|here(?:\s+on)?)|"
    r"this\s+(?:season|term|semester)|"
    # a value that holds from a day: "£52/mo from 1 Apr", "with effect from March 3rd" (a
    # month alone may come back each year: "cetirizine from april")
    rf"from\s+(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?)|"
    # a relationship's status: each later one replaces the one before (not as a word
    # that describes someone: "a married couple", "her retired neighbour")
    rf"{_NOT_DESCRIBING}(?:engaged|married|divorced|separated)|broke\s+up|"
    r"rebranded|became|instead|from\s+now\s+on|going\s+forward|these\s+days|nowadays|"
    # what holds of late ("Y's order lately: oat cortado", "best thing at the mo") and a
    # first time ("in the chair for the first time")
    r"lately|at\s+the\s+mo(?:ment)?|for\s+the\s+first\s+time|"
    rf"stopped|quit|joined|gave\s+up|{_NOT_DESCRIBING}retired|transitioned|"
    # "staying with uncle Dapo for good", "no more queueing" (not "no more than 3"),
    # "since I took the membership sec job"
    r"for\s+good|no\s+more(?!\s+than)|"
    r"took\s+(?:on\s+)?(?:the|a|an)\s+(?:(?!of\b)[\w'’-]+\s+){0,2}(?:job|role|position|post)|"
    # a correction of what was said, and a date or time moved
    r"correction|corrected|to\s+correct|"
    r"extended|postponed|rescheduled|delayed|brought\s+forward|pushed\s+(?:back|out)|"
    r"(?:slipped|slid)\s+(?:again|to|by|back|another)|slipped(?=\s*(?:[-–—,.;:!]|$))|"
    r"moved\s+(?:up|back)|as\s+of|under\s+the\s+new|"
    # a state begun at a time ("dairy-free since feb", "takes the ferry since the hip op")
    r"since\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\w*|"
    r"since\s+(?:spring|summer|autumn|fall|winter|last\s+\w+|the\s+[\w'’-]+\s+\w+)|"
    # the start of a new job, school or provider ("first week at Orla Pay done", "first
    # shift coordinating the volunteers")
    r"first\s+(?:\w+\s+)?(?:day|days|week|wk|weeks|wks|month|shift|payslip|pay|session|"
    r"lesson|class|term|cycle)\s+(?:at|w|with|in|on|for|of|\w+ing)|"
    r"day\s+(?:1|one)\s+(?:at|on|with|w|in)|"
    # a choice made: "we're going with Jakub", "went with Quayside Cover this time"
    r"(?:we['’]?re|we\s+are|i['’]?m|i\s+am)\s+going\s+with|"
    # "first match for Millfield Rovers", "first one as chair" (not "first coffee with Ana")
    r"first\s+(?:[\w'’-]+\s+)?[\w'’-]+\s+(?:for|as)\b"
    r")\b"
    # a terse log's arrow: "payroll provider -> Hexa"
    r"|\s(?:->|→)\s",
    re.IGNORECASE,
)
"""Words that say a value changed, a correction of it ("Correction: ...") or a date moved
("extended to", "postponed"). `now` and `new` alone count: a note written later that says
"the team is now X" or "the new landlord is Y" changes what an earlier note said; "for
years now" and the noun "a change" do not (`says_change` also reads a note that opens
with "Actually," and leaves out a change denied)."""

# "How long before a session times out?" asks a duration, not what held before.
_BEFORE = r"(?<!how\slong\s)(?<!how\ssoon\s)before"

_HISTORY = re.compile(
    rf"\b(?:{_BEFORE}|previous(?:ly)?|formerly|former|originally|original|used\s+to|"
    r"at\s+first|initially|earlier|old|older|prior|history|historically|until|"
    r"back\s+then|back\s+in|at\s+the\s+time|in\s+the\s+past|first|once)\b",
    re.IGNORECASE,
)


_EARLIER_VALUE = re.compile(
    rf"\b(?:{_BEFORE}|previous(?:ly)?|formerly|former|originally|original|used?\s+to|"
    r"at\s+first|initially|prior|back\s+(?:then|when)|in\s+the\s+past|at\s+the\s+start)\b",
    re.IGNORECASE,
)
# In a question in the past tense, the first value ("What dose was I first put on?", "when
# I first signed up") or what something was before it changed ("Who was Pip's vet at the
# old practice?"; "Who is my old friend from school?" is no change).
_FIRST = re.compile(r"\bfirst\b|\b(?:the|my|our|his|her|their)\s+old\b", re.IGNORECASE)


# "When did Ana start pottery?", "What was the plan?": the question is in the past tense.
PAST_VERB = re.compile(r"\b(?:did|was|were|had|didn't|wasn't|weren't)\b", re.IGNORECASE)
_PRESENT_VERB = re.compile(r"\b(?:do|does|is|are|am)\b", re.IGNORECASE)
# "Which engineer fixed the latency?", "Who owned it?": asked in the simple past.
_SIMPLE_PAST = re.compile(r"^\s*(?:who|which|what)\s+(?:\w+\s+)?\w{2,}ed\b", re.IGNORECASE)
_PAST_WINDOW = re.compile(
    r"\b(?:last|ago|yesterday|previous|past|earlier|\d{4}|\d{1,2}[/.-]\d{1,2})\b", re.IGNORECASE
)

# "What does the lamp need before the gales?", "What do I pack before the trip?": in the
# present tense, "before" and a thing that is no change is a deadline, not the value held
# before a change ("before the reorg", "before Marisol" and "Where did I live before?" are).
_DEADLINE = re.compile(
    r"\bbefore\s+(?:the|a|an|my|our|your|his|her|their|its|this|next)\s+"
    rf"(?!(?:[\w'’-]+\s+)?(?:{CHANGE_NOUNS}|cutover|rebrand|relaunch|transfer|"
    r"acquisition|split|restructur\w*|current|new|latest)\b)[\w'’-]+",
    re.IGNORECASE,
)


def without_deadline(question: str) -> str:
    """The question without a "before" that names a deadline, not a change (see
    `_DEADLINE`): what is left says whether it asks about the past."""
    if PAST_VERB.search(question) is not None or _SIMPLE_PAST.search(question) is not None:
        return question
    return _DEADLINE.sub(" ", question)


# Rules read per memory text are kept per text (a memory's text never changes); bounded.
_PER_TEXT = 1 << 14


# "wants to move to Lisbon someday", "thinking of switching banks", "might take over
# billing, not yet": a wish, a plan under thought or a rumour, not a value that holds; "asked
# if I'd do the galley with her", "offered to drive": a request or an offer.
_UNSETTLED = re.compile(
    r"\b(?:wants\s+to|wants?\s+(?:their|his|her|its)\s+own|wanna|thinking\s+(?:of|about)|might|maybe|some\s?day|considering|"
    r"hoping\s+to|not\s+yet|would\s+like\s+to|keen\s+to|tempted|rumou?r\w*|"
    r"(?<!\bi\s)(?<!\bwe\s)asked\s+(?:me\s+|us\s+)?(?:if|whether|about)|offered\s+to|"
    r"prob(?:ably)?\s+(?:won['’]?t|not)|"
    # an application not yet answered: "applied to be head mod", "applying for the post"
    r"appl(?:ied|ying)\s+(?:to\s+(?:be|become|join)|for))\b",
    re.IGNORECASE,
)


# Where the clause that tells a wish, a plan or a rumour ends.
_CLAUSE_END = re.compile(r"[,;.!?\n]|\s[-–—]\s")


@functools.lru_cache(maxsize=_PER_TEXT)
def unsettled(text: str) -> bool:
    """Whether `text` tells only a wish, a plan under thought or a rumour (`_UNSETTLED`)
    and says no change outside that clause: it is no later version of a value. A change
    word inside the clause is part of what is wished or asked ("Leila asked if we'd send
    crowns for the new garden", "might go in w/ a new firm")."""
    m = _UNSETTLED.search(text)
    if m is None:
        return False
    end = _CLAUSE_END.search(text, m.end())
    rest = text[: m.start()] + " " + (text[end.start() :] if end is not None else "")
    return not says_change(rest)


# "hasn't changed", "did not move", "nothing moved there": a change denied.
_DENIED = re.compile(
    r"\b(?:not|never|nothing|n[o'’]t|hasn[o'’]?t|haven[o'’]?t|didn[o'’]?t|isn[o'’]?t|"
    r"won[o'’]?t)\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)
# A note that opens with a correction ("Actually, call me Sasha") changes what was said; in
# the middle of a turn "actually" seldom does.
_OPENS_WITH_CORRECTION = re.compile(r"^\s*actually\b", re.IGNORECASE)


@functools.lru_cache(maxsize=_PER_TEXT)
def says_change(text: str) -> bool:
    """Whether `text` says that something changed (see `CHANGE_LANGUAGE`), and does not
    deny it ("the guest password hasn't changed")."""
    if _OPENS_WITH_CORRECTION.search(text) is not None:
        return True
    return any(
        m.group(0).lower().startswith(("any", "no", "not"))  # "not ... anymore" says one
        or _DENIED.search(text[max(0, m.start() - 24) : m.start()]) is None
        for m in CHANGE_LANGUAGE.finditer(text)
    )


def asks_about_now(question: str, intent: Intent, now_ms: int) -> bool:
    """Whether the question wants what holds now: in the present tense, with no past window
    and no history words.

    A timeframe that ends before `now_ms` ("in 2024", "last spring") asks about then; one
    reaching up to now ("this week") does not. History words ("before", "used to",
    "originally") ask about what held earlier, and so does a question in the simple past
    ("Which engineer fixed the latency?").
    """
    if (
        _HISTORY.search(without_deadline(question)) is not None
        or PAST_VERB.search(question) is not None
        or _SIMPLE_PAST.search(question) is not None
    ):
        return False
    tf = intent.timeframe
    if tf is None or tf.end is None or to_epoch_ms(tf.end) >= now_ms:
        return True
    # "What does Mia order at the Friday drinks?": a bare day named with a present-tense
    # verb is a habit, not a past window; "in 2024", "last Friday", "did" are the past.
    phrase = tf.phrase or ""
    return _PRESENT_VERB.search(question) is not None and _PAST_WINDOW.search(phrase) is None


_FREQUENCY = re.compile(r"\bhow\s+often\b", re.IGNORECASE)
# "What hours is Mairead working?", "Which days is Lukas in?", "What kind of shifts is
# Bronagh on?": a schedule asked with a verb in the singular, or one kind someone is, is
# one value ("What kind of art does Ana make?" gathers).
_ONE_SCHEDULE = re.compile(
    r"^\W*(?:what|which)\s+(?:(?:hours|days|nights|evenings|mornings|times|shifts)\s+"
    r"(?:is|does|am|was)|kind\s+of\s+[\w-]+\s+(?:is|am|was))\b",
    re.IGNORECASE,
)


_NOW_WORDS = re.compile(
    r"\b(?:now|these\s+days|nowadays|currently|at\s+the\s+moment|anymore|any\s+more)\b",
    re.IGNORECASE,
)


def accumulates(question: str) -> bool:
    """Whether the question gathers values that add up ("What events has Noa joined?",
    "What do Ari and Bo both like?"): a later memory adds to the earlier ones instead of
    replacing them. How often something happens is one value that can change, and so is
    what someone does now ("What does Noa do on the team now?")."""
    return (
        asks_to_gather(question)
        and _FREQUENCY.search(question) is None
        and _NOW_WORDS.search(question) is None
        and _ONE_SCHEDULE.search(question) is None
    )


def asks_about_earlier(question: str) -> bool:
    """Whether the question asks for what held before a change ("Which team owned the
    service before?", "What did Noa use originally?"): the memory an update replaced
    answers it, not the update. A deadline is not one ("What does the lamp need before
    the gales?")."""
    text = without_deadline(question)
    return _EARLIER_VALUE.search(text) is not None or (
        _FIRST.search(text) is not None and PAST_VERB.search(text) is not None
    )


@dataclass(frozen=True)
class EndedValue:
    """A fact's value that a newer fact replaced: the old and the new object's text."""

    old: str
    new: str


class Candidate(Protocol):
    """One ranked memory as supersession compares it (a `CatalogueEntry` is one)."""

    @property
    def uuid(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def created_at(self) -> int: ...


@dataclass
class Supersession:
    """The outcome: new scores and which memory each superseded one was replaced by."""

    scores: dict[str, float]
    superseded_by: dict[str, str]
    old_values: set[str] = field(default_factory=set[str])
    """For a question about now, the notes about an old value a later version replaced
    (placed below that version): they answer nothing about now."""


Tokens = Callable[[str], Sequence[str]]
Weight = Callable[[str], float]


def _contains(text: str, value: str) -> bool:
    value = value.strip()
    return bool(value) and re.search(rf"(?i)\b{re.escape(value)}\b", text) is not None


def _fact_says_update(older: Candidate, newer: Candidate, ended: Iterable[EndedValue]) -> bool:
    for e in ended:
        if (
            _contains(older.content, e.old)
            and _contains(newer.content, e.new)
            and not _contains(older.content, e.new)
        ):
            return True
    return False


def _same_subject(
    older: set[str], newer: set[str], asked: float, weight: Weight, common: set[str]
) -> bool:
    """Whether two memories are about the same asked thing: the earlier holds a good part
    of the question, and the later holds most of what the earlier holds of it."""
    if not older:
        return False
    shared = older & newer
    if not shared - common:
        return False
    held = sum(weight(t) for t in older)
    return (
        held > 0
        and held >= ASKED_WEIGHT * asked
        and sum(weight(t) for t in shared) >= SHARED_WEIGHT * held
    )


_MIN_INSIDE = 5
"""The shortest asked word found inside a longer one that counts ("licens" in "relicens")."""
_VALUE_TOKEN = re.compile(r"^(?=.*\d)|^\w{4,}$")


def _asked_in(asked: set[str], words: set[str]) -> set[str]:
    """The asked words a memory holds, as words or inside a longer word ("licens" in
    "relicens")."""
    held = asked & words
    held |= {t for t in asked - held if len(t) >= _MIN_INSIDE and any(t in w for w in words)}
    return held


PHONE = re.compile(r"(?<![\d.])\+?\d[\d ()-]{7,}\d(?!\d|\.\d)")
"""A phone number as jotted (a full stop may end the sentence after it: "... in the burn.
07961 275804.")."""
_SHAPES = {
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"),
    "url": re.compile(r"\bhttps?://\S+|\b[\w-]+\.(?:com|io|org|net|dev|app|co)(?:\.\w+)?/\S*"),
    "phone": PHONE,
    "price": re.compile(
        r"[£$€]\s?\d|\b\d+(?:[.,]\d+)?\s?(?:/|per\s+)(?:hr|hour|mo|month|yr|year|wk|week)\b"
    ),
    "clock": re.compile(
        # ... or the hours of a shift jotted as a range ("9-5 mon-fri", "on 6-2 now"), not
        # a span of dates ("3-10 June") nor a score or a part of a code
        CLOCK_TIME + rf"|(?<![\w/.-])(?:[01]?\d|2[0-3])\s?[-–]\s?(?:[01]?\d|2[0-3])(?![\w/.-])"
        rf"(?!\s*{_MONTH})",
        re.IGNORECASE,
    ),
    # a time of day said in words: "in the morning w/ breakfast", "at night"
    "part of day": re.compile(
        r"\b(?:in\s+the|at|every|each|before|after|with|w/)\s+(?:the\s+)?"
        r"(?:mornings?|afternoons?|evenings?|nights?|bedtime|breakfast|lunch(?:time)?|dinner"
        r"|teatime)\b",
        re.IGNORECASE,
    ),
}


# What a question calls a value of a shape: "What's Ravi's mobile number?" asks a phone number.
_ASKED_SHAPES = {
    "phone": "number phone mobile mob cell landline",
    "email": "email e-mail",
    "url": "url link website",
    # "What time is the school bus?": a later note without a time of day ("bus pass
    # renewed") gives no new one.
    "clock": "time",
}


def shapes_asked(asked: set[str], tokens: Tokens, question: str = "") -> frozenset[str]:
    """The shapes of value a question of terms `asked` asks for by name ("mobile" asks a
    phone number); none for a question that asks who (`question`: "Who should I phone if
    I'm ill?" asks a person)."""
    if _ASKS_WHO.match(question):
        return frozenset()
    shapes = {shape for shape, words in _ASKED_SHAPES.items() if set(tokens(words)) & asked}
    if _ASKS_DAY.search(question):
        # "When is the team huddle?", "Which day ...": a day of the week answers, and
        # another one is a new value (`_Pairs._gives_value`); a later note need not
        # write one.
        shapes.add(WEEKDAY)
    return frozenset(shapes)


_ASKS_WHO = re.compile(r"\W*(?:who|whom)\b", re.IGNORECASE)
ASKS_WEEKDAY = re.compile(r"\b(?:what|which)\s+days?\b", re.IGNORECASE)
"""A question that asks the day of the week ("What day was the climbing before?")."""
_ASKS_DAY = re.compile(rf"^\W*when\b|{ASKS_WEEKDAY.pattern}", re.IGNORECASE)
WEEKDAY = "weekday"
"""The shape asked by a question that asks when or which day, given by no note's
`value_shapes`: a later note need not write a day."""


@functools.lru_cache(maxsize=_PER_TEXT)
def value_shapes(text: str) -> frozenset[str]:
    """The shapes of value `text` gives: an email address, a URL, a phone number, a
    price, a clock time, a time of day in words."""
    return frozenset(name for name, pattern in _SHAPES.items() if pattern.search(text))


_MEASURE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(kgs?|g|mg|ml|lbs?|km|miles?|mi|cm|mm|%|wks?|weeks?|days?"
    r"|months?|mths?|hrs?|hours?|mins?|minutes?|yrs?|years?)(?!\w)",
    re.IGNORECASE,
)
WEEKDAY_STEM = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)"
"""A day of the week as jotted, before an optional "day" ("tues", "thursday", "sat")."""
_WEEKDAY = re.compile(rf"\b{WEEKDAY_STEM}(?:day)?s?\b", re.IGNORECASE)


_UNITS = {
    "kg": "kg",
    "lb": "lb",
    "mile": "mi",
    "week": "wk",
    "wk": "wk",
    "day": "d",
    "month": "mo",
    "mth": "mo",
    "hr": "h",
    "hour": "h",
    "minute": "min",
    "yr": "y",
    "year": "y",
}
"""One unit for each way of writing it ("wks", "weeks")."""


@functools.lru_cache(maxsize=_PER_TEXT)
def measures(text: str) -> frozenset[tuple[str, str]]:
    """The amounts `text` writes with a unit, as (unit, number): ("kg", "15.9") of
    "15.9kg", ("wk", "8") of "8 weeks"."""
    units = ((m.group(2).lower().rstrip("s"), m.group(1)) for m in _MEASURE.finditer(text))
    return frozenset((_UNITS.get(unit, unit), number) for unit, number in units)


_AMOUNT = re.compile(r"(?<![\w.:/,])\d{1,5}\.\d{2}(?![\w.])")
"""An amount of money with pence or cents, with or without its currency sign ("3.50",
"£12.40"; not a date such as "14.05.2026" nor a version such as "v2.10")."""


@functools.lru_cache(maxsize=_PER_TEXT)
def amounts(text: str) -> frozenset[str]:
    """The amounts of money `text` writes with pence or cents (`_AMOUNT`): a price list
    or a chalkboard writes them without their sign ("3.50")."""
    return frozenset(_AMOUNT.findall(text))


@functools.lru_cache(maxsize=_PER_TEXT)
def weekdays(text: str) -> frozenset[str]:
    """The days of the week `text` writes, by their first three letters ("tue" of "Tues",
    "tuesdays")."""
    return frozenset(m.group(0)[:3].lower() for m in _WEEKDAY.finditer(text))


_CAPITAL = re.compile(r"\b[A-Z][a-z]{2,}\w*")
# A month or a day of the week ("TB test Nov", "Sat till 12"): a date, not the name of a
# value one note writes and another replaces.
_CALENDAR = re.compile(
    r"\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
    r"|(?:Mon|Tues?|Wed(?:nes)?|Thu(?:rs)?|Fri|Sat(?:ur)?|Sun)(?:day)?s?)\b"
)
_NUMBER = re.compile(r"\d")
# A bus, a model, a room: letters, then a number ("x12", "a12", "m25").
_CODE = re.compile(r"[a-z]+\d")
# A one-word name and what its bearer did, not a verb that opens a note ("Booked ...").
_SOMEONE_DID = re.compile(
    r"^\W*[A-Z][a-z]+(?<!ed)\s+(?:went|got|took|left|quit|joined|moved|switched|\w+ed)\b"
)
# "heard at the school gate: Dr Hallam leaving Bramcote": the first two words, and those
# after a short label that opens the note.
_FIRST_WORDS = r"\W*(\w[\w'’-]*)(?:\W+(\w[\w'’-]*))?"
_OPENING = re.compile(_FIRST_WORDS)
_AFTER_LABEL = re.compile(r"[^:\n]{0,30}:(?!\d)" + _FIRST_WORDS)


def _opening(text: str) -> tuple[str, ...]:
    """The first two words of `text`, and those after a short label ("fwd from dad:")."""
    found = [m for m in (_OPENING.match(text), _AFTER_LABEL.match(text)) if m is not None]
    return tuple(w for m in found for w in m.groups() if w)


# "no longer uses Emacs", "switched from Wave", "instead of the 7:42", "no more X12",
# "cancelled Flixstream": what a note says it turned away from (up to three words on).
_TURNED = re.compile(
    r"\b(?:no\s+longer|no\s+more(?!\s+than)|instead\s+of|(?:switched|moved|changed|away)\s+from"
    r"|ditched|quit|cancell?ed|deleted|gave\s+up|replaced|stopped)\s+((?:\S+\s+){0,2}\S+)",
    re.IGNORECASE,
)
# "sent a pic from his old balcony", "Ana's former boss": what someone had before (not
# "way closer than the old place": a new value beside the one it replaced).
_WHAT_WAS = re.compile(
    r"\b(?:his|her|their|my|our|your|\w+['’]s)\s+(?:old|former|previous|ex)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=_PER_TEXT)
def speaks_of_what_was(text: str) -> bool:
    """Whether `text` speaks of what someone had before ("his old balcony") and says no
    change: it is about an old value, no later version of it."""
    return _WHAT_WAS.search(text) is not None and not says_change(text)


_FOR_A_PERIOD = re.compile(r"\bthis\s+(?:season|term|semester)\b", re.IGNORECASE)


def _holds_until_changed(text: str) -> bool:
    """Whether `text` says a change that holds until another note says one: not one said
    only for a period ("Mr Okonjo conducting again this term"), which a later note may
    replace without a word of change."""
    return says_change(text) and says_change(_FOR_A_PERIOD.sub(" ", text))


_AGAIN = re.compile(r"^re(\w{4,})$")


def _again(words: set[str]) -> set[str]:
    """`words` and the words they do again ("book" of "rebook")."""
    return words | {m.group(1) for w in words if (m := _AGAIN.match(w))}


@dataclass
class _Pairs:
    """What the pairwise comparison needs about the considered memories."""

    asked: set[str]
    words: dict[str, set[str]]
    scores: dict[str, float]
    weight: Weight
    common: set[str]
    named: Sequence[set[str]]
    ended: Sequence[EndedValue]
    meaning: Mapping[str, float] = field(default_factory=lambda: {})
    name_terms: set[str] = field(default_factory=set[str])
    people: Sequence[set[str]] = ()
    """Of `named`, the names of several words (a person's, "Ada Wrenfield"): a memory
    without it is about someone else. A one-word name may be a thing said in other
    words ("API" for "the public tier rate limit")."""
    kept: set[str] = field(default_factory=set[str])
    """The memories that are about the user, for a question about the user or about no one
    (see `subjects.Subjects.kept`)."""
    required: Sequence[set[str]] | None = None
    """Of `named`, the names a later version must hold when the earlier one holds them
    (None: all of `named`)."""
    others: set[str] = field(default_factory=set[str])
    """The memories about someone close to whom is asked (`subjects.Subjects.others`): no
    later version of a note about them."""
    unsettled: set[str] = field(default_factory=set[str])
    """The memories that tell only a wish, a plan under thought or a rumour (`unsettled`):
    no later version of a value."""

    shapes: Mapping[str, frozenset[str]] = field(default_factory=lambda: {})
    """Each memory's shapes of value (`value_shapes`)."""
    capitals: Mapping[str, set[str]] = field(default_factory=lambda: {})
    """Each memory's terms of its capitalised words (the names it writes)."""
    turned: Mapping[str, set[str]] = field(default_factory=lambda: {})
    """Each memory's terms of what it says it turned away from (`_TURNED`)."""
    opening: Mapping[str, set[str]] = field(default_factory=lambda: {})
    """Each memory's terms of the words it opens with (`_OPENING`)."""
    first_person: Mapping[str, bool] = field(default_factory=lambda: {})
    """Whether each memory speaks in the first person."""
    dates: Mapping[str, set[str]] = field(default_factory=lambda: {})
    """Each memory's terms of the months and days of the week it writes (`_CALENDAR`)."""
    asked_shapes: frozenset[str] = frozenset()
    """The shapes of value the question asks for by name (`_ASKED_SHAPES`)."""
    text: Mapping[str, str] = field(default_factory=lambda: {})
    """Each memory's text."""

    def __post_init__(self) -> None:
        self.hits = {u: _asked_in(self.asked, w) for u, w in self.words.items()}
        self.elsewhere: set[str] = set()
        self.line: dict[str, float] = {}
        """For a memory that updates others, the closest in meaning to the question of the
        versions it ends (a later version continues the line only if it answers as well)."""
        self.kept_words: dict[str, set[str]] = {}
        """For a later version, the asked words it and the version before it both hold."""
        self.dropped: dict[str, set[str]] = {}
        """For a later version, the words the versions before it held and it dropped
        (`_drops`): a later note that holds them goes back to an old value."""
        self.line_names: dict[str, set[str]] = {}
        """For a later version, the terms of the names the versions before it wrote."""
        self.elsewhere_in_line: dict[str, set[str]] = {}
        """For a version, the later notes that said a change to an earlier version of its
        line but changed another attribute (`_closest`): no versions of it either."""
        self.went_back: dict[str, str] = {}
        """A later note that goes back to an old value, and the version it went back from
        (`_goes_back`)."""
        self.asked_weight = sum(self.weight(t) for t in set[str]().union(*self.hits.values()))

    def same_subject(self, older: str, newer: str, margin: float = MEANING_MARGIN) -> bool:
        # A name the question asks about that both memories hold, else the asked words;
        # a memory that lacks the asked name the earlier one holds is about someone else
        # ("Hollis mentors three new hires" is no update of "Ada's mentor is Hollis").
        if self._by_name(older, newer):
            return True
        if any(older in uuids for uuids in self.people):
            return False
        if _same_subject(
            self.hits[older], self.hits[newer], self.asked_weight, self.weight, self.common
        ):
            return True
        # Notes about the user ("gym: IronHouse, membership #44812" and "cancelled the old
        # membership, joined Boulder Barn"): a word both hold, or closeness in meaning to
        # the question ("joined Pulse Fitness"), says they are about the same thing; what
        # merely ranked them among the best does not.
        return self._kept(older, newer) and (
            self._share_words(older, newer)
            or (self._about_asked(older, newer) and self._as_close(older, newer, margin))
        )

    def _about_asked(self, older: str, newer: str) -> bool:
        # The earlier note is about what is asked, or the question names the later value
        # ("Who did I report to before Tobias?"), so the earlier one cannot be close to it.
        # Of the notes that do not name it, the earlier is then the closest to the question.
        return self._answers(older) or any(
            newer in uuids and older not in uuids and self._closest_without(older, uuids)
            for uuids in self.named
        )

    def _closest_without(self, uuid: str, named: set[str]) -> bool:
        rest = [m for u, m in self.meaning.items() if u not in named and u in self.words]
        said = self.meaning.get(uuid)
        return said is not None and bool(rest) and said >= max(rest)

    def _answers(self, uuid: str) -> bool:
        # About as close to the question as the closest memory: what is asked about.
        best = max(self.meaning.values(), default=None)
        said = self.meaning.get(uuid)
        return best is not None and said is not None and said >= best - MEANING_MARGIN

    def _share_words(self, older: str, newer: str) -> bool:
        # A verb done again is the same word ("booked" and "rebooked").
        return bool(_again(self.words[older]) & _again(self.words[newer]) - self.common)

    def _as_close(self, older: str, newer: str, margin: float) -> bool:
        before, after = self.meaning.get(older), self.meaning.get(newer)
        return before is not None and after is not None and after >= before - margin

    def share_subject(self, older: str, newer: str) -> bool:
        # Both name what is asked about (a name, or a specific asked word): an ended value
        # merely named by a memory about something else is no earlier version of it.
        if self._by_name(older, newer):
            return True
        return bool((self.hits[older] & self.hits[newer]) - self.common)

    def same_attribute(self, older: str, newer: str, margin: float = MEANING_MARGIN) -> bool:
        # The update speaks to the question about as well as what it changes, or it names
        # the earlier value itself ("moved off birch-07 to cedar-12").
        if self.scores[newer] >= RELEVANT_SHARE * self.scores[older]:
            return True
        # A later note that says a change about the very subject the question names (a
        # specific name, not one in most memories) changes what is asked even when it
        # shares nothing else with the question ("Tamsin switched to oat milk chai").
        if (self._by_name(older, newer) and not self._another_attribute(older, newer)) or (
            self._kept(older, newer) and self._share_words(older, newer)
        ):
            return True
        # ... or it answers the question about as well by meaning ("The wiki got renamed to
        # Compass" for "What is the internal wiki called?" after "is called Hearth").
        before, after = self.meaning.get(older), self.meaning.get(newer)
        if before is not None and after is not None and after >= before - margin:
            return True
        # Fused scores of a few memories say little (min-max over three): an update that
        # holds most of what the earlier one holds of the question speaks to it as well.
        held = sum(self.weight(t) for t in self.hits[older])
        if sum(self.weight(t) for t in self.hits[older] & self.hits[newer]) >= HELD_SHARE * held:
            return True
        repeated = (self.words[older] & self.words[newer]) - self.asked - self.common
        if any(_VALUE_TOKEN.search(t) for t in repeated):
            return True
        # ... or it names the asked attribute inside a longer word ("license" in "was
        # relicensed").
        return bool((self.hits[older] & self.hits[newer]) - self.words[newer])

    def _another_attribute(self, older: str, newer: str) -> bool:
        """Whether `newer` is about another attribute of the subject `older` gives the asked
        one of: `older` holds asked words besides the names, `newer` none of them, and it is
        far from the question in meaning ("Leo's swimming moved to sat mornings" after
        "Leo's Portuguese club: Saturday 10am" for "When does Leo have his Portuguese
        club?")."""
        attribute = self.hits[older] - self.name_terms - self.common
        return (
            bool(attribute)
            and not attribute & self.hits[newer]
            and not self._as_close(older, newer, SWAP_MARGIN)
        )

    def _holds_line(self, older: str, newer: str) -> bool:
        # A later note holds the asked words a line of versions kept ("Search queue
        # escalation: Pia" continues no line of "billing queue escalation" notes).
        return self.kept_words.get(older, set()) <= self.hits[newer]

    def _kept(self, older: str, newer: str) -> bool:
        return older in self.kept and newer in self.kept

    def _by_name(self, older: str, newer: str) -> bool:
        required = self.named if self.required is None else self.required
        return any(older in uuids and newer in uuids for uuids in self.named) and not any(
            older in uuids and newer not in uuids for uuids in required
        )

    def same_answer(self, older: str, newer: str) -> bool:
        # Both name the same specific subject (or the later one holds the asked words the
        # earlier one holds, of the user's notes half their weight: "Friday takeout: Nonna
        # Rosa's" after "Friday takeout: Golden Lotus"), and the later one answers the
        # question about as well by meaning: it may give the same attribute another value.
        before, after = self.meaning.get(older), self.meaning.get(newer)
        if before is None or after is None:
            return False
        before = max(before, self.line.get(older, before))
        if self._restates(older, newer) or not self._holds_line(older, newer):
            return False
        if self._lacks_asked_shape(older, newer):
            # The value asked for is of a shape the earlier note gives and the later one
            # does not ("call him after 8" after "Ravi mob 07700 914 332"): no new value.
            return False
        if self._same_words(older, newer):
            return after >= before - SAME_WORDS_MARGIN
        # Notes linked only as the user's: the earlier one must be about what is asked (a
        # bystander close to nothing is no earlier version of whatever is close).
        kept = self._kept(older, newer) and self._about_asked(older, newer)
        by_name = self._by_name(older, newer) or self._subject_left_out(older, newer)
        return (kept or by_name) and after >= before - self._margin(older, newer, kept, by_name)

    def _subject_left_out(self, older: str, newer: str) -> bool:
        """Whether `newer` is about the named subject `older` is about though it leaves the
        name out, as a quick note does ("weighed b at the vets open day - 15.9kg!!!" after
        "biscuit weigh-in 17.8kg" for "What does Biscuit weigh now?"): it names no one and
        nothing `older` does not, holds an asked word `older` holds besides the names, and
        gives another value of a kind `older` gives (`_gives_value`)."""
        if not any(older in uuids and newer not in uuids for uuids in self.named):
            return False
        names = self._names(newer) - self.words[older]
        return not names and self.holds_attribute(older, newer) and self._gives_value(older, newer)

    def _lacks_asked_shape(self, older: str, newer: str) -> bool:
        """Whether `older` gives a value of a shape the question asks for by name and
        `newer` gives none of that shape."""
        asked = self.shapes.get(older, frozenset()) & self.asked_shapes
        given = self.shapes.get(newer, frozenset())
        if "part of day" in given:
            # "at lunchtime now" answers "What time ...?" as a clock time does.
            given |= {"clock"}
        return bool(asked - given)

    def _margin(self, older: str, newer: str, kept: bool, by_name: bool) -> float:
        """How far below `older` in meaning a silent `newer` may answer and still be its
        later version (`same_answer`); `kept`: linked as the user's notes, `by_name`: by
        the question's specific subject."""
        if older in self.line:
            # A note that continues a line of versions: what shares a word with the latest
            # is often about something else ("Window cleaner comes on the 3rd" after
            # "Trains: window please").
            return MEANING_MARGIN
        if self._gives_value(older, newer) and (
            by_name or (kept and self.holds_attribute(older, newer))
        ):
            # Another price, time or number of the named subject, or of the user's note
            # that holds an asked word it holds, told in other words ("cashing up sheet:
            # float £200 left in drawer" after "till float £150, count in 5s" for "How much
            # float goes in the till?"; not "Fibrelane retention team called offering £25"
            # after "internet: Fibrelane, £32/mo" for "who is our broadband provider?").
            return SWAP_MARGIN
        swaps = self._swaps_value(older, newer)
        if swaps and (by_name or (kept and self._new_names_only(older, newer))):
            # The named subject with a new name where the old value was ("T. sent the
            # sort code - it's a Corvane account" after "banked w/ Halverd Mutual"), or a
            # user's note that shares a word with the earlier one and writes none of its
            # names ("TB test booked w/ Marchog Farm Vets" after "farm vet = Severnside
            # Vets"; not "Brightbeam did the compressor at Pryce Fab" after "laser svc:
            # Brightbeam Services": news of the old value).
            return SWAP_MARGIN
        # Both give a value of one shape (an email address, a phone number, a price, a
        # clock time): the later one gives the same attribute in other words ("writing
        # from t.marr.casa@ventomail.it" after "email: teo.marr61@plumpost.it"). A user's
        # two notes that share a word likewise ("Trains: window please" after "Always book
        # me an aisle seat on trains"), and a later note that writes a new name where the
        # earlier one's value was.
        near = (
            self.shapes[older] & self.shapes[newer]
            or (kept and self._share_words(older, newer))
            or swaps
        )
        return SAME_WORDS_MARGIN if near else MEANING_MARGIN

    def _names(self, uuid: str) -> set[str]:
        """The terms of the names a memory writes, besides the question's, the names in most
        memories, and months and days."""
        names = self.capitals.get(uuid, set()) - self.dates.get(uuid, set())
        return names - self.asked - self.common - self.name_terms

    def _new_names_only(self, older: str, newer: str) -> bool:
        """Whether `newer` shares a word or a shape of value with `older` ("car insurance w
        Brightshield, £612/yr" and "done! Hollyoak Direct, £478") and writes none of the
        names `older` writes (besides the question's, and months and days)."""
        names = self._names(older)
        near = self._share_words(older, newer) or bool(self.shapes[older] & self.shapes[newer])
        return near and not names & self.words[newer]

    def _swaps_value(self, older: str, newer: str) -> bool:
        """Whether `newer` writes a name in place of the one `older` gives as its value:
        a name `older` does not hold, and none of the names `older` writes after its
        opening ("housewarming @ Noor's sat!! Dundee" after "Noor's flat in Hull")."""
        values = self._names(older) - self.opening.get(older, set())
        new_names = self._names(newer) - self.words[older]
        return bool(values) and bool(new_names) and not values & self.words[newer]

    def _restates(self, older: str, newer: str) -> bool:
        # The later note is the earlier one with an asked word put another way, and the
        # question asks with the earlier word ("... before the quarterly audit?" of "before
        # the quarterly audit" and a later "before the yearly audit"): two notes side by
        # side, and the question chooses one. A name both hold says they are versions.
        if self._by_name(older, newer):
            return False
        gone = self.words[older] - self.words[newer]
        return (
            bool(gone)
            and gone <= self.asked
            and len(self.words[newer] - self.words[older]) <= len(gone)
        )

    def _same_words(self, older: str, newer: str) -> bool:
        held = self.hits[older] - self.common
        if any(older in uuids for uuids in self.named) and not self._by_name(older, newer):
            # A memory of a name the question asks about keeps to memories of it.
            return False
        # The later one holds the asked words the earlier one holds; a user's own notes may
        # leave some of them out ("holiday photos" of "holiday photos backed up") ...
        both = held & self.hits[newer]
        share = SAME_WORDS_SHARE if self._kept(older, newer) else 1.0
        return (
            len(both) >= 2
            and sum(self.weight(t) for t in both) >= share * sum(self.weight(t) for t in held)
            # ... and the earlier one is about what is asked: it holds most of the
            # question's weight, not only its common words ("team", "owns").
            and sum(self.weight(t) for t in held) >= ASKED_WEIGHT * self.asked_weight
        )

    def holds_attribute(self, older: str, newer: str) -> bool:
        # The later one holds an asked word the earlier one holds besides the names: the
        # attribute asked about ("backend" in "What does the Ledger backend use?").
        return bool((self.hits[older] - self.name_terms) & self.hits[newer])

    def is_update(self, older: Candidate, newer: Candidate) -> bool:
        if newer.created_at <= older.created_at:
            return False
        if _fact_says_update(older, newer, self.ended):
            return self.share_subject(older.uuid, newer.uuid)
        if not says_change(newer.content) or not self._holds_line(older.uuid, newer.uuid):
            return False
        if self._lacks_asked_shape(older.uuid, newer.uuid):
            # A change of something else ("Ravi changed jobs" after "Ravi mob 07700 914
            # 332" for his number).
            return False
        # A change said with a new name where the earlier value was, by the user or of the
        # asked subject, may be told far from the question in meaning ("We're on Solvane
        # Power now" after "Electricity & gas with Ember Energy" for "Who's our energy
        # supplier?"; not "Gerda's taken over plot 12" after the user's "plot 7").
        o, n = older.uuid, newer.uuid
        swaps = self._swaps_value(o, n) and (self._by_name(o, n) or self._kept(o, n))
        # A user's own note that says a change may too, in other words ("Going fully vegan
        # as of this month" after "vegetarian since 2023"), unless it speaks of someone
        # as he or she ("wojtek on £12.60 now he says") or opens with what someone did
        # ("Hamid went harpooner for the new patch").
        own = (
            self._kept(o, n)
            and HE_OR_SHE.search(newer.content) is None
            and _SOMEONE_DID.search(newer.content) is None
        )
        margin = SWAP_MARGIN if swaps else SAME_WORDS_MARGIN if own else MEANING_MARGIN
        return self.same_subject(older.uuid, newer.uuid, margin) and self.same_attribute(
            older.uuid, newer.uuid, margin
        )

    def updates_of(self, older: Candidate, later: Sequence[Candidate]) -> list[Candidate]:
        """The later memories that update `older`, oldest first: those that say so, else
        the one (if any) that answers the question best by meaning about the same subject.
        A later note about the subject that says no change is an update only when nothing
        says one ("parks in the garage" is no update of "drives to work" when "sold the
        car and cycles" is there). A note about someone close to the subject is none."""
        if older.uuid in self.others:
            # A note about someone close to whom is asked is no earlier version of their
            # value either ("anjali (ravi's sis) signed up to Harbourside Harriers" is not
            # changed by "ravi switched to a standing desk").
            return []
        later = self._candidates(older, later)
        updates = [n for n in later if self.is_update(older, n)]
        silent = self._silent(older, later)
        gone = self._gone_back(older, [n for n in later if n in updates or n in silent], updates)
        said = self._said(older, [n for n in updates if n.uuid not in gone])
        silent = self._undoing(older, silent, gone)
        if said and not self._copied_over(older, said, silent):
            return said
        return self._best_silent(older, silent)

    def _copied_over(
        self, older: Candidate, said: list[Candidate], silent: list[Candidate]
    ) -> bool:
        """Whether a silent later note writes `older` out again with another value (most
        of its words, a value anew: "proof for window vinyl: MON-FRI 7:30-17:00 · SAT 8-15
        · SUN closed" after "hours: mon-fri 7:00-16:00 / sat 8-15 / sun closed") while
        the notes that say a change write none of its words ("Crumb & Co across the road
        opening 6:30 now"): the first is the later version. It writes every name `older`
        writes: "Reminder from Quilla T.: the check runs every Thursday" is no copy of
        "Reminder from Gunnar T.: the triage check runs every Tuesday"."""
        own = self.words[older.uuid] - self.common
        if any(own & self.words[n.uuid] for n in said):
            return False
        names = self._names(older.uuid)
        return any(
            len(own & self.words[n.uuid]) >= max(2, len(own) / 2)
            and names <= self.words[n.uuid]
            and self._gives_value(older.uuid, n.uuid)
            for n in silent
        )

    def _said(self, older: Candidate, updates: list[Candidate]) -> list[Candidate]:
        """Of the later notes that say a change to `older`, those about the asked attribute
        (`_closest`); the others are recorded as no versions of its line either."""
        said = self._closest(updates)
        self.elsewhere_in_line.setdefault(older.uuid, set()).update(
            n.uuid for n in updates if n not in said
        )
        return said

    def _undoing(
        self, older: Candidate, silent: list[Candidate], gone: set[str]
    ) -> list[Candidate]:
        """Of the later notes that say no change, those that may replace `older`.

        A memory that says a change holds until another says one ("sold the car and cycles
        now" is not undone by a later "parks in the garage when it rains"), unless it is
        the first of its line, where the change it says is how the old value began
        ("joined Harbour Harriers", "salary -> Harbourline Bank"), and the later note is
        tied to it by a name or a word, not by meaning alone."""
        silent = [n for n in silent if n.uuid not in gone]
        if not _holds_until_changed(older.content):
            return silent
        if older.uuid in self.line:
            return []
        return [n for n in silent if self._tied(older.uuid, n.uuid)]

    def _tied(self, older: str, newer: str) -> bool:
        """Whether `newer` is tied to `older` by a name the question asks about or a word
        both hold, not only by closeness in meaning to the question."""
        return self._by_name(older, newer) or self._share_words(older, newer)

    def _silent(self, older: Candidate, later: list[Candidate]) -> list[Candidate]:
        """The later notes that say no change and answer as `older` does (`same_answer`)."""
        return [
            n
            for n in later
            if n.created_at > older.created_at
            and not says_change(n.content)
            and not speaks_of_what_was(n.content)
            and self.same_answer(older.uuid, n.uuid)
        ]

    def _candidates(self, older: Candidate, later: Sequence[Candidate]) -> list[Candidate]:
        """The later notes that may be versions of `older`: not one about someone close,
        a wish, one that goes back to a value the line of `older` dropped (recorded in
        `went_back`), or one that changed another attribute of an earlier version of the
        line (`elsewhere_in_line`)."""
        dropped = self.dropped.get(older.uuid, set())
        elsewhere = self.elsewhere_in_line.get(older.uuid, set())
        kept: list[Candidate] = []
        for n in later:
            if self._goes_back(older.uuid, dropped, n.uuid):
                self.went_back.setdefault(n.uuid, older.uuid)
            elif n.uuid not in self.others | self.unsettled | elsewhere and not self._news_of_value(
                older.uuid, n.uuid
            ):
                kept.append(n)
        return kept

    def _news_of_value(self, older: str, newer: str) -> bool:
        """Whether `newer` is news about a value `older` gives, not a later version of it
        ("Hamish from Cobbold & Reyes moved to a firm up north" after "van insurance broker
        = Cobbold & Reyes, contact Hamish"): it opens with a name `older` writes after its own
        opening that the question does not ask, does not speak in the first person, holds
        no asked word besides the names, gives no value of the shape of `older`'s, writes
        no name `older` does not (a new value) and does not say it turned away from the old
        one ("cancelled Tunebox, ...")."""
        # The names `older` opens with are whom it is about ("Nana Vesna's number: ..."),
        # not a value it gives.
        values = self.capitals.get(older, set()) - self.opening.get(older, set())
        values -= self.asked | self.common | self.name_terms
        if not values & self.opening.get(newer, set()) or self.first_person.get(newer):
            # ... and news said in the first person is the user's ("Kettle Yard is shut, so
            # we're meeting at the library").
            return False
        new_names = self.capitals.get(newer, set()) - self.words[older] - self.asked
        return not (
            self.turned.get(newer, set()) & values
            or self.hits[newer] - self.name_terms
            or self.shapes[older] & self.shapes[newer]
            or new_names - self.common - self.name_terms
        )

    def _gone_back(
        self, older: Candidate, later: list[Candidate], said: list[Candidate]
    ) -> set[str]:
        """Of the later notes that may update `older` (oldest first), those that hold what
        an earlier one of them dropped of it: such a note is about the old value ("Ole's
        rent went up to £640 too" after "rent £695 from June" changed "rent £640 a
        month"). An earlier one replaces the value when it says a change (it is in `said`)
        or names none of `older`'s names: a silent one that does is itself about the old
        value ("Fenwick Dental sent a reminder"). A note that says it turned away from a
        name the earlier one wrote is the change itself ("no longer uses Emacs")."""
        gone: set[str] = set()
        for i, n in enumerate(later):
            if self.turned.get(n.uuid, set()) & self._values(older.uuid):
                # It says it turned away from a name the earlier note wrote ("no longer uses
                # Emacs"): the change itself, not a note about the old value.
                continue
            replaced_by = next(
                (
                    m
                    for m in later[:i]
                    if m.uuid not in gone and self._replaced_before(older.uuid, m, n.uuid, said)
                ),
                None,
            )
            if replaced_by is not None:
                gone.add(n.uuid)
                self.went_back.setdefault(n.uuid, replaced_by.uuid)
        return gone

    def _values(self, uuid: str) -> set[str]:
        """The terms of the names and of the codes a memory writes ("Fibrewave", "X12"; not
        "7am"): what a later note may say it turned away from."""
        codes = {t for t in self.words[uuid] if _CODE.match(t)}
        return self.capitals.get(uuid, set()) | codes

    def _replaced_before(
        self, older: str, newer: Candidate, after: str, said: list[Candidate]
    ) -> bool:
        """Whether `newer` replaced `older`'s value and `after` holds what it dropped (see
        `_gone_back`). When `newer` says no change, does not name the question's subject,
        and `after` holds only words of the old note, no name or number of it, `after` must
        also be no closer to the question by meaning: else it is the later version itself
        and `newer` a note about something else ("wrote the wifi one, bluebell1962, on a
        card by the router" after "library guest wifi: Readers2025", for the home wifi
        noted "on the router sticker")."""
        dropped = self._drops(older, newer.uuid)
        if newer in said:
            return self._goes_back(older, dropped, after)
        if not self._replaces(older, newer.uuid) or not self._goes_back(older, dropped, after):
            return False
        if (
            any(n.uuid == after for n in said)
            and self.holds_attribute(older, after)
            and self._gives_value(older, after)
            and not self.holds_attribute(older, newer.uuid)
        ):
            # ... nor one about another attribute before a note that says the asked one
            # changed and gives its new value: "business rates bill £2,310 for the yr" did
            # not replace "rent £1,850 pcm to Mrs Whitcombe" so that "Whitcombe letter re
            # rent review: from 1 June rent will be £2,050 pcm" reads as a note about the
            # old rent.
            return False
        if self._gives_value(older, after) and not self._gives_value(older, newer.uuid):
            # A silent note that gives no new value replaced none ("staffroom microwave
            # broken again" before "my break slot on the summer rota is 1:30" after "lunch
            # break 12:30-1").
            return False
        if self._back_by_value(older, dropped, after) or self._by_name(older, newer.uuid):
            return True
        before, later = self.meaning.get(newer.uuid), self.meaning.get(after)
        return before is None or later is None or before >= later

    def _gives_value(self, older: str, newer: str) -> bool:
        """Whether `newer` gives another value of a kind `older` gives: a price, a clock
        time or a phone number with a number `older` does not write, an email address or
        a URL, another amount of a unit both write, or (for a question that asks when)
        another day of the week. A new name where `older`'s was is no such sign: "Kasia
        got her band 6" writes one beside "band 5, ask Gwen", and so do notes about other
        things."""
        numbers = {t for t in self.words[newer] - self.words[older] if _NUMBER.search(t)}
        shared = self.shapes[older] & self.shapes[newer]
        if shared & {"email", "url"} or (shared and numbers):
            return True
        if "price" in self.shapes[older] and amounts(self.text.get(newer, "")) - amounts(
            self.text.get(older, "")
        ):
            # A price list or a chalkboard writes the amount alone ("CAKE OF THE DAY -
            # 3.50" after "cake slice £3.00").
            return True
        # ... or another amount of a unit both write ("15.9kg" after "17.8kg", "8 weeks"
        # after "every 6 weeks"), or another day of the week ("Tues" after "thurs") when
        # the question asks when.
        before, after = measures(self.text.get(older, "")), measures(self.text.get(newer, ""))
        units = {u for u, _ in before} & {u for u, _ in after}
        if any(u in units and (u, n) not in before for u, n in after):
            return True
        if WEEKDAY not in self.asked_shapes:
            # ... a day asked for: "Olumide's twins christened sunday" gives no new
            # manager after "line manager = Olumide. 1:1s fortnightly thurs".
            return False
        days_before = weekdays(self.text.get(older, ""))
        days_after = weekdays(self.text.get(newer, ""))
        return bool(days_before and days_after - days_before)

    def _replaces(self, older: str, newer: str) -> bool:
        """Whether `newer` names none of the names `older` writes besides the question's."""
        names = self.capitals.get(older, set()) - self.asked - self.common - self.name_terms
        return not names & self.words[newer]

    def _drops(self, older: str, newer: str) -> set[str]:
        """The words of `older` that its later version `newer` no longer holds, besides the
        question's words and names: what the change replaced."""
        return self.words[older] - self.words[newer] - self.asked - self.common - self.name_terms

    def _goes_back(self, older: str, dropped: set[str], newer: str) -> bool:
        """Whether `newer` holds enough of the words a line of versions from `older`
        dropped to be about the old value, not a later one ("Rhea's essay also due 12 may"
        after "extension granted, now 2 june" changed "ESSAY DUE 12 MAY"): two of them, or
        a number or a name of the line's."""
        back = dropped & self.words[newer]
        return len(back) >= 2 or self._back_by_value(older, dropped, newer)

    def _back_by_value(self, older: str, dropped: set[str], newer: str) -> bool:
        """Whether `newer` holds a name or a number of the words a line of versions from
        `older` dropped."""
        names = self.line_names.get(older, set()) | self.capitals.get(older, set())
        return any(t in names or _NUMBER.search(t) for t in dropped & self.words[newer])

    def continues(self, older: str, newer: str) -> None:
        """Record that `newer` is a later version of `older`."""
        if self._answers(older):
            # Only a line whose earlier version answers the question about as well as the
            # best keeps words: a bystander far below is no version of what is asked.
            self.kept_words[newer] = (self.hits[older] & self.hits[newer]) - self.common
        self.dropped[newer] = (
            self.dropped.get(newer, set())
            | self.dropped.get(older, set())
            | self._drops(older, newer)
        )
        self.elsewhere_in_line[newer] = self.elsewhere_in_line.get(
            newer, set()
        ) | self.elsewhere_in_line.get(older, set())
        self.line_names[newer] = (
            self.line_names.get(newer, set())
            | self.line_names.get(older, set())
            | self.capitals.get(older, set())
        )
        said = [m for m in (self.line.get(older), self.meaning.get(older)) if m is not None]
        if said:
            self.line[newer] = max(*said, self.line.get(newer, max(said)))

    def _closest(self, said: list[Candidate]) -> list[Candidate]:
        # Of several later notes that say a change about the subject, those far less close
        # to the question than the closest changed another of its attributes.
        known = [self.meaning[n.uuid] for n in said if n.uuid in self.meaning]
        if len(known) < 2:
            return said
        best = max(known)
        return [n for n in said if self.meaning.get(n.uuid, best) >= best - VERSION_MARGIN]

    def _likeliest(self, older: Candidate, silent: list[Candidate]) -> list[Candidate]:
        """Of `silent`, those that give a new value (`_gives_value`), else all; of them,
        those that hold the asked attribute (`holds_attribute`), the others then being
        about another attribute, no later versions of `older` either (`elsewhere`)."""
        giving = [n for n in silent if self._gives_value(older.uuid, n.uuid)]
        holding = [n for n in giving or silent if self.holds_attribute(older.uuid, n.uuid)]
        if holding:
            self.elsewhere.update(n.uuid for n in silent if n not in holding)
        return [n for n in holding or giving or silent if n.uuid not in self.elsewhere]

    def _best_silent(self, older: Candidate, silent: list[Candidate]) -> list[Candidate]:
        """Of the later notes that say no change and answer as well, the one that updates
        `older`: those that give a new value where `older` gave one, if any ("renewal doc
        came, £14.75 monthly" over "dog insurance staying the same this yr" after
        "insurance DD £11.20 a month"; "house acct statement: DD United Utilities £34"
        over "Kofi's asking if anyone wants a water filter jug" after "water bill united
        utilities £32/mo", though only the second holds the asked "water"); of them, those
        that hold the asked attribute, if any ("the frontend is built with Svelte" is no
        update of "the backend is written in Rails" when "the backend runs on Elixir" is
        there, however close in meaning); then the closest in meaning, ties going to the
        one that holds more of `older`'s asked words (`HELD_TIE`)."""
        pool = self._likeliest(older, silent)
        held = sum(self.weight(t) for t in self.hits[older.uuid]) or 1.0

        def closeness(n: Candidate) -> float:
            # Nearly as close in meaning, the one that holds more of what `older` holds of
            # the question ("estates email: student permit £26/month" over "visitor
            # parking is £3.50 an hour" after "staff parking permit (students) £18/month").
            both = sum(self.weight(t) for t in self.hits[older.uuid] & self.hits[n.uuid])
            return self.meaning.get(n.uuid, 0.0) + HELD_TIE * both / held

        return [max(pool, key=closeness)] if pool else []


def supersede(
    ranked: Sequence[tuple[Candidate, float]],
    asked: Iterable[str],
    tokens: Tokens,
    weight: Weight,
    *,
    common: Iterable[str] = (),
    named: Sequence[set[str]] = (),
    ended: Sequence[EndedValue] = (),
    earlier: bool = False,
    meaning: Mapping[str, float] | None = None,
    name_terms: Iterable[str] = (),
    people: Sequence[set[str]] = (),
    kept: Iterable[str] = (),
    required: Sequence[set[str]] | None = None,
    others: Iterable[str] = (),
    unsettled: Iterable[str] = (),
    considered: int = CONSIDERED,
    asked_shapes: frozenset[str] | None = None,
) -> Supersession:
    """Reorder updates above what they change (see the module docstring).

    Args:
        ranked: memories with their fused scores, best first.
        asked: the question's terms (as `tokens` gives them).
        tokens: the lexical tokenizer (stop words out, stemmed).
        weight: a term's weight (BM25 idf).
        common: terms of names found in most memories (they say nothing of the subject).
        named: for each specific name the question asks about, the memories that hold it.
        ended: values of ended facts about the question's subject, with their successors.
        earlier: the question asks what held before the change: each changed memory takes
            its update's place (or keeps its own, if higher) and the update goes just below.
        meaning: each memory's closeness in meaning to the question (cosine similarity);
            without it, only a later memory that says a change supersedes.
        name_terms: the terms of the names the question asks about (what is left of the
            asked words a memory holds is the attribute asked about).
        people: of `named`, those of names of several words (see `_Pairs.people`).
        kept: the memories about the user, when the question asks about the user or about
            no one (see `_Pairs.kept`).
        required: of `named`, the names a later version must hold when the earlier one
            does (None: all; the user's first-person notes are no such name).
        others: the memories about someone close to whom is asked (see `_Pairs.others`).
        unsettled: the memories that tell only a wish, a plan or a rumour (`unsettled`).
        considered: how many of the best of `ranked` are compared.
        asked_shapes: the shapes of value the question asks for (`shapes_asked`; None:
            read from `asked`).

    Returns:
        The new score of every memory that moved and what superseded each demoted one.
    """
    top = list(ranked[:considered])
    pairs = _Pairs(
        set(asked),
        {c.uuid: set(tokens(c.content)) for c, _ in top},
        {c.uuid: s for c, s in top},
        weight,
        set(common),
        named,
        ended,
        meaning or {},
        set(name_terms),
        people,
        set(kept),
        required,
        set(others),
        set(unsettled),
        {c.uuid: value_shapes(c.content) for c, _ in top},
        _terms(top, tokens, _CAPITAL.findall),
        _terms(top, tokens, _TURNED.findall),
        _terms(top, tokens, _opening),
        {c.uuid: FIRST_PERSON.search(c.content) is not None for c, _ in top},
        _terms(top, tokens, _CALENDAR.findall),
        shapes_asked(set(asked), tokens) if asked_shapes is None else asked_shapes,
        text={c.uuid: c.content for c, _ in top},
    )
    scores = dict(pairs.scores)
    superseded_by: dict[str, str] = {}
    # Oldest first: a chain of updates (A, then B changes A, then C changes B) ends with
    # the latest on top.
    by_time = sorted(top, key=lambda cs: cs[0].created_at)
    for i, (older, _) in enumerate(by_time):
        for newer in pairs.updates_of(older, [c for c, _ in by_time[i + 1 :]]):
            up, down = (older, newer) if earlier else (newer, older)
            lifted = max(scores[up.uuid], scores[down.uuid])
            scores[up.uuid] = lifted
            scores[down.uuid] = min(scores[down.uuid], lifted - BELOW)
            superseded_by[older.uuid] = newer.uuid
            pairs.continues(older.uuid, newer.uuid)
    # For a question about now, a note about an old value goes below the latest version.
    old_values = (
        set[str]() if earlier else _below_the_latest(pairs.went_back, superseded_by, scores)
    )
    return Supersession(
        {u: s for u, s in scores.items() if s != pairs.scores[u]}, superseded_by, old_values
    )


def _terms(
    top: Sequence[tuple[Candidate, float]], tokens: Tokens, words: Callable[[str], Iterable[str]]
) -> dict[str, set[str]]:
    """Each memory's terms of the `words` read from its content."""
    return {c.uuid: set(tokens(" ".join(words(c.content)))) for c, _ in top}


def _below_the_latest(
    went_back: Mapping[str, str], superseded_by: Mapping[str, str], scores: dict[str, float]
) -> set[str]:
    """For a question about now, each note that went back to an old value (and is no
    version itself) just below the latest version of the line it went back from, if it
    ranked above it; returns those notes."""
    versions = set(superseded_by.values())
    moved: set[str] = set()
    for back, version in went_back.items():
        if back in superseded_by or back in versions or version not in versions:
            continue
        seen = {version}
        while (later := superseded_by.get(version)) is not None and later not in seen:
            version = later
            seen.add(version)
        moved.add(back)
        scores[back] = min(scores[back], scores[version] - BELOW)
    return moved
