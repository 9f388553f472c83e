"""The extractive answer: what the merged subgraph says about the question, shaped by its type.

* WHEN: the time of the asked event as people write it (a relative date in the evidence
  resolved against when it was stated, `answer_time`), then only a short record of the
  event; the events around it go to the reasoning. "How long" gets the stated duration;
  "what happened in/to/during ..." lists those events in order.
* WHO / WHAT: the asked entity's facts and relations, the ones the question's words point
  at first; facts valid during the asked timeframe, else the current ones. From a quoted
  sentence, the asked span when the question wants a short thing (`answer_span`).
* WHY: the causal chain whose effect the question names, read from cause to effect.
* EXPLORE: the top memories, in a few sentences.

Every answer carries the evidence its confidence is computed from (`Evidence`); see
`polyg_core.retrieval.confidence`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache

from polyg_core.retrieval.answer_span import asked_span, asks_span
from polyg_core.retrieval.answer_text import (
    SPEAKER,
    as_sentence,
    best_sentence,
    format_time,
    overlap,
    short_time,
    terms,
)
from polyg_core.retrieval.answer_time import (
    Dated,
    asks_time,
    duration_in,
    is_how_long,
    is_midnight,
    resolve,
)
from polyg_core.retrieval.confidence import Evidence
from polyg_core.text import normalize_name
from polyg_shared.intents import Intent, IntentType, Timeframe
from polyg_shared.retrieval import CausalStep, ContextEdge, ContextNode, MergedSubgraph, Reasoning
from polyg_shared.timeutil import to_epoch_ms

MAX_LISTED = 8
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 2
CONTEXT_WINDOW_MS = 12 * 3600 * 1000
MAX_STATEMENTS = 6
MAX_MEMORIES = 3
SHORT_CONTEXT_WORDS = 8  # a WHEN answer repeats its event only when it is this short

_COMPOUND = re.compile(
    r"\w.*\b(?:and|but|also)\s+(?:who|whom|what|when|where|why|how|which)\b", re.IGNORECASE
)
_HAPPENED = re.compile(r"^\W*what\s+(?:has\s+|had\s+|else\s+)?happen(?:ed|s)?\b", re.IGNORECASE)


@dataclass
class Answer:
    """The extractive answer with its reasoning, sources and evidence."""

    text: str
    reasoning: Reasoning = field(default_factory=Reasoning)
    sources: list[str] = field(default_factory=list[str])
    evidence: Evidence = field(default_factory=Evidence)


@dataclass
class _Graph:
    """The merged subgraph with lookups the answers need."""

    sub: MergedSubgraph
    now_ms: int
    by_id: dict[str, ContextNode] = field(init=False)
    involves: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {n.uuid: n for n in self.sub.nodes}
        self.involves = {}
        for e in self.sub.edges:
            if e.type in ("X_INVOLVES", "X_AFFECTS") and e.target in self.by_id:
                self.involves.setdefault(e.source, set()).add(e.target)

    def of(self, label: str) -> list[ContextNode]:
        return [n for n in self.sub.nodes if n.label == label]

    def names_of(self, node: ContextNode) -> set[str]:
        """Normalised names of the entities a node involves (linked, or named in its text)."""
        return {normalize_name(self.by_id[u].text) for u in self.involves.get(node.uuid, set())}

    def mentions(self, node: ContextNode, key: str) -> bool:
        return key in self.names_of(node) or _names_in(key, node.text)


_NAME_WORD = re.compile(r"[\w'’.-]+")
_NAME_WORDS = 4  # the longest name looked for in a text, in words


@lru_cache(maxsize=4096)
def _names_of_text(text: str) -> frozenset[str]:
    """Every run of up to four words of `text`, normalised as names are ("auth service"
    and "auth-service" alike), so an asked name is found inside a sentence."""
    words = [w.strip(".'’-") for w in _NAME_WORD.findall(text)]
    words = [w for w in words if w]
    out: set[str] = set()
    for i in range(len(words)):
        for j in range(i + 1, min(i + _NAME_WORDS, len(words)) + 1):
            out.add(normalize_name(" ".join(words[i:j])))
    out.discard("")
    return frozenset(out)


def _names_in(key: str, text: str) -> bool:
    return bool(key) and key in _names_of_text(text)


# -- times ------------------------------------------------------------------------------------


def _time_ms(node: ContextNode) -> int | None:
    for key in ("occurred_at", "valid_from", "created_at"):
        value = node.attributes.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return None


def _in_window(ms: int | None, tf: Timeframe | None) -> bool:
    if ms is None or tf is None:
        return False
    return (tf.start is None or ms >= to_epoch_ms(tf.start)) and (
        tf.end is None or ms <= to_epoch_ms(tf.end)
    )


def _fact_valid(node: ContextNode, tf: Timeframe | None, now_ms: int) -> bool:
    """Valid at some time in the timeframe; without one, valid now."""
    begin = node.attributes.get("valid_from")
    stop = node.attributes.get("valid_to")
    begin = int(begin) if isinstance(begin, int | float) else None
    stop = int(stop) if isinstance(stop, int | float) else None
    if tf is None or (tf.start is None and tf.end is None):
        return (begin is None or begin <= now_ms) and (stop is None or stop > now_ms)
    lo = to_epoch_ms(tf.start) if tf.start else None
    hi = to_epoch_ms(tf.end) if tf.end else None
    return (hi is None or begin is None or begin <= hi) and (
        lo is None or stop is None or stop > lo
    )


# -- the question -----------------------------------------------------------------------------


@dataclass
class _Question:
    text: str
    intent: Intent
    wanted: set[str]  # the question's content terms
    entity_keys: list[str]  # normalised asked entity names, in question order
    about: set[str]  # content terms that are not part of an asked entity's name

    @classmethod
    def of(cls, text: str, intent: Intent) -> _Question:
        query = intent.semantic_query if intent.semantic_query.strip() else text
        wanted = terms(query) or terms(text)
        if intent.timeframe and intent.timeframe.phrase:
            wanted -= terms(intent.timeframe.phrase)
        keys = [normalize_name(e) for e in intent.entities if normalize_name(e)]
        name_terms: set[str] = set()
        for e in intent.entities:
            name_terms |= terms(e)
        return cls(text, intent, wanted, keys, wanted - name_terms)


# -- WHEN -------------------------------------------------------------------------------------


def _dated(g: _Graph) -> list[ContextNode]:
    events = g.of("T_Event")
    memories = [n for n in g.of("S_Memory") if _time_ms(n) is not None]
    return events + memories or [n for n in g.of("T_Fact") if _time_ms(n) is not None]


def _relevance(q: _Question, g: _Graph, node: ContextNode, best_score: float) -> float:
    words = overlap(q.wanted, node.text)
    named = (
        sum(1 for k in q.entity_keys if g.mentions(node, k)) / len(q.entity_keys)
        if q.entity_keys
        else 0.0
    )
    return words + 0.5 * named + 0.2 * (node.score / best_score if best_score else 0.0)


def _when(q: _Question, g: _Graph) -> Answer:
    cands = _dated(g)
    tf = q.intent.timeframe
    if not cands:
        return Answer(
            "Nothing in memory is dated for this question.", evidence=Evidence(found=False)
        )
    if _HAPPENED.search(q.text) or not q.about:
        return _happened(q, g, cands)
    best_score = max(n.score for n in cands) or 1.0
    ranked = sorted(
        cands,
        key=lambda n: (
            _in_window(_time_ms(n), tf) if tf else True,
            _relevance(q, g, n, best_score),
        ),
        reverse=True,
    )
    best = ranked[0]
    at = _time_ms(best)
    assert at is not None
    sentence = _unspoken(best_sentence(q.wanted, best.text))
    context = _around(g, best, [n for n in cands if n.label == best.label])
    lines = [f"{short_time(t)}: {n.text}" for n, t in context]
    duration = duration_in(sentence) if is_how_long(q.text) else None
    dated = _dated_phrase(g, best, sentence, at)
    if duration is not None:
        text = as_sentence(duration)
    else:
        text = dated.phrase
        if _record(best, sentence):
            text += f": {sentence}"
        text = as_sentence(text)
    rel = overlap(q.wanted, best.text)
    runner = max((overlap(q.wanted, n.text) for n in ranked[1:]), default=0.0)
    same_day = sum(
        1
        for n in ranked[1:4]
        if (t := _time_ms(n)) is not None
        and abs(t - at) < 86_400_000
        and overlap(q.about, n.text) > 0
    )
    evidence = Evidence(
        quoted=best.label == "S_Memory",
        match=rel,
        entity=_entity_found(q, g, best),
        time=(1.0 if _in_window(dated.start_ms, tf) or _in_window(at, tf) else 0.0) if tf else None,
        agreement=max(len(best.views), 1) + same_day,
        margin=max(0.0, rel - runner),
        shaped=duration is not None if is_how_long(q.text) else asks_time(q.text),
    )
    timeline = [f"{short_time(at)}: {best.text}", *lines]
    return Answer(
        text,
        Reasoning(temporal_context=sorted(timeline)),
        [best.uuid, *(n.uuid for n, _ in context)],
        evidence,
    )


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|me|my|we|we're|our|us|you|your)\b", re.IGNORECASE)


def _record(node: ContextNode, sentence: str) -> bool:
    """A short record of an event ("Auth service crashed on startup"), worth repeating after
    its time; a quote of someone's words is not (it stays in the reasoning)."""
    return (
        node.label == "T_Event"
        and SPEAKER.match(node.text) is None
        and len(sentence.split()) <= SHORT_CONTEXT_WORDS
        and _FIRST_PERSON.search(sentence) is None
    )


def _unspoken(sentence: str) -> str:
    """The sentence without its leading "Speaker: "."""
    speaker = SPEAKER.match(sentence)
    return sentence[speaker.end() :].strip() if speaker else sentence.strip()


def _stated_ms(g: _Graph, node: ContextNode, at: int) -> int | None:
    """When the node's text was written, for reading its relative dates: a memory's own
    time, an event's source memory's time, else the event's time when its text is someone's
    words with a clock time (a writer that resolved a relative date stores the day at 00:00,
    which is not when it was said). A record of an event ("billing-v2 beta launched") is
    dated by its own time, not by a date it mentions: None."""
    if node.label == "S_Memory":
        return at
    body = normalize_name(_unspoken(node.text))
    for m in g.of("S_Memory"):
        if body and body in normalize_name(m.text) and (t := _time_ms(m)) is not None:
            return t
    quoted = SPEAKER.match(node.text) is not None or _FIRST_PERSON.search(node.text) is not None
    return at if quoted and not is_midnight(at) else None


def _dated_phrase(g: _Graph, node: ContextNode, sentence: str, at: int) -> Dated:
    stated = _stated_ms(g, node, at)
    if stated is not None and (dated := resolve(sentence, stated)) is not None:
        return dated
    if is_midnight(at):
        # The writer resolved the date; say it no finer than the text does.
        day = datetime.fromtimestamp(at / 1000, tz=UTC)
        words = set(terms(sentence))
        if (day.month, day.day) == (1, 1) and "year" in words:
            return Dated(str(day.year), at, False)
        if day.day == 1 and "month" in words:
            return Dated(day.strftime("%B %Y"), at, False)
    return Dated(format_time(at), at, False)


def _around(g: _Graph, best: ContextNode, pool: list[ContextNode]) -> list[tuple[ContextNode, int]]:
    """Up to two events before and two after `best`, the same day, sharing an entity."""
    at = _time_ms(best)
    if at is None or best.label != "T_Event":
        return []
    mine = g.names_of(best)
    near: list[tuple[ContextNode, int]] = []
    for n in pool:
        t = _time_ms(n)
        if n.uuid == best.uuid or t is None or abs(t - at) > CONTEXT_WINDOW_MS:
            continue
        if mine and not (mine & g.names_of(n)):
            continue
        near.append((n, t))
    before = sorted((p for p in near if p[1] <= at), key=lambda p: -p[1])[:CONTEXT_BEFORE]
    after = sorted((p for p in near if p[1] > at), key=lambda p: p[1])[:CONTEXT_AFTER]
    return sorted(before + after, key=lambda p: p[1])


def _happened(q: _Question, g: _Graph, cands: list[ContextNode]) -> Answer:
    """What happened in a period, or to an entity (during another one's events)."""
    tf = q.intent.timeframe
    pool = [n for n in cands if n.label == "T_Event"] or cands
    if tf is not None:
        pool = [n for n in pool if _in_window(_time_ms(n), tf)]
    focus_key = q.entity_keys[0] if q.entity_keys else None
    if focus_key is not None:
        mine = [n for n in pool if g.mentions(n, focus_key)]
        others = q.entity_keys[1:]
        if mine and others:
            # "X during Y": X's events within the span of Y's events.
            span = [
                t
                for n in pool
                if any(g.mentions(n, k) for k in others) and (t := _time_ms(n)) is not None
            ]
            if span:
                lo, hi = min(span), max(span)
                inside = [n for n in mine if lo <= (_time_ms(n) or 0) <= hi]
                mine = inside or mine
        pool = mine or pool
    if not pool:
        return Answer(
            "Nothing in memory happened then." if tf else "Nothing in memory is dated for this.",
            evidence=Evidence(
                entity=0.0 if focus_key else None, time=0.0 if tf else None, found=False
            ),
        )
    best_score = max(n.score for n in pool) or 1.0
    chosen = sorted(pool, key=lambda n: -_relevance(q, g, n, best_score))[:MAX_LISTED]
    dated = sorted(((n, _time_ms(n) or 0) for n in chosen), key=lambda p: p[1])
    lines = [f"{short_time(t)}: {n.text}" for n, t in dated]
    text = "; ".join(lines) + "."
    if len(pool) > len(chosen):
        text += f" ({len(pool) - len(chosen)} more events)"
    found_entity = bool(focus_key) and any(g.mentions(n, focus_key) for n in chosen)
    # A question that names only a period or entities is answered by their events.
    match = max((overlap(q.about, n.text) for n in chosen), default=0.0) if q.about else 1.0
    evidence = Evidence(
        match=match,
        entity=(1.0 if found_entity else 0.0) if focus_key else None,
        time=(1.0 if tf is not None else None),
        agreement=len(chosen),
    )
    return Answer(text, Reasoning(temporal_context=lines), [n.uuid for n in chosen], evidence)


def _entity_found(q: _Question, g: _Graph, node: ContextNode) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if g.mentions(node, k)) / len(q.entity_keys)


# -- WHO / WHAT -------------------------------------------------------------------------------


def _focus(q: _Question, g: _Graph) -> ContextNode | None:
    """The entity the question asks about: one it names, never another one."""
    entities = g.of("E_Entity")
    named = [n for n in entities if normalize_name(n.text) in q.entity_keys]
    if not named:
        named = [
            n
            for n in entities
            if normalize_name(n.text) and _names_in(normalize_name(n.text), q.text)
        ]
    if not named:
        return None
    # Of several named entities, the question is about the one current facts describe
    # ("which Python version does orders-service run": orders-service, not Python), then
    # the one named first.
    subjects: dict[str, int] = {}
    for n in g.of("T_Fact"):
        if _fact_valid(n, q.intent.timeframe, g.now_ms):
            key = normalize_name(str(n.attributes.get("subject", "")))
            subjects[key] = subjects.get(key, 0) + 1
    order = {k: i for i, k in enumerate(q.entity_keys)}
    return max(
        named,
        key=lambda n: (
            subjects.get(normalize_name(n.text), 0),
            -order.get(normalize_name(n.text), len(order)),
            n.score,
        ),
    )


def _humane(text: str) -> str:
    return text.replace("_", " ")


@dataclass
class _Statement:
    text: str
    uuid: str
    score: float
    relevance: float
    key: str
    dated: bool = False  # a fact valid in the asked timeframe (relations carry no time)


def _statements(q: _Question, g: _Graph, focus: ContextNode) -> list[_Statement]:
    key = normalize_name(focus.text)
    about = q.wanted - terms(focus.text) - terms(str(focus.attributes.get("entity_type", "")))
    tf = q.intent.timeframe
    kinds = {
        normalize_name(n.text): str(n.attributes.get("entity_type", "")) for n in g.of("E_Entity")
    }
    out: dict[str, _Statement] = {}
    for f in g.of("T_Fact"):
        ends = {
            normalize_name(str(f.attributes.get("subject", ""))),
            normalize_name(str(f.attributes.get("object", ""))),
        }
        if key not in ends or not _fact_valid(f, tf, g.now_ms):
            continue
        since = f.attributes.get("valid_from_iso")
        until = f.attributes.get("valid_to_iso")
        when = ""
        if since and until:
            when = f" ({str(since)[:10]} → {str(until)[:10]})"
        elif since:
            when = f" (since {str(since)[:10]})"
        text = _humane(f.text) + when
        dedup = normalize_name(_humane(f.text))
        other_key = next((k for k in ends if k != key), key)
        rel = overlap(about, f"{f.text} {kinds.get(other_key, '')}")
        if dedup not in out or out[dedup].relevance < rel:
            out[dedup] = _Statement(text, f.uuid, f.score, rel, dedup, dated=True)
    for e in g.sub.edges:
        if e.type != "E_RELATES" or focus.uuid not in (e.source, e.target):
            continue
        if e.source not in g.by_id or e.target not in g.by_id:
            continue
        other = g.by_id[e.target if e.source == focus.uuid else e.source]
        src, dst = g.by_id[e.source].text, g.by_id[e.target].text
        label = _humane(e.label or "relates to")
        kind = str(other.attributes.get("entity_type", ""))
        text = f"{src} {label} {dst}" + (f" ({kind})" if kind and kind != "entity" else "")
        dedup = normalize_name(f"{src} {label} {dst}")
        rel = overlap(about, f"{label} {other.text} {kind}")
        if dedup not in out:
            out[dedup] = _Statement(text, other.uuid, other.score, rel, dedup)
        else:  # a relation saying what a fact says: the two agree
            out[dedup].score += other.score
    return sorted(out.values(), key=lambda s: (-s.relevance, -s.score))


def _who_what(q: _Question, g: _Graph) -> Answer:
    focus = _focus(q, g)
    if focus is None:
        if q.entity_keys:
            names = ", ".join(q.intent.entities)
            best = _best_memories(q, g)
            if best:
                # No entity node by that name: whether the stored text names it decides.
                return _memories_answer(q, best)
            return Answer(
                f"Nothing in memory about {names}.",
                evidence=Evidence(entity=0.0, found=False),
            )
        return _explore(q, g)
    statements = _statements(q, g, focus)
    kind = focus.attributes.get("entity_type")
    head = focus.text + (f" ({kind})" if kind and kind != "entity" else "")
    memories = _best_memories(q, g)
    top_rel = statements[0].relevance if statements else 0.0
    if memories and overlap(q.about - terms(focus.text), memories[0].text) > top_rel:
        # The stored text says more about what is asked than any fact or relation.
        answer = _memories_answer(q, memories)
        answer.evidence.entity = 1.0
        return answer
    if not statements:
        return Answer(
            f"{head}: no {'facts valid then' if q.intent.timeframe else 'current facts'} or "
            "relations recorded.",
            Reasoning(entities_involved=[focus.text]),
            [focus.uuid],
            Evidence(entity=1.0, found=False),
        )
    best = [s for s in statements if s.relevance == top_rel and top_rel > 0][:MAX_STATEMENTS]
    rest = [s for s in statements if s not in best][: max(0, 4 - len(best)) or 2]
    used = best or statements[:4]
    # The asked time is answered only by facts valid then, not by undated relations.
    in_time = any(s.dated for s in used)
    tf = q.intent.timeframe
    when = f"{tf.phrase}: " if tf and tf.phrase and in_time else ""
    if best:
        text = when + "; ".join(s.text for s in best) + "."
        if rest:
            text += " Also: " + "; ".join(s.text for s in rest) + "."
    else:
        text = f"{when}{head}: " + "; ".join(s.text for s in statements[:4]) + "."
    runner = statements[len(best)].relevance if len(statements) > len(best) else 0.0
    asked = q.about - terms(focus.text) - terms(str(focus.attributes.get("entity_type", "")))
    evidence = Evidence(
        match=top_rel if asked else 0.5,
        entity=1.0 if normalize_name(focus.text) in q.entity_keys or not q.entity_keys else 0.5,
        time=(1.0 if in_time else 0.0) if tf else None,
        agreement=max(1, len(used)) + int(any(s.score > 1.0 for s in used)),
        margin=max(0.0, top_rel - runner),
        # Nothing the entity holds speaks to the asked words: a list of its facts is not
        # the thing asked.
        shaped=bool(best) or not asked,
    )
    entities = [focus.text, *(g.by_id[s.uuid].text for s in used if s.uuid in g.by_id)]
    return Answer(
        text,
        Reasoning(entities_involved=list(dict.fromkeys(entities))[:8]),
        [focus.uuid, *(s.uuid for s in used)],
        evidence,
    )


# -- WHY --------------------------------------------------------------------------------------


def _chain_to(
    target: ContextNode, incoming: dict[str, list[ContextEdge]], g: _Graph
) -> tuple[list[ContextNode], list[float]]:
    chain = [target]
    confidences: list[float] = []
    seen = {target.uuid}
    current = target.uuid
    while current in incoming:
        options = [e for e in incoming[current] if e.source not in seen]
        if not options:
            break
        edge = max(options, key=lambda e: e.confidence or 0.0)
        chain.append(g.by_id[edge.source])
        confidences.append(edge.confidence if edge.confidence is not None else 0.5)
        seen.add(edge.source)
        current = edge.source
    chain.reverse()
    confidences.reverse()
    return chain, confidences


def _why(q: _Question, g: _Graph) -> Answer:
    incoming: dict[str, list[ContextEdge]] = {}
    for e in g.sub.edges:
        if e.type == "C_CAUSES" and e.source in g.by_id and e.target in g.by_id:
            incoming.setdefault(e.target, []).append(e)
    effects = [n for n in g.of("C_Node") if n.uuid in incoming]
    if not effects:
        causal = g.of("C_Node")
        if causal:
            top = max(causal, key=lambda n: (overlap(q.wanted, n.text), n.score))
            return Answer(
                f"No recorded cause leads to this; the closest causal record is: {top.text}.",
                sources=[top.uuid],
                evidence=Evidence(match=overlap(q.wanted, top.text), found=False),
            )
        return _why_from_memories(q, g)
    best_score = max(n.score for n in effects) or 1.0

    def fit(n: ContextNode) -> float:
        named = (
            sum(1 for k in q.entity_keys if g.mentions(n, k)) / len(q.entity_keys)
            if q.entity_keys
            else 0.0
        )
        return overlap(q.wanted, n.text) + 0.3 * named + 0.2 * n.score / best_score

    ranked = sorted(effects, key=fit, reverse=True)
    target = ranked[0]
    memories = _best_memories(q, g)
    if memories and overlap(q.wanted, memories[0].text) > overlap(q.wanted, target.text) + 0.25:
        # No recorded chain ends in what is asked; a stored text speaks to it better.
        answer = _memories_answer(q, memories)
        answer.evidence.chain = 0.0
        return answer
    chain, confs = _chain_to(target, incoming, g)
    confidence = 1.0
    for c in confs:
        confidence *= c
    steps = [
        CausalStep(cause=chain[i].text, effect=chain[i + 1].text, confidence=confs[i])
        for i in range(len(confs))
    ]
    hops = ", which led to ".join(
        f"{chain[i + 1].text} ({confs[i]:.2f})" for i in range(len(confs))
    )
    text = (
        f"{chain[0].text} led to {hops}. "
        f"Chain confidence {confidence:.2f} (the product of the hop confidences)."
    )
    match = overlap(q.wanted, target.text)
    runner = overlap(q.wanted, ranked[1].text) if len(ranked) > 1 else 0.0
    entities = [g.by_id[u].text for n in chain for u in g.involves.get(n.uuid, set())]
    evidence = Evidence(
        match=match,
        entity=_entity_found_chain(q, g, chain),
        chain=confidence,
        agreement=max(len(target.views), 1),
        margin=max(0.0, match - runner),
    )
    return Answer(
        text,
        Reasoning(causal_chain=steps, entities_involved=list(dict.fromkeys(entities))[:5]),
        [n.uuid for n in chain],
        evidence,
    )


def _entity_found_chain(q: _Question, g: _Graph, chain: list[ContextNode]) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if any(g.mentions(n, k) for n in chain)) / len(
        q.entity_keys
    )


def _why_from_memories(q: _Question, g: _Graph) -> Answer:
    best = _best_memories(q, g)
    if not best:
        return Answer("No causal chain in memory explains this.", evidence=Evidence(found=False))
    answer = _memories_answer(q, best)
    answer.evidence.chain = 0.0
    return answer


# -- EXPLORE and memories ---------------------------------------------------------------------


def _best_memories(q: _Question, g: _Graph) -> list[ContextNode]:
    memories = g.of("S_Memory")
    if not memories:
        return []
    best_score = max(n.score for n in memories) or 1.0
    return sorted(
        memories,
        key=lambda n: _memory_fit(q, n) + 0.5 * n.score / best_score,
        reverse=True,
    )[:MAX_MEMORIES]


def _memory_fit(q: _Question, node: ContextNode) -> float:
    """How well a memory's best sentence matches; a question in a memory answers less
    well than a statement (in a conversation, the reply holds the answer)."""
    sentence = best_sentence(q.wanted, node.text)
    fit = overlap(q.wanted, sentence)
    return fit * 0.5 if sentence.rstrip().endswith("?") else fit


def _memories_answer(q: _Question, best: list[ContextNode], summary: bool = False) -> Answer:
    """The best memory's text; a summary (EXPLORE) adds the next ones that match too. A
    question that wants a short thing (what, which, how many) gets the asked span of the
    best sentence when a rule finds it (`answer_span`)."""
    top = best[0]
    rel = _memory_fit(q, top)
    runner = _memory_fit(q, best[1]) if len(best) > 1 else 0.0
    agree = sum(1 for n in best[1:] if overlap(q.about or q.wanted, n.text) >= max(0.5, rel))
    others = [n.text for n in best[1:] if overlap(q.wanted, n.text) > 0] if summary else []
    lines = [top.text, *others][:MAX_MEMORIES]
    text = " ".join(as_sentence(best_sentence(q.wanted, t)) for t in lines)
    shaped = True
    if asks_span(q.text):
        sentence = _unspoken(best_sentence(q.wanted, top.text))
        span = asked_span(q.text, q.about or q.wanted, sentence)
        shaped = span is not None
        if span is not None:
            text, lines = as_sentence(span), lines[:1]
    return Answer(
        text,
        Reasoning(semantic_matches=[n.text for n in best]),
        [n.uuid for n in best[: len(lines)]],
        Evidence(
            match=rel,
            entity=_entity_in_text(q, top.text),
            agreement=1 + agree,
            margin=max(0.0, rel - runner),
            quoted=True,
            shaped=shaped,
        ),
    )


def _entity_in_text(q: _Question, text: str) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if _names_in(k, text)) / len(q.entity_keys)


def _explore(q: _Question, g: _Graph) -> Answer:
    best = _best_memories(q, g)
    if best:
        return _memories_answer(q, best, summary=True)
    top = sorted(g.sub.nodes, key=lambda n: -n.score)[:MAX_LISTED]
    if not top:
        return Answer("Memory has nothing on this yet.", evidence=Evidence(found=False))
    text = "Related memory: " + "; ".join(f"{n.text} [{n.graph}]" for n in top) + "."
    rel = max(overlap(q.wanted, n.text) for n in top)
    return Answer(
        text,
        Reasoning(semantic_matches=[n.text for n in top if n.graph == "semantic"]),
        [n.uuid for n in top],
        Evidence(
            match=rel,
            entity=_entity_in_text(q, " ".join(n.text for n in top)),
            shaped=not asks_span(q.text),
        ),
    )


def extractive_answer(
    question: str, intent: Intent, sub: MergedSubgraph, now_ms: int | None = None
) -> Answer:
    """The answer the merged subgraph gives to `question`, shaped by the intent's type."""
    g = _Graph(sub, now_ms if now_ms is not None else to_epoch_ms(datetime.now(UTC)))
    q = _Question.of(question, intent)
    if intent.type == IntentType.WHY:
        answer = _why(q, g)
    elif intent.type == IntentType.WHEN:
        answer = _when(q, g)
    elif intent.type in (IntentType.WHO, IntentType.WHAT):
        answer = _who_what(q, g)
    else:
        answer = _explore(q, g)
    if _COMPOUND.search(question) and answer.evidence.match < 1.0:
        # Two questions in one ("when did X and who did Y"): one piece of evidence that
        # does not hold all the asked words answers one of them at most.
        answer.evidence.shaped = False
    return answer
