"""MAGMA step 1: classify a question into an `Intent` (rules, or an LLM with the rules as fallback)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from polyg_shared.intents import (
    MAX_DEPTH,
    MIN_DEPTH,
    CausalDirection,
    DepthHints,
    Intent,
    IntentType,
    Timeframe,
    default_depth_hints,
)
from polyg_shared.timeutil import parse_timestamp
from polyg_shared.types import MAX_NAME, MAX_TEXT
from pydantic import BaseModel, ConfigDict, ValidationError

from polyg_core.providers.llm.base import LLM, Usage
from polyg_core.providers.llm.fallback import StepWork, ask_or_rules
from polyg_core.recall.classifier_prompt import CLASSIFIER_SYSTEM, classifier_user
from polyg_core.recall.multihop import asks_to_gather
from polyg_core.text.names import (
    STOP_WORDS,
    EntityMatcher,
    KnownEntities,
    NameMention,
    find_names,
    is_word_name,
    words,
)
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import match_times, parse_timeframe

__all__ = [
    "DEFAULT_CLASSIFIER_MAX_TOKENS",
    "ClassifyOutcome",
    "IntentDraft",
    "LLMClassifier",
    "RuleClassifier",
    "check_intent",
    "classify",
]

DEFAULT_CLASSIFIER_MAX_TOKENS = 1000
_MAX_QUESTION = 4_000  # longer questions are classified on their first 4,000 characters

_TIME_POSITION = r"\bbefore\b|\bafter\b|\bsince\b|\bduring\b|\bhappened\b|\boccurred\b"
# "when" asks a time unless it opens a clause inside a question for a thing, a person, a
# place or an amount ("What seat do I pick when booking?", "Who covers when Ana is away?",
# "How much did Bo charge when he put up the shelves?"), or of
# what one is doing ("Should I take the stairs or the lift when visiting?").
# "Back when Ana had hens, what was her diet?", "When we lived in Leeds, who was our GP?":
# a clause of time before the comma, and the question after it asks for a value.
_ASKS_AFTER = r"[^,?]*,\s*(?:what|which|who|whom|whose|where|how\s+(?:much|many))\b"
_WHEN_CLAUSE = r"^(?:[^,?]*\bwhen\b[^,?]*,\s*)?"
# "How much is the rent?" asks an amount; "how much time" a duration.
_HOW_MUCH = r"\W*how\s+much\b(?!\s+time\b)"
_WHEN_INSIDE = (
    r"^(?!\W*(?:what|which|who|whom|whose|where|how\s+(?:much|many))\b"
    r"(?!\s+(?:time|date|day)s?\b)).*"
    rf"\bwhen\b(?!\s+\w+ing\b)(?!{_ASKS_AFTER})"
)
# (pattern, type, weight, direction). A leading question word weighs most; "what" least,
# because it opens questions of every kind.
_CUES: list[tuple[re.Pattern[str], IntentType, float, CausalDirection | None]] = [
    (re.compile(p, re.IGNORECASE), t, w, d)
    for p, t, w, d in [
        (r"^\W*why\b", IntentType.WHY, 3.0, CausalDirection.UPSTREAM),
        (r"\bwhy\b", IntentType.WHY, 2.0, CausalDirection.UPSTREAM),
        (r"\bhow come\b", IntentType.WHY, 3.0, CausalDirection.UPSTREAM),
        (r"\b(?:root )?caus(?:e|es|ed|ing)\b", IntentType.WHY, 2.0, CausalDirection.UPSTREAM),
        (r"\bbecause\b|\breasons?\b|\bled to\b|\bdue to\b", IntentType.WHY, 2.0, None),
        (
            r"\bfail\w*|\bcrash\w*|\bbr(?:oke|oken|eak)\b|\boutage|\bdown\b",
            IntentType.WHY,
            1.5,
            None,
        ),
        (r"\berrors?\b|\bincidents?\b|\bbug\b|\bexplain\b", IntentType.WHY, 1.0, None),
        (
            r"\bwhat (?:would )?happens? (?:if|when)\b|\bwhat if\b",
            IntentType.WHY,
            3.5,
            CausalDirection.DOWNSTREAM,
        ),
        (
            r"\bimpacts?\b|\beffects? of\b|\bconsequences?\b|\bresult(?:s|ed)? in\b|\baffect(?:s|ed)?\b",
            IntentType.WHY,
            3.0,
            CausalDirection.DOWNSTREAM,
        ),
        (rf"^\W*when\b(?!{_ASKS_AFTER})", IntentType.WHEN, 3.0, None),
        # "What happened to X (during Y)?" asks for events, not causes or a description.
        (r"^\W*what (?:has |had |else )?happen(?:ed|s)?\b", IntentType.WHEN, 3.0, None),
        # "What seat do I pick when booking?": a clause inside a question for a thing.
        (_WHEN_INSIDE, IntentType.WHEN, 2.0, None),
        (r"\btimeline\b|\bchronolog\w*|\bwhat time\b|\bhow long\b", IntentType.WHEN, 2.5, None),
        # A duration or a frequency is a WHEN answer's shape, whatever the question is about.
        (
            r"^\W*how (?:long|often|frequently|many times|soon)\b",
            IntentType.WHEN,
            3.5,
            None,
        ),
        (r"\bdates?\b|\bhistory\b|\bsequence\b", IntentType.WHEN, 2.0, None),
        (_TIME_POSITION, IntentType.WHEN, 1.0, None),
        (rf"{_WHEN_CLAUSE}\W*(?:who|whom|whose)\b", IntentType.WHO, 3.0, None),
        (r"\b(?:who|whom|whose)\b", IntentType.WHO, 2.0, None),
        (r"\bowners?\b|\bowns?\b|\bowned\b|\bresponsible\b", IntentType.WHO, 2.0, None),
        (
            r"\bpersons?\b|\bpeople\b|\bteams?\b|\bmaintain\w*|\bassigned\b",
            IntentType.WHO,
            1.5,
            None,
        ),
        (rf"{_WHEN_CLAUSE}\W*(?:what|which)\b", IntentType.WHAT, 1.0, None),
        # "Where does X live?", "How does X take her tea?" ask for a value.
        (rf"{_WHEN_CLAUSE}\W*where\b", IntentType.WHAT, 3.0, None),
        (r"^\W*how (?:do|does|did|is|are|was|were)\b", IntentType.WHAT, 2.0, None),
        (rf"{_WHEN_CLAUSE}{_HOW_MUCH}", IntentType.WHAT, 2.0, None),
        (r"\bdescribe\b|\bstatus\b|\bdefinition\b", IntentType.WHAT, 2.0, None),
        (r"\bwhat (?:is|are)\b", IntentType.WHAT, 1.0, None),
        (r"\bworking on\b|\bworks on\b|\bdepends? on\b|\bconfigured\b", IntentType.WHAT, 1.5, None),
        (
            r"\btell me (?:about|everything)\b|\bwhat do (?:we|you) know\b|\boverview\b"
            r"|\bsummar\w*|\beverything about\b|\banything about\b|\bexplore\b",
            IntentType.EXPLORE,
            3.0,
            None,
        ),
    ]
]
_TIMEFRAME_WEIGHT = 1.5  # a time expression in the question leans towards WHEN
# A question for a value held at a time ("Where did Ana live in 2024?", "What did Ana work
# on before June?", "How did Ana take her tea before?"): WHAT or WHO at that time, not WHEN.
_ASKS_VALUE = re.compile(
    r"^\W*(?:what|which|who|whom|whose|where"
    r"|how\s+(?!long\b|often\b|frequently\b|many\b|much\s+time\b|soon\b|come\b)\w+)\b",
    re.IGNORECASE,
)
_ASKS_A_TIME = re.compile(
    rf"{_WHEN_INSIDE}|\b(?:what|which)\s+(?:time|date|day|week|month|year|season)s?\b"
    r"|\bhow\s+(?:long|often|soon)\b|\btimeline\b|\bchronolog"
    r"|^\W*what\s+(?:(?:has|had|else)\s+)?(?:happen|occur|went\s+on|was\s+going\s+on)",
    re.IGNORECASE,
)


_ASKS_AMOUNT = re.compile(rf"^{_HOW_MUCH}", re.IGNORECASE)


def asks_value_at_time(question: str) -> bool:
    """True when the question asks for a thing, place, person or manner (what, which,
    who, where, how did ...) rather than for a time or for what happened: a time in it
    says when the value held, not what is asked."""
    return _ASKS_VALUE.search(question) is not None and _ASKS_A_TIME.search(question) is None


_TIE_ORDER = [IntentType.WHY, IntentType.WHEN, IntentType.WHO, IntentType.WHAT, IntentType.EXPLORE]

_MULTI_HOP = re.compile(
    r"\b(?:related to|relationship between|connected|connection between|chain|path|via|through"
    r"|indirectly|and then|which (?:led|caused)|led to .* which|of the .* of)\b",
    re.IGNORECASE,
)
_CUE_WORDS = words(
    """
    why when who whom whose what which how come cause causes caused reason reasons tell
    describe explain timeline status happened happen happens did does do is are was were
    """
)
_WORD = re.compile(r"[\w][\w.\-/@#']*[\w]|\w")
# Words that hedge a question ("Would Alice likely ...?", "What might Bob ...?"): they ask
# for an inference and are never in what was said, so the search phrase leaves them out.
HEDGE_WORDS = words(
    """
    would could might likely unlikely probably possibly perhaps maybe potentially considered
    """
)
_INFERENTIAL = re.compile(
    r"^\W*(?:would|could|might)\b"
    r"|\b(?:likely|unlikely|probably|possibly|perhaps|maybe|potentially|might)\b",
    re.IGNORECASE,
)


_HISTORY = re.compile(
    r"\bhow (?:has|have|did|had) .+? (?:change|changed|evolve|evolved)\b"
    r"|\bwhat (?:was|were) .+? (?:before|previously|originally)\b"
    r"|\b(?:history|evolution) of\b|\bover time\b|\bchanges? (?:to|in|of) (?:the )?\w"
    # "How did X take her tea before?": the value before the current one.
    r"|^\W*(?:how|what|which|where|who)\b.*\b(?:before|previously|formerly|originally)\W*$"
    r"|(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)(?<!\bbeen\s)\bused to\b",
    re.IGNORECASE,
)


def asks_history(question: str) -> bool:
    """True when the question asks how something changed ("How has X changed?", "what
    was X before", "history of X"), which recall answers from the facts' versions."""
    return _HISTORY.search(question) is not None


def is_inferential(question: str) -> bool:
    """Whether the question asks what would or might be rather than what was said."""
    return _INFERENTIAL.search(question) is not None


def without_hedges(text: str) -> str:
    """`text` without its hedging words (see `HEDGE_WORDS`); unchanged when it has none."""
    kept = [w for w in text.split() if w.strip("\"'?!.,;:()").lower() not in HEDGE_WORDS]
    return " ".join(kept) if kept else text


@dataclass(frozen=True)
class RuleClassifier:
    """Classifies questions from cue words, known entity names and time expressions; no LLM.

    Types come from weighted cue words (a leading "why/when/who" weighs most),
    entities from known names in any spelling plus new name-like words, the
    timeframe from `timeparse`, depths from seed 001's table. Never raises.
    """

    def classify(
        self,
        question: str,
        known_entities: KnownEntities | EntityMatcher = (),
        reference: datetime | None = None,
    ) -> Intent:
        """Classify one question against the reference time (now, UTC, when not given)."""
        matcher = (
            known_entities
            if isinstance(known_entities, EntityMatcher)
            else EntityMatcher.from_known(known_entities)
        )
        ref = reference or datetime.now(UTC)
        text = question[:_MAX_QUESTION]
        names = find_names(text, matcher)
        timed = _without_word_names(text, names)
        timeframe = parse_timeframe(timed, ref)
        entities = _entities(names, ref, timed)
        # A value of someone or something at a time; with nothing named, "What was true
        # on 2024-03-15?" asks for that time's state, a WHEN answer, but "How much was I
        # paying last year?" an amount.
        value_at_time = (bool(entities) or _ASKS_AMOUNT.search(text) is not None) and (
            asks_value_at_time(text)
        )
        cues = _cue_scores(text, value_at_time)
        if timeframe is not None and not value_at_time:
            # A time leans towards WHEN, unless the question asks for a thing or a person
            # about someone ("What did Alice paint in July?" asks what, in July; "What was
            # true on 2024-03-15?" asks for that time's state).
            cues.scores[IntentType.WHEN] += _TIMEFRAME_WEIGHT
        best, confidence = cues.pick()
        multi_hop = (
            len(entities) >= 2 or _MULTI_HOP.search(text) is not None or asks_to_gather(text)
        )
        return Intent(
            type=best,
            entities=entities,
            timeframe=timeframe,
            causal_direction=cues.causal_direction(best),
            depth_hints=default_depth_hints(best),
            semantic_query=_semantic_query(text, ref),
            confidence=confidence,
            multi_hop=multi_hop,
            inferential=is_inferential(text),
            history=asks_history(text),
        )


def _without_word_names(text: str, names: list[NameMention]) -> str:
    """The question with known names that are also words blanked where they are written
    as names, for reading its times: "What is June's job?" names no month."""
    for m in names:
        if m.known and is_word_name(normalize_name(m.name)):
            start, end = m.span
            text = text[:start] + " " * (end - start) + text[end:]
    return text


def _entities(names: list[NameMention], ref: datetime, timed: str) -> list[str]:
    """The names the question mentions (`names`, found in it); a time expression is never
    an entity ("Jan 5", "Q4 2025", "Monday"). `timed` is the text its times are read from."""
    time_spans = [tm.span for tm in match_times(timed, ref)]
    mentions = [m for m in names if not any(s < m.span[1] and m.span[0] < e for s, e in time_spans)]
    return _dedupe([m.name for m in mentions])


@dataclass
class _CueScores:
    """Each type's weight from the question's cue words, the type its leading word names,
    and the causal direction its cues point to."""

    scores: dict[IntentType, float]
    lead: IntentType | None = None
    direction: CausalDirection | None = None

    def pick(self) -> tuple[IntentType, float]:
        """The heaviest type (the leading word's, then the tie order, on a tie) and the
        classification's confidence; EXPLORE when no cue matched."""
        ranked = sorted(
            self.scores.items(),
            key=lambda kv: (-kv[1], kv[0] != self.lead, _TIE_ORDER.index(kv[0])),
        )
        (best, top), (_, runner_up) = ranked[0], ranked[1]
        if top <= 0:
            best = IntentType.EXPLORE
        return best, _confidence(top, top - runner_up)

    def causal_direction(self, best: IntentType) -> CausalDirection:
        if best == IntentType.WHY:
            return self.direction or CausalDirection.UPSTREAM
        if self.direction == CausalDirection.DOWNSTREAM:
            return self.direction
        return CausalDirection.BOTH


def _cue_scores(text: str, value_at_time: bool) -> _CueScores:
    cues = _CueScores(dict.fromkeys(IntentType, 0.0))
    for pattern, intent_type, weight, cue_direction in _CUES:
        if value_at_time and pattern.pattern == _TIME_POSITION:
            continue  # "before June" places the asked value in time; it does not ask one
        if not pattern.search(text):
            continue
        cues.scores[intent_type] += weight
        if pattern.pattern.startswith("^") and cues.lead is None and weight >= 3.0:
            cues.lead = intent_type
        if cue_direction is not None and (
            cues.direction is None or cue_direction == CausalDirection.DOWNSTREAM
        ):
            cues.direction = cue_direction
    return cues


def _confidence(top: float, margin: float) -> float:
    if top <= 0:
        return 0.3
    value = 0.5 + 0.1 * min(top, 4.0)
    if margin < 1.0:
        value -= 0.15
    return round(min(0.9, max(0.3, value)), 2)


def _dedupe(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        name = name.strip()[:MAX_NAME]
        key = normalize_name(name)
        if name and key and key not in seen:
            seen.add(key)
            out.append(name)
    return out


def _semantic_query(text: str, reference: datetime) -> str:
    """The question without question words, stop words and its time expressions."""
    stripped = text
    for tm in reversed(match_times(text, reference)):
        stripped = stripped[: tm.span[0]] + " " + stripped[tm.span[1] :]
    words = [
        w
        for w in _WORD.findall(stripped)
        if w.lower() not in STOP_WORDS
        and w.lower() not in _CUE_WORDS
        and w.lower() not in HEDGE_WORDS
    ]
    query = " ".join(words) if words else " ".join(text.split())
    return query[:MAX_TEXT]


class DraftDepthHints(BaseModel):
    """Depth hints as an LLM may give them: any integers, any missing."""

    model_config = ConfigDict(extra="ignore")

    semantic: int | None = None
    entity: int | None = None
    temporal: int | None = None
    causal: int | None = None


class IntentDraft(BaseModel):
    """The classifier's LLM output before checking: lenient, every field optional."""

    model_config = ConfigDict(extra="ignore")

    type: str | None = None
    entities: list[str] | None = None
    timeframe_phrase: str | None = None
    timeframe_start: str | None = None
    timeframe_end: str | None = None
    causal_direction: str | None = None
    depth_hints: DraftDepthHints | None = None
    semantic_query: str | None = None
    confidence: float | None = None
    multi_hop: bool | None = None


@dataclass(frozen=True)
class ClassifyOutcome:
    """A classification, whether it came from the rules instead of the LLM, and what it cost."""

    intent: Intent
    degraded: bool = False
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class LLMClassifier:
    """Classifies with an LLM; its draft is checked and completed with the rule classifier.

    Raises ProviderError from `classify` when the LLM fails; `classify()` (the
    module function) turns that into a degraded rule-based answer.
    """

    llm: LLM
    max_tokens: int = DEFAULT_CLASSIFIER_MAX_TOKENS
    rules: RuleClassifier = field(default_factory=RuleClassifier)

    async def classify(
        self, question: str, known_entities: KnownEntities = (), reference: datetime | None = None
    ) -> tuple[Intent, Usage]:
        """Classify with the LLM.

        Raises:
            ProviderError: the LLM failed after its retries.
        """
        ref = reference or datetime.now(UTC)
        known = list(known_entities)
        matcher = EntityMatcher.from_known(known)
        fallback = self.rules.classify(question, matcher, ref)
        result = await self.llm.complete_json(
            system=CLASSIFIER_SYSTEM,
            user=classifier_user(question[:_MAX_QUESTION], list(matcher.by_key.values()), ref),
            schema=IntentDraft,
            max_tokens=self.max_tokens,
        )
        return check_intent(result.value, fallback, matcher, ref), result.usage


def _clamp_depth(value: int | None, default: int) -> int:
    if value is None:
        return default
    return max(MIN_DEPTH, min(MAX_DEPTH, value))


def _draft_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _check_timeframe(draft: IntentDraft, fallback: Intent, ref: datetime) -> Timeframe | None:
    start, end = _draft_time(draft.timeframe_start), _draft_time(draft.timeframe_end)
    phrase = (draft.timeframe_phrase or "").strip()[:MAX_TEXT] or None
    if start is None and end is None:
        # The LLM named a time but did not resolve it (or resolved it badly): resolve it here.
        resolved = parse_timeframe(phrase, ref) if phrase else None
        return resolved or fallback.timeframe
    if start is not None and end is not None and start > end:
        start, end = end, start
    return Timeframe(start=start, end=end, phrase=phrase)


def check_intent(
    draft: IntentDraft, fallback: Intent, matcher: EntityMatcher, reference: datetime
) -> Intent:
    """Turn an LLM draft into a valid Intent: unknown values replaced by the rule classifier's,
    depths clamped to 1..5, confidence clamped to 0..1, entity names mapped to known names
    (and known names the rules found added)."""
    try:
        intent_type = IntentType((draft.type or "").strip().upper())
    except ValueError:
        intent_type = fallback.type
    try:
        direction = CausalDirection((draft.causal_direction or "").strip().lower())
    except ValueError:
        direction = (
            fallback.causal_direction
            if intent_type == fallback.type
            else (
                CausalDirection.UPSTREAM if intent_type == IntentType.WHY else CausalDirection.BOTH
            )
        )
    defaults = default_depth_hints(intent_type)
    hints = draft.depth_hints or DraftDepthHints()
    depth_hints = DepthHints(
        semantic=_clamp_depth(hints.semantic, defaults.semantic),
        entity=_clamp_depth(hints.entity, defaults.entity),
        temporal=_clamp_depth(hints.temporal, defaults.temporal),
        causal=_clamp_depth(hints.causal, defaults.causal),
    )
    names: list[str] = []
    for raw in draft.entities or []:
        key = normalize_name(raw)
        names.append(matcher.by_key.get(key, raw))
    names.extend(n for n in fallback.entities if normalize_name(n) in matcher.by_key)
    entities = _dedupe(names)
    confidence = draft.confidence
    if confidence is None or math.isnan(confidence):
        confidence = fallback.confidence
    query = (draft.semantic_query or "").strip()[:MAX_TEXT] or fallback.semantic_query
    multi_hop = draft.multi_hop if draft.multi_hop is not None else fallback.multi_hop
    try:
        timeframe = _check_timeframe(draft, fallback, reference)
    except ValidationError:
        timeframe = fallback.timeframe
    return Intent(
        type=intent_type,
        entities=entities,
        timeframe=timeframe,
        causal_direction=direction,
        depth_hints=depth_hints,
        semantic_query=query,
        confidence=max(0.0, min(1.0, confidence)),
        multi_hop=multi_hop or len(entities) >= 2,
        inferential=fallback.inferential,
    )


async def classify(
    question: str,
    known_entities: KnownEntities = (),
    reference: datetime | None = None,
    *,
    llm: LLM | None = None,
    max_tokens: int = DEFAULT_CLASSIFIER_MAX_TOKENS,
) -> ClassifyOutcome:
    """Classify a question with the LLM when one is given, else (or when it fails) with rules.

    Args:
        question: the user's question.
        known_entities: (name, normalized key) pairs or names of entities in the memory.
        reference: the time relative phrases are resolved against (aware; now in UTC if None).
        llm: the model to ask; None uses the rule classifier and marks the outcome degraded.
        max_tokens: the LLM's output budget.

    Returns:
        The intent; `degraded` is True with a `reason` whenever the rules answered.
    """
    ref = reference or datetime.now(UTC)
    known = list(known_entities)

    async def ask(model: LLM) -> tuple[Intent, Usage]:
        intent, usage = await LLMClassifier(model, max_tokens).classify(question, known, ref)
        return intent.model_copy(update={"history": asks_history(question)}), usage

    got = await ask_or_rules(
        _CLASSIFY, llm, ask, lambda: RuleClassifier().classify(question, known, ref)
    )
    return ClassifyOutcome(got.value, got.degraded, got.reason, got.usage)


_CLASSIFY = StepWork("classify", "classification")
