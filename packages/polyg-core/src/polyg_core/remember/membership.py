"""Where someone belongs, read from a sentence: moves, joins, departures, work and home.

"Alice moved from the payments team to the auth team" ends one membership and starts
another at the sentence's time; "Bob joined Lumen Labs" starts one; "Sam left the
infra team" (or quit it, moved out of a city, stopped working at a company) ends one;
"Priya works at Lumen Labs" and "Tom lives in Lisbon" state one.
The predicate follows the kind of place the person is in, in the vocabulary the
temporal graph's facts use: `member_of` a team (or anything else), `works_at` an
organisation, `works_on` a project, `lives_in` a place. A subject+predicate holds one
object at a time in the temporal graph, so a new `member_of` also closes an older one
that the graph already holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from polyg_core.text.names import NameMention

__all__ = ["MEMBERSHIP_PREDICATES", "MembershipSpan", "membership_spans", "predicate_for"]

_LEAD = r"^[\s,]*(?:(?:has|had|have|just|recently|then|finally|officially|also|now)\s+)*"
_MOVE = re.compile(
    _LEAD
    + r"(?:moved|moves|transferred|switched|relocated|(?:was|got|were)\s+(?:moved|transferred))\b",
    re.IGNORECASE,
)
_JOIN = re.compile(
    _LEAD + r"(?:joined|joins|is\s+joining|will\s+join|started\s+(?:working\s+)?at"
    r"|started\s+a\s+new\s+job\s+at|got\s+a\s+job\s+at|(?:was|got)\s+hired\s+(?:by|at))\b",
    re.IGNORECASE,
)
_LEAVE = re.compile(
    _LEAD + r"(?:left|leaves|quit|quits|resigned\s+from|is\s+leaving|departed"
    r"|moved\s+out\s+of|stopped\s+working\s+(?:at|for|on|with)|retired\s+from"
    r"|no\s+longer\s+(?:works?\s+(?:at|for|on|with)|lives?\s+in|on))\b",
    re.IGNORECASE,
)
_STATE = re.compile(
    _LEAD + r"(?:(?:is|am|are)\s+)?(?:still\s+)?(?P<verb>works?\s+(?:at|for)|working\s+(?:at|for)"
    r"|lives?\s+in|living\s+in|(?:has|have)\s+lived\s+in|(?:is|am|are)\s+based\s+in)\b",
    re.IGNORECASE,
)
_DET = r"(?:(?:the|our|his|her|their|my)\s+)?"
_FROM = re.compile(r"^\s*from\s+" + _DET + r"$", re.IGNORECASE)
_TO = re.compile(
    r"^\s*(?:(?:back|over)\s+)?(?:from\s+\S.*?\s+)?(?:to|into|onto)\s+" + _DET + r"$",
    re.IGNORECASE,
)
_DIRECT = re.compile(r"^\s*(?:the\s+|our\s+|his\s+|her\s+|their\s+)?$", re.IGNORECASE)

_PREDICATES = {
    "team": "member_of",
    "organization": "works_at",
    "project": "works_on",
    "place": "lives_in",
}


MEMBERSHIP_PREDICATES = frozenset(_PREDICATES.values())
"""Where someone belongs. A departure from a place ends the membership held there, under
whichever of these it was stated ("lives in Bergen", then "moved out of Bergen")."""


def predicate_for(entity_type: str) -> str:
    """The membership predicate for a place of the given entity type."""
    return _PREDICATES.get(entity_type, "member_of")


@dataclass(frozen=True)
class MembershipSpan:
    """A membership read from a sentence.

    Attributes:
        subject: the person (or team) it is about.
        predicate: member_of, works_at, works_on or lives_in.
        object: the team, organisation, project or place (an entity name).
        ends: True when the sentence ends it ("left", "moved from"); else it starts or holds.
    """

    subject: str
    predicate: str
    object: str
    ends: bool = False
    at: int = 0  # where its verb ends in the sentence: a time after it is the membership's


def membership_spans(
    sentence: str, mentions: Sequence[NameMention], speaker: str | None = None
) -> list[MembershipSpan]:
    """Memberships stated in one sentence (mention spans relative to it).

    Args:
        sentence: the sentence.
        mentions: the names found in it, in text order.
        speaker: who "I" is (the `Name:` a chat note starts with), if known.
    """
    out: list[MembershipSpan] = []
    last_subject: str | None = None
    for end, name in _anchors(sentence, mentions, speaker):
        subject = name if name is not None else last_subject
        if subject is None:
            continue
        verb = _membership_verb(sentence[end:])
        if verb is None:
            continue
        last_subject = subject
        after = [m for m in mentions if m.span[0] >= end]
        out += _memberships_after(sentence, after, subject, verb, end + verb.end())
    return out


def _anchors(
    sentence: str, mentions: Sequence[NameMention], speaker: str | None
) -> list[tuple[int, str | None]]:
    """Where a subject ends, in sentence order: a name, "I" (the speaker), or "and"
    (None: the previous verb's subject)."""
    # A subject is a name (or "I") directly before the verb.
    anchors: list[tuple[int, str | None]] = [(m.span[1], m.name) for m in mentions]
    if speaker:
        anchors += [(m.end(), speaker) for m in re.finditer(r"\bI\b", sentence)]
    # "Tom moved to Lisbon and joined Lumen Labs": the second verb has the first's subject.
    anchors += [(m.end(), None) for m in re.finditer(r",?\s+and\b", sentence)]
    return sorted(anchors, key=lambda a: a[0])


def _membership_verb(rest: str) -> re.Match[str] | None:
    # A departure first: "moved out of" is not a move to or from somewhere.
    return _LEAVE.match(rest) or _MOVE.match(rest) or _JOIN.match(rest) or _STATE.match(rest)


def _memberships_after(
    sentence: str,
    after: list[NameMention],
    subject: str,
    verb: re.Match[str],
    verb_end: int,
) -> list[MembershipSpan]:
    """The places the verb puts the subject in (or takes it out of), up to the clause's end.

    A move may name two ("from A to B"); the other verbs take the first place they reach.
    """
    out: list[MembershipSpan] = []
    for m in after:
        gap = sentence[verb_end : m.span[0]]
        if re.search(r"[.;!?]|\bbut\b|\band\s+(?:then\s+)?\w+ed\b", gap):
            break
        span = _membership(verb, gap, subject, m, verb_end)
        if span is None:
            continue
        out.append(span)
        if verb.re is not _MOVE:
            break
    return out


def _membership(
    verb: re.Match[str], gap: str, subject: str, place: NameMention, verb_end: int
) -> MembershipSpan | None:
    """The membership of `subject` in `place`, when the words between verb and place fit."""
    predicate = predicate_for(place.entity_type)
    if verb.re is _MOVE:
        if _FROM.match(gap):
            return MembershipSpan(subject, predicate, place.name, True, verb_end)
        if _TO.match(gap):
            return MembershipSpan(subject, predicate, place.name, False, verb_end)
        return None
    if not _DIRECT.match(gap):
        return None
    if verb.re is _JOIN:
        return MembershipSpan(subject, predicate, place.name, False, verb_end)
    if verb.re is _LEAVE:
        return MembershipSpan(subject, predicate, place.name, True, verb_end)
    return MembershipSpan(subject, _stated(verb, place), place.name, False, verb_end)


def _stated(verb: re.Match[str], place: NameMention) -> str:
    """works at / lives in: the predicate of a stated membership."""
    said = verb.group("verb").lower()
    predicate = "lives_in" if ("liv" in said or "based" in said) else "works_at"
    if predicate == "works_at" and place.entity_type in ("team", "project"):
        return predicate_for(place.entity_type)
    return predicate
