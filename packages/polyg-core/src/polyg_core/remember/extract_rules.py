"""Patterns the rule-based extractor reads text with: sentences, events, facts, causes, concepts."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from polyg_shared.intents import ExtractedFact
from polyg_shared.nodes import MemoryCategory

from polyg_core.text.names import LETTER, STOP_WORDS, NameMention, is_word_name, words
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import TimeMatch

__all__ = [
    "CausalSpan",
    "FactSpan",
    "category_of",
    "causal_spans",
    "concepts_of",
    "fact_spans",
    "is_event_sentence",
    "is_name",
    "sentence_spans",
    "settled_facts",
    "strip_times",
]

EXPLICIT_CONFIDENCE = 0.7
"""Confidence of a causal link stated with an explicit cue word ("because", "caused")."""
WEAK_CONFIDENCE = 0.6  # "so": a looser cue than "because"
CHAINED_CONFIDENCE = 0.5  # a cause that the previous sentence's event seems to have produced

_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*")
_EVENT_VERBS = re.compile(
    r"\b(?:deployed|released|removed|added|deleted|created|crashed|failed|broke|went down"
    r"|restarted|started|stopped|fixed|merged|rolled back|reverted|migrated|upgraded|downgraded"
    r"|launched|shipped|changed|updated|renamed|moved|happened|occurred|began|ended|finished"
    r"|completed|reported|noticed|discovered|decided|joined|left|met|hired|promoted|resigned"
    r"|paged|alerted|spiked|dropped|timed out|exhausted|ran out|recovered|resolved|closed"
    r"|opened|filed|announced|published|installed|configured|rotated|expired|leaked|raised"
    r"|detected|introduced|disabled|enabled|scaled|patched|rebooted|exploded|degraded)\b",
    re.IGNORECASE,
)
_IMPERATIVES = words(
    """
    run install use set add create open click restart deploy configure make go type execute
    call update check ensure remove delete copy start stop enable disable export import build
    """
)
_PROCEDURAL = re.compile(
    r"^\s*(?:how to\b|to \w+[^,.]{0,60},)|\bhow to\b|\bsteps?\s*:|\bmake sure\b|^\s*(?:\d+[.)]|[-*])\s+\w",
    re.IGNORECASE | re.MULTILINE,
)
_PAST = re.compile(r"\b(?:was|were|had|did)\b|\b\w{3,}ed\b", re.IGNORECASE)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence; dots inside words ("v2.3.1", "main.py") do not split."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _BOUNDARY.finditer(text):
        if text[pos : m.start()].strip():
            spans.append(_trim(text, pos, m.start()))
        pos = m.end()
    if text[pos:].strip():
        spans.append(_trim(text, pos, len(text)))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def is_event_sentence(sentence: str) -> bool:
    """True when the sentence reports something that happened (an event verb)."""
    return _EVENT_VERBS.search(sentence) is not None


# --- facts --------------------------------------------------------------------------------------

_NOW = r"(?:currently\s+|now\s+|still\s+|also\s+)?"
_FACT_VERBS: list[tuple[str, str]] = [
    (r"(?:is|are)\s+" + _NOW + r"working\s+on", "works_on"),
    (r"works?\s+on", "works_on"),
    (r"owns?", "owns"),
    (r"maintains?", "maintains"),
    (r"leads?", "leads"),
    (r"manages?", "manages"),
    (r"uses?", "uses"),
    (r"depends?\s+on", "depends_on"),
    (r"requires?", "requires"),
    (r"runs?\s+on", "runs_on"),
    (r"(?:is|are)\s+" + _NOW + r"part\s+of", "part_of"),
    (r"belongs?\s+to", "belongs_to"),
    (r"reports?\s+to", "reports_to"),
    (r"(?:is|are)\s+" + _NOW + r"(?:an?\s+)?members?\s+of", "member_of"),
    (r"(?:is|are)\s+" + _NOW + r"responsible\s+for", "responsible_for"),
    (r"(?:is|are)\s+" + _NOW + r"(?:owned|maintained|managed|led|used)\s+by", "by"),
    (r"(?:is|are)\s+(?:an?|the)", "is"),
]
# "X is owned by Y" is "Y owns X".
_PASSIVE = {
    "owned": "owns",
    "maintained": "maintains",
    "managed": "manages",
    "led": "leads",
    "used": "uses",
}
_FACT = re.compile(
    r"^\s+(?:(?:project|team|squad|service)\s+)?(?:"
    + "|".join(f"(?P<p{i}>{v})" for i, (v, _) in enumerate(_FACT_VERBS))
    + r")\s+"
    r"(?P<obj>.+?)(?=\s*(?:[,;:!?]|\.(?:\s|$)|$|\s(?:because|but|so|since|when|while|and"
    r"|which|who|after|before|until)\b))",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_AND = re.compile(r",?\s+and\b")
_SUBJECT_LEAD = re.compile(r"\W*(?:the\s+)?", re.IGNORECASE)
# What may follow an entity that starts a fact's object: its kind, or a prepositional phrase.
_OBJECT_TAIL = re.compile(
    r"(?:\s+(?:cluster|repo|repository|service|database|db|api|team|project|library|app))?"
    r"(?:\s+(?:for|in|with|on|at|from|via|during|to)\b.*)?",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class FactSpan:
    """A fact read from a sentence; `target` is the object's entity name when it is one."""

    subject: str
    predicate: str
    object: str
    target: str | None


def fact_spans(sentence: str, mentions: Sequence[NameMention]) -> list[FactSpan]:
    """Facts "X <verb> Y" whose subject X is a named entity (spans relative to the sentence).

    "X uses Y and runs on Z" gives two facts about X; an object that starts with an
    entity's name is that entity ("k8s-prod cluster" is k8s-prod).
    """
    out: list[FactSpan] = []
    anchors: list[tuple[int, str | None]] = [(m.span[1], m.name) for m in mentions]
    anchors += [(a.end(), None) for a in _AND.finditer(sentence)]
    # "Felix joined the squad and reports to Marta": "and" continues the sentence's subject.
    subject = next(
        (m.name for m in mentions[:1] if _SUBJECT_LEAD.fullmatch(sentence[: m.span[0]])), None
    )
    for end, name in sorted(anchors, key=lambda a: a[0]):
        match = _FACT.match(sentence[end:])
        who = name if name is not None else subject
        if match is None or who is None:
            continue
        subject = who
        fact = _fact(sentence, mentions, who, match, end)
        if fact is not None:
            out.append(fact)
    return out


def _fact(
    sentence: str, mentions: Sequence[NameMention], who: str, match: re.Match[str], end: int
) -> FactSpan | None:
    """The fact a verb match after `end` states about `who` (None: no usable object)."""
    index = next(i for i in range(len(_FACT_VERBS)) if match.group(f"p{i}") is not None)
    predicate = _FACT_VERBS[index][1]
    obj = _ARTICLE.sub("", match.group("obj").strip())
    if not obj or len(obj.split()) > 12:
        return None
    target = _object_entity(sentence, mentions, obj, match, end)
    if predicate != "by":
        return FactSpan(who, predicate, target or obj, target)
    if target is None:
        return None
    verb = match.group(f"p{index}").split()[-2].lower()
    return FactSpan(target, _PASSIVE[verb], who, who)


def _object_entity(
    sentence: str, mentions: Sequence[NameMention], obj: str, match: re.Match[str], end: int
) -> str | None:
    """The entity the object is: one named exactly so, else one the object starts with
    (followed only by its kind or a prepositional phrase)."""
    exact = next((o.name for o in mentions if normalize_name(o.name) == normalize_name(obj)), None)
    if exact:
        return exact
    obj_start = end + match.start("obj")
    lead = _ARTICLE.match(sentence[obj_start:])
    at = obj_start + (lead.end() if lead else 0)
    return next(
        (
            o.name
            for o in mentions
            if o.span[0] == at and _OBJECT_TAIL.fullmatch(sentence[o.span[1] : end + match.end()])
        ),
        None,
    )


def names_are_not_times(
    times: Sequence[TimeMatch], names: Sequence[NameMention]
) -> list[TimeMatch]:
    """The times that are not a known name written as one: a person called June or May
    ("Thanks, June!", "June: ...") is not the month. The matcher keeps such a name only
    where it is written as a name (`text.names.as_name`: "in June" stays a month)."""
    known = [m.span for m in names if m.known and is_word_name(normalize_name(m.name))]
    return [t for t in times if not any(s < t.span[1] and t.span[0] < e for s, e in known)]


def is_name(mention: NameMention, times: Sequence[TimeMatch]) -> bool:
    """False for a number or a date found where a name was looked for ("14", "June 14")."""
    if not any(c.isalpha() for c in mention.name):
        return False
    if mention.known:
        return True
    return not any(t.span[0] <= mention.span[0] and mention.span[1] <= t.span[1] for t in times)


def settled_facts(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """Facts without repeats; an ended fact first, so the one that replaces it follows it."""
    seen: set[tuple[str, str, str, datetime | None]] = set()
    out: list[ExtractedFact] = []
    for f in facts:
        key = (normalize_name(f.subject), f.predicate, normalize_name(f.object), f.valid_to)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return sorted(out, key=lambda f: f.valid_to is None)


# --- causal links -------------------------------------------------------------------------------

_C = r"(?P<cause>.+?)"
_E = r"(?P<effect>.+?)"
_END = r"\s*[.!?]*\s*$"
_CAUSAL: list[tuple[re.Pattern[str], float, bool]] = [
    # (pattern, confidence, cause is a "because" clause that an earlier event may explain)
    (re.compile(rf"^\s*(?:because(?:\s+of)?|due\s+to|as\s+a\s+result\s+of)\s+{_C},\s*{_E}{_END}", re.I), EXPLICIT_CONFIDENCE, True),
    (re.compile(rf"^{_E}\s+(?:was|were|is|are|got)\s+(?:caused|triggered)\s+by\s+{_C}{_END}", re.I), EXPLICIT_CONFIDENCE, False),
    (re.compile(rf"^{_E},?\s+because(?:\s+of)?\s+{_C}{_END}", re.I), EXPLICIT_CONFIDENCE, True),
    (re.compile(rf"^{_E},?\s+(?:due\s+to|owing\s+to|as\s+a\s+result\s+of)\s+{_C}{_END}", re.I), EXPLICIT_CONFIDENCE, True),
    (re.compile(rf"^{_C}\s+(?:caused|causes|cause|led\s+to|leads\s+to|lead\s+to|resulted\s+in|results\s+in|triggered|triggers)\s+{_E}{_END}", re.I), EXPLICIT_CONFIDENCE, False),
    (re.compile(rf"^{_C}[,;]?\s+(?:therefore|thus|hence|consequently),?\s+{_E}{_END}", re.I), EXPLICIT_CONFIDENCE, False),
    (re.compile(rf"^{_C}[,;]\s*so\s+(?!that\b){_E}{_END}", re.I), WEAK_CONFIDENCE, False),
]  # fmt: skip
_LEADING_RESULT = re.compile(
    r"^\s*(?:therefore|thus|hence|consequently|as\s+a\s+result|so)\b,?\s*(?P<effect>.+?)\s*[.!?]*\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CausalSpan:
    """A cause and an effect read from a sentence (or from it and the one before)."""

    cause: str
    effect: str
    confidence: float
    evidence: str
    explainable: bool = False  # the cause is a "because" clause: an earlier event may explain it


def causal_spans(sentence: str, previous: str | None) -> list[CausalSpan]:
    """Causal links stated in a sentence; "Therefore, B." links the previous sentence to B."""
    for pattern, confidence, explainable in _CAUSAL:
        m = pattern.match(sentence)
        if m is not None:
            cause, effect = _clean(m.group("cause")), _clean(m.group("effect"))
            if cause and effect:
                return [CausalSpan(cause, effect, confidence, sentence.strip(), explainable)]
    if previous:
        m = _LEADING_RESULT.match(sentence)
        if m is not None:
            cause, effect = _clean(previous), _clean(m.group("effect"))
            if cause and effect:
                evidence = f"{previous.strip()} {sentence.strip()}"
                confidence = (
                    WEAK_CONFIDENCE
                    if sentence.lstrip()[:2].lower() == "so"
                    else EXPLICIT_CONFIDENCE
                )
                return [CausalSpan(cause, effect, confidence, evidence)]
    return []


def _clean(span: str) -> str:
    span = re.sub(r",?\s+(?:which|that)\s*$", "", span.strip(), flags=re.IGNORECASE)
    span = span.strip().strip(",;:").strip()
    span = re.sub(r"[.!?]+$", "", span).strip()
    return _ARTICLE.sub("", span)


def strip_times(span: str, times: Sequence[TimeMatch]) -> str:
    """The span without the time expressions in it ("crashed at 14:30" -> "crashed")."""
    for tm in times:
        span = re.sub(
            r"\s*\b(?:at|on|in|around|during|by)?\s*" + re.escape(tm.text), "", span, flags=re.I
        )
    return " ".join(span.split()).strip(" ,;")


# --- concepts and category ----------------------------------------------------------------------

_WORD = re.compile(rf"[{LETTER}][{LETTER}\-']+")
_NOT_CONCEPT = words(
    """
    missing new old also now still really some thing things something anything way lot lots
    yes okay today yesterday tomorrow week month year morning afternoon evening night time
    please thanks hello note notes went got made make said says like well back again later
    because since therefore thus hence consequently caused causes cause led leads lead result
    resulted results due owing then when while after before until works work working owns own
    uses use used run runs check set get need needs needed want wants wanted
    better best worse worst instead great good nice bad pretty little big sure think
    thought feel felt feeling know knew maybe probably actually definitely awesome amazing
    cool love loved loves glad happy excited fun kind stuff hey hello wow yeah yep thank
    congrats congratulations sorry haha lol omg okay super totally much many always never
    sometimes often usually ever even though almost quite rather enough else other another
    same different whole able going gonna wanna tried try trying look looking looks seem
    seems seemed gets getting lets doing done being having say saying tell told ask asked
    talk talked went goes gone come came take took give gave keep kept put find found see
    saw seen hear heard mean meant hope wish guess bit sort true right sounds sound one two
    three four five six seven eight nine ten first second third last next ago soon since
    mine yours hers ours theirs myself yourself himself herself ourselves themselves
    ran lives living lived stay stayed mon tue tues wed thu thur thurs fri sat sun jan feb
    mar apr jun jul aug sep sept oct nov dec hmm aww anyway honestly
    during within without across against about above below around through throughout
    toward towards upon among amongst between behind beyond despite except inside outside
    onto per via whether whose which where there here these those such unless although
    depends depend depended depending reports reporting includes include including
    contains contain requires require provides provide allows allow means becomes become
    happens happen shows show returns sends calls handles starts stops fails takes makes
    gives keeps helps tells asks says wants needs seems lets gets sets puts runs uses
    owns moves moving plans planning """
)
_VERB_FORM = re.compile(r"[a-z]{3,}(?<!e)ed")  # "returned", "rolled": verbs, not ideas
_QUALITY = re.compile(r"[a-z]{3,}(?:ful|ous)")  # "powerful", "nervous": how, not what


def concepts_of(
    text: str, mentions: Sequence[NameMention], times: Sequence[TimeMatch], limit: int
) -> list[tuple[str, str]]:
    """Up to `limit` salient noun-like phrases (1-3 words) with the sentence each first appears in.

    Entity names, times, stop words and event verbs are left out; phrases are
    ranked by frequency, longer phrases first on ties.
    """
    blocked = sorted([m.span for m in mentions] + [t.span for t in times])
    phrases = _count_phrases(text, blocked)
    chosen = _most_salient(phrases, limit)
    spans = sentence_spans(text)
    out: list[tuple[str, str]] = []
    for phrase in chosen:
        at = phrases.first_at[phrase]
        sentence = next((text[s:e] for s, e in spans if s <= at < e), "")
        out.append((phrase, sentence.strip()[:300]))
    return out


@dataclass
class _PhraseCounts:
    """How often each 1-3 word phrase of concept words occurs, and where it first does."""

    counts: Counter[str] = field(default_factory=lambda: Counter[str]())
    first_at: dict[str, int] = field(default_factory=lambda: {})
    run: list[tuple[str, int]] = field(default_factory=lambda: [])

    def flush(self) -> None:
        """Count the phrases of the current run of concept words, then start a new run."""
        for n in (3, 2, 1):
            for i in range(len(self.run) - n + 1):
                phrase = " ".join(w for w, _ in self.run[i : i + n])
                self.counts[phrase] += 1
                self.first_at.setdefault(phrase, self.run[i][1])
        self.run.clear()


def _count_phrases(text: str, blocked: list[tuple[int, int]]) -> _PhraseCounts:
    """Runs of concept words, broken by names, times, punctuation and other words."""
    phrases = _PhraseCounts()
    last_end = 0
    for m in _WORD.finditer(text):
        word = m.group(0).lower().strip("'-")
        gap = text[last_end : m.start()]
        last_end = m.end()
        in_name = any(s < m.end() and m.start() < e for s, e in blocked)
        if in_name or re.search(r"[^\s]", gap):
            phrases.flush()
        if in_name or not _concept_word(word):
            phrases.flush()
            continue
        phrases.run.append((word, m.start()))
    phrases.flush()
    return phrases


def _concept_word(word: str) -> bool:
    """A word that can be part of a concept: no stop word, event verb, verb form or adverb."""
    return not (
        len(word) < 3
        or word in STOP_WORDS
        or word in _NOT_CONCEPT
        or _EVENT_VERBS.fullmatch(word)
        or _VERB_FORM.fullmatch(word)
        or _QUALITY.fullmatch(word)
        or word.endswith("ly")
    )


def _most_salient(phrases: _PhraseCounts, limit: int) -> list[str]:
    """Phrases by frequency (longer ones weigh more), none inside another chosen one."""
    counts, first_at = phrases.counts, phrases.first_at
    ranked = sorted(
        counts, key=lambda p: (-counts[p] * (1 + 0.5 * (len(p.split()) - 1)), first_at[p])
    )
    chosen: list[str] = []
    for phrase in ranked:
        if any(phrase in c or c in phrase for c in chosen):
            continue
        chosen.append(phrase)
        if len(chosen) >= limit:
            break
    return chosen


def category_of(text: str, sentences: Sequence[str], has_events: bool) -> MemoryCategory:
    """Procedural for instructions, episodic for things that happened, else semantic."""
    imperative = 0
    for sentence in sentences:
        first = sentence.split(maxsplit=1)[0].lower().strip(",.:;") if sentence.split() else ""
        if first in _IMPERATIVES and not _PAST.search(sentence):
            imperative += 1
    if _PROCEDURAL.search(text) or (sentences and imperative * 2 >= len(sentences)):
        return MemoryCategory.PROCEDURAL
    return MemoryCategory.EPISODIC if has_events else MemoryCategory.SEMANTIC
