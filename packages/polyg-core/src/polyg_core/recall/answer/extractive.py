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
`polyg_core.recall.answer.confidence`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from polyg_shared.intents import Intent, IntentType
from polyg_shared.retrieval import CausalStep, ContextEdge, ContextNode, MergedSubgraph, Reasoning
from polyg_shared.timeutil import to_epoch_ms

from polyg_core.recall.answer.confidence import Evidence, concise
from polyg_core.recall.answer.current import (
    Update,
    current_update,
    history_note,
    later_change,
    later_note,
)
from polyg_core.recall.answer.evidence import (
    MAX_LISTED,
    Answer,
    AnswerGraph,
    Question,
    fact_valid,
    names_in,
    unspoken,
)
from polyg_core.recall.answer.shapes import asks_previous, held, relation_of
from polyg_core.recall.answer.span import asked_span, asks_span
from polyg_core.recall.answer.when import when_answer
from polyg_core.recall.answer.words import (
    SPEAKER,
    as_sentence,
    best_sentence,
    overlap,
    terms,
)
from polyg_core.recall.currency import PAST_VERB, asks_about_earlier, asks_about_now, says_change
from polyg_core.text.normalize import normalize_name

__all__ = ["Answer", "extractive_answer"]

MAX_STATEMENTS = 6
MAX_MEMORIES = 3

_ASKS_TIME = re.compile(
    r"^\s*(?:when|what\s+time|what\s+date|how\s+long|how\s+often|how\s+soon)\b|"
    r"\b(?:which|what)\s+(?:day|date|year|month|week|time|hour)s?\b|\bwhen\b",
    re.IGNORECASE,
)
_ASKS_THING = re.compile(r"^\s*(?:where|what|which|who|whom)\b", re.IGNORECASE)
# "What happened in October?" asks for the events of a time: the WHEN answer's timeline.
_ASKS_EVENTS = re.compile(
    r"^\s*what\s+(?:(?:has|had)\s+)?(?:happened|happens|occurred|went\s+on|was\s+going\s+on)\b",
    re.IGNORECASE,
)
_COMPOUND = re.compile(
    r"\w.*\b(?:and|but|also)\s+(?:who|whom|what|when|where|why|how|which)\b", re.IGNORECASE
)


# -- WHO / WHAT -------------------------------------------------------------------------------


def _focus(q: Question, g: AnswerGraph) -> ContextNode | None:
    """The entity the question asks about: one it names, never another one."""
    entities = g.of("E_Entity")
    named = [n for n in entities if normalize_name(n.text) in q.entity_keys]
    if not named:
        named = [
            n
            for n in entities
            if normalize_name(n.text) and names_in(normalize_name(n.text), q.text)
        ]
    if not named:
        return None
    # Of several named entities, the question is about the one current facts describe
    # ("which Python version does orders-service run": orders-service, not Python), then
    # the one named first.
    subjects: dict[str, int] = {}
    for n in g.of("T_Fact"):
        if fact_valid(n, q.intent.timeframe, g.now_ms):
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


def _statements(q: Question, g: AnswerGraph, focus: ContextNode) -> list[_Statement]:
    about = q.wanted - terms(focus.text) - terms(str(focus.attributes.get("entity_type", "")))
    out: dict[str, _Statement] = {}
    previous = q.intent.timeframe is None and asks_previous(q.text)
    _add_facts(out, q, g, focus, about, previous)
    if previous and not any(s.relevance > 0 for s in out.values()):
        # Nothing ended that the question's words point at: what holds now answers.
        out = {}
        _add_facts(out, q, g, focus, about, False)
    _add_relations(out, g, focus, about)
    return sorted(out.values(), key=lambda s: (-s.relevance, -s.score))


def _fact_interval(f: ContextNode) -> str:
    since = f.attributes.get("valid_from_iso")
    until = f.attributes.get("valid_to_iso")
    if since and until:
        return f" ({str(since)[:10]} → {str(until)[:10]})"
    if since:
        return f" (since {str(since)[:10]})"
    return ""


def _bounds(f: ContextNode) -> tuple[int | None, int | None]:
    begin = f.attributes.get("valid_from")
    stop = f.attributes.get("valid_to")
    return (
        int(begin) if isinstance(begin, int | float) else None,
        int(stop) if isinstance(stop, int | float) else None,
    )


def _answers_then(f: ContextNode, q: Question, now_ms: int, previous: bool) -> bool:
    """Whether the fact held when the question asks: before / after / since / during its
    time (`shapes.held`), before now for a question about the previous value, else now."""
    tf = q.intent.timeframe
    begin, stop = _bounds(f)
    if tf is not None and (tf.start is not None or tf.end is not None):
        return held(begin, stop, tf, relation_of(tf))
    if previous:
        return stop is not None and stop <= now_ms
    return fact_valid(f, None, now_ms)


def _started_after(facts: list[ContextNode], q: Question) -> list[ContextNode]:
    """For "after X": of one subject's values of one predicate, those that began after X
    when any did (the value held at X otherwise)."""
    tf = q.intent.timeframe
    if tf is None or tf.start is None or relation_of(tf) != "after":
        return facts
    lo = to_epoch_ms(tf.start)
    began: set[tuple[str, str]] = set()
    for f in facts:
        if (_bounds(f)[0] or 0) >= lo:
            began.add(_predicate_of(f))
    return [f for f in facts if _predicate_of(f) not in began or (_bounds(f)[0] or 0) >= lo]


def _predicate_of(f: ContextNode) -> tuple[str, str]:
    return (
        normalize_name(str(f.attributes.get("subject", ""))),
        str(f.attributes.get("predicate", "")),
    )


def _add_facts(
    out: dict[str, _Statement],
    q: Question,
    g: AnswerGraph,
    focus: ContextNode,
    about: set[str],
    previous: bool,
) -> None:
    """The focus's facts that held when asked (`_answers_then`), most relevant per text."""
    key = normalize_name(focus.text)
    kinds = {
        normalize_name(n.text): str(n.attributes.get("entity_type", "")) for n in g.of("E_Entity")
    }
    mine = [
        f for f in g.of("T_Fact") if key in _ends(f) and _answers_then(f, q, g.now_ms, previous)
    ]
    for f in _started_after(mine, q):
        ends = _ends(f)
        text = _humane(f.text) + _fact_interval(f)
        dedup = normalize_name(_humane(f.text))
        other_key = next((k for k in ends if k != key), key)
        rel = overlap(about, f"{f.text} {kinds.get(other_key, '')}")
        if dedup not in out or out[dedup].relevance < rel:
            out[dedup] = _Statement(text, f.uuid, f.score, rel, dedup, dated=True)


def _ends(f: ContextNode) -> set[str]:
    return {
        normalize_name(str(f.attributes.get("subject", ""))),
        normalize_name(str(f.attributes.get("object", ""))),
    }


def _add_relations(
    out: dict[str, _Statement], g: AnswerGraph, focus: ContextNode, about: set[str]
) -> None:
    """The focus's relations; one saying what a fact says adds to its score (they agree)."""
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
        else:
            out[dedup].score += other.score


def _who_what(q: Question, g: AnswerGraph) -> Answer:
    focus = _focus(q, g)
    if focus is None:
        return _unfocused(q, g)
    statements = _statements(q, g, focus)
    head = _head(focus)
    memories = _best_memories(q, g)
    top_rel = statements[0].relevance if statements else 0.0
    if _memories_say_more(q, focus, statements, memories):
        # The stored text says more about what is asked than any fact or relation.
        answer = _memories_answer(q, memories)
        answer.evidence.entity = 1.0
        return answer
    if not statements:
        return _nothing_held(q, focus, head)
    best = [s for s in statements if s.relevance == top_rel and top_rel > 0][:MAX_STATEMENTS]
    if not best and (other := _not_then(q, g, focus, head)) is not None:
        return other
    used = best or statements[:4]
    # The asked time is answered only by facts valid then, not by undated relations.
    in_time = any(s.dated for s in used)
    text = _statements_text(q, head, statements, best, in_time)
    evidence = _statements_evidence(q, focus, statements, best, in_time)
    entities = [focus.text, *(g.by_id[s.uuid].text for s in used if s.uuid in g.by_id)]
    return Answer(
        text,
        Reasoning(entities_involved=list(dict.fromkeys(entities))[:8]),
        [focus.uuid, *(s.uuid for s in used)],
        evidence,
    )


def _nothing_held(q: Question, focus: ContextNode, head: str) -> Answer:
    return Answer(
        f"{head}: no {'facts valid then' if q.intent.timeframe else 'current facts'} or "
        "relations recorded.",
        Reasoning(entities_involved=[focus.text]),
        [focus.uuid],
        Evidence(entity=1.0, found=False),
    )


def _not_then(q: Question, g: AnswerGraph, focus: ContextNode, head: str) -> Answer | None:
    """A time was asked and none of the focus's facts that held then speaks to the asked
    words, but facts at other times do: say nothing held then, and what held when."""
    tf = q.intent.timeframe
    about = q.about - terms(focus.text)
    if tf is None or not about:
        return None
    key = normalize_name(focus.text)
    other = [f for f in g.of("T_Fact") if key in _ends(f) and overlap(about, _humane(f.text)) > 0]
    if not other:
        return None
    other.sort(key=lambda f: _bounds(f)[0] or 0)
    when = tf.phrase or "then"
    told = "; ".join(_humane(f.text) + _fact_interval(f) for f in other[:MAX_STATEMENTS])
    return Answer(
        f"{head}: nothing recorded {when}. At other times: {told}.",
        Reasoning(entities_involved=[focus.text]),
        [focus.uuid, *(f.uuid for f in other[:MAX_STATEMENTS])],
        Evidence(entity=1.0, time=0.0, found=False, match=overlap(about, other[0].text)),
    )


def _memories_say_more(
    q: Question, focus: ContextNode, statements: list[_Statement], memories: list[ContextNode]
) -> bool:
    """Whether the stored texts answer better than the focus's facts and relations: they
    hold more of the asked words, or the question asks for an earlier value no ended fact
    gives."""
    if not memories:
        return False
    if not statements:
        # Nothing is recorded of the focus but stored texts: they are all there is to say
        # ("Who does our taxes?" of "Taxes: Greta Holm CPA does ours").
        return True
    top_rel = statements[0].relevance
    if overlap(q.about - terms(focus.text), memories[0].text) > top_rel:
        return True
    return _no_earlier_fact(q, statements)


def _no_earlier_fact(q: Question, statements: list[_Statement]) -> bool:
    """A question about the value before the current one that no ended fact answers: the
    stored texts (the earlier ones first, `_before_the_latest`) answer it."""
    if q.intent.timeframe is not None or not asks_previous(q.text):
        return False
    return not any(s.dated and "→" in s.text for s in statements)


def _head(focus: ContextNode) -> str:
    kind = focus.attributes.get("entity_type")
    return focus.text + (f" ({kind})" if kind and kind != "entity" else "")


def _unfocused(q: Question, g: AnswerGraph) -> Answer:
    """No entity node the question names: the stored texts that name it, else nothing."""
    if not q.entity_keys:
        return _explore(q, g)
    best = _best_memories(q, g)
    if best:
        # No entity node by that name: whether the stored text names it decides.
        return _memories_answer(q, best)
    names = ", ".join(q.intent.entities)
    return Answer(
        f"Nothing in memory about {names}.",
        evidence=Evidence(entity=0.0, found=False),
    )


def _statements_text(
    q: Question,
    head: str,
    statements: list[_Statement],
    best: list[_Statement],
    in_time: bool,
) -> str:
    """The statements that hold the asked words (then a few others), else the first four."""
    tf = q.intent.timeframe
    when = f"{tf.phrase}: " if tf and tf.phrase and in_time else ""
    if not best:
        return f"{when}{head}: " + "; ".join(s.text for s in statements[:4]) + "."
    rest = [s for s in statements if s not in best][: max(0, 4 - len(best)) or 2]
    text = when + "; ".join(s.text for s in best) + "."
    if rest:
        text += " Also: " + "; ".join(s.text for s in rest) + "."
    return text


def _statements_evidence(
    q: Question,
    focus: ContextNode,
    statements: list[_Statement],
    best: list[_Statement],
    in_time: bool,
) -> Evidence:
    used = best or statements[:4]
    top_rel = statements[0].relevance
    runner = statements[len(best)].relevance if len(statements) > len(best) else 0.0
    asked = q.about - terms(focus.text) - terms(str(focus.attributes.get("entity_type", "")))
    return Evidence(
        match=top_rel if asked else 0.5,
        entity=1.0 if normalize_name(focus.text) in q.entity_keys or not q.entity_keys else 0.5,
        time=(1.0 if in_time else 0.0) if q.intent.timeframe else None,
        agreement=max(1, len(used)) + int(any(s.score > 1.0 for s in used)),
        margin=max(0.0, top_rel - runner),
        # Nothing the entity holds speaks to the asked words: a list of its facts is not
        # the thing asked.
        shaped=bool(best) or not asked,
    )


# -- WHY --------------------------------------------------------------------------------------


def _chain_to(
    target: ContextNode, incoming: dict[str, list[ContextEdge]], g: AnswerGraph
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


def _why(q: Question, g: AnswerGraph) -> Answer:
    incoming: dict[str, list[ContextEdge]] = {}
    for e in g.sub.edges:
        if e.type == "C_CAUSES" and e.source in g.by_id and e.target in g.by_id:
            incoming.setdefault(e.target, []).append(e)
    effects = [n for n in g.of("C_Node") if n.uuid in incoming]
    if not effects:
        return _why_without_chain(q, g)
    ranked = _ranked_effects(q, g, effects)
    target = ranked[0]
    memories = _best_memories(q, g)
    if memories and overlap(q.wanted, memories[0].text) > overlap(q.wanted, target.text) + 0.25:
        # No recorded chain ends in what is asked; a stored text speaks to it better.
        answer = _memories_answer(q, memories)
        answer.evidence.chain = 0.0
        return answer
    return _chain_answer(q, g, ranked, incoming)


def _why_without_chain(q: Question, g: AnswerGraph) -> Answer:
    """No causal link ends in a node here: the closest causal record, else the memories."""
    causal = g.of("C_Node")
    if not causal:
        return _why_from_memories(q, g)
    top = max(causal, key=lambda n: (overlap(q.wanted, n.text), n.score))
    return Answer(
        f"No recorded cause leads to this; the closest causal record is: {top.text}.",
        sources=[top.uuid],
        evidence=Evidence(match=overlap(q.wanted, top.text), found=False),
    )


def _ranked_effects(q: Question, g: AnswerGraph, effects: list[ContextNode]) -> list[ContextNode]:
    """The effects best first: by the asked words, the named entities and the score."""
    best_score = max(n.score for n in effects) or 1.0

    def fit(n: ContextNode) -> float:
        named = (
            sum(1 for k in q.entity_keys if g.mentions(n, k)) / len(q.entity_keys)
            if q.entity_keys
            else 0.0
        )
        return overlap(q.wanted, n.text) + 0.3 * named + 0.2 * n.score / best_score

    return sorted(effects, key=fit, reverse=True)


def _chain_answer(
    q: Question,
    g: AnswerGraph,
    ranked: list[ContextNode],
    incoming: dict[str, list[ContextEdge]],
) -> Answer:
    """The chain of causes that ends in the best effect, written out with its confidence."""
    target = ranked[0]
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


def _entity_found_chain(q: Question, g: AnswerGraph, chain: list[ContextNode]) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if any(g.mentions(n, k) for n in chain)) / len(
        q.entity_keys
    )


def _why_from_memories(q: Question, g: AnswerGraph) -> Answer:
    best = _best_memories(q, g)
    if not best:
        return Answer("No causal chain in memory explains this.", evidence=Evidence(found=False))
    answer = _memories_answer(q, best)
    answer.evidence.chain = 0.0
    return answer


# -- EXPLORE and memories ---------------------------------------------------------------------


def _best_memories(q: Question, g: AnswerGraph) -> list[ContextNode]:
    memories = g.of("S_Memory")
    if not memories:
        return []
    best_score = max(n.score for n in memories) or 1.0
    ranked = sorted(
        memories,
        key=lambda n: _memory_fit(q, n) + 0.5 * n.score / best_score,
        reverse=True,
    )
    if _asks_before_a_change(q, memories):
        ranked = _before_the_latest(q, ranked)
    elif asks_about_now(q.text, q.intent, g.now_ms):
        # What recall marked as changed by a later memory does not answer for now, nor a
        # memory about someone close to whom is asked ("Tomasz's sister Ola just got
        # promoted" for "Where does Tomasz work?"), nor a wish or a rumour ("Tomasz might
        # go freelance someday"), nor a note about the old value ("Ole's rent went up to
        # £640 too" after the rent changed from £640).
        ranked.sort(key=lambda n: tuple(bool(n.attributes.get(a)) for a in _NOT_FOR_NOW))
        ranked = _latest_of_the_best(q, ranked)
    return ranked[:MAX_MEMORIES]


_NOT_FOR_NOW = ("superseded_by", "about_someone_close", "unsettled", "about_an_old_value")
"""What recall marks on a memory that does not answer for now, in the order such memories
come after the others."""


def _latest_of_the_best(q: Question, ranked: list[ContextNode]) -> list[ContextNode]:
    """For a question about now: of the memories that hold every asked word, the latest
    first ("joined the Kestrel team", then "left the Kestrel team": the later one says
    what holds). Memories that hold only some of the words may be about other things, and
    those recall marked as not answering for now are left where they are."""
    tied = [
        n
        for n in ranked
        if _memory_fit(q, n) >= 1.0 and not any(n.attributes.get(a) for a in _NOT_FOR_NOW)
    ]
    if len(tied) < 2:
        return ranked
    latest = max(tied, key=_created_ms)
    return [latest, *(n for n in ranked if n is not latest)]


def _before_the_latest(q: Question, ranked: list[ContextNode]) -> list[ContextNode]:
    """For "how did X ... before?": a memory recall marked as changed by a later one
    (`superseded_by`, `recall.currency`) answers, whatever words its update shares with
    the question ("reports to Dariusz" for "Who was Priya's manager before the reorg?",
    not "after the reorg, Priya's manager is Ines"). Else, of the memories that speak to
    the asked words, the latest states what holds now; the ones before it answer."""
    # What recall found to tell what came after ("Keys for 14 Birchfield Road!" for
    # "Where did I live before Birchfield Road?") answers last.
    ranked = sorted(ranked, key=lambda n: bool(n.attributes.get("came_after")))
    changed = _changed_first(q, ranked)
    if changed is not None:
        return changed
    top = _memory_fit(q, ranked[0])
    speaking = [n for n in ranked if top > 0 and _memory_fit(q, n) >= 0.5 * top]
    if len(speaking) < 2:
        return ranked
    latest = max(speaking, key=_created_ms)
    return [n for n in ranked if n is not latest] + [latest]


def _changed_first(q: Question, ranked: list[ContextNode]) -> list[ContextNode] | None:
    """A memory recall marked as changed by another here, first, and its update last; None
    when there is none. Of several, one that speaks to the asked words, then the one recall
    scored highest, then the earliest: "User works as a data analyst at Quillon" answers
    "What was my job title before Fernwick?" though it holds no asked word."""
    here = {n.uuid for n in ranked}
    changed = [n for n in ranked if n.attributes.get("superseded_by") in here]
    if not changed:
        return None
    # Scores within a hundredth are one: recall places a changed memory a hair from its
    # update.
    first = max(changed, key=lambda n: (_memory_fit(q, n) > 0, round(n.score, 2), -_created_ms(n)))
    later = first.attributes.get("superseded_by")
    rest = [n for n in ranked if n is not first and n.uuid != later]
    return [first, *rest, *(n for n in ranked if n.uuid == later)]


def _created_ms(node: ContextNode) -> int:
    value = node.attributes.get("created_at")
    return int(value) if isinstance(value, int | float) else 0


def _memory_fit(q: Question, node: ContextNode) -> float:
    """How well a memory's best sentence matches; a question in a memory answers less
    well than a statement (in a conversation, the reply holds the answer)."""
    sentence = best_sentence(q.wanted, node.text)
    fit = overlap(q.wanted, sentence)
    return fit * 0.5 if sentence.rstrip().endswith("?") else fit


def _memories_answer(q: Question, best: list[ContextNode], summary: bool = False) -> Answer:
    """The best memory's text; a summary (EXPLORE) adds the next ones that match too. A
    question that wants a short thing (what, which, how many) gets the asked span of the
    best sentence when a rule finds it (`answer_span`)."""
    top = best[0]
    rel = _memory_fit(q, top)
    runner = _memory_fit(q, best[1]) if len(best) > 1 else 0.0
    agree = sum(1 for n in best[1:] if overlap(q.about or q.wanted, n.text) >= max(0.5, rel))
    others = [n.text for n in best[1:] if overlap(q.wanted, n.text) > 0] if summary else []
    lines = [top.text, *others][:MAX_MEMORIES]
    text = " ".join(as_sentence(_said_in(q, t)) for t in lines)
    shaped = True
    if _changed_and_short(q, top):
        # Asked what held before, the memory a later one changed answers: a short one is
        # quoted whole, as an update is ("depot shift 6am, Ode in bay C": not "C").
        text, lines = as_sentence(top.text), lines[:1]
    elif asks_span(q.text):
        sentence = unspoken(best_sentence(q.wanted, top.text))
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


def _asks_before_a_change(q: Question, memories: list[ContextNode]) -> bool:
    """Whether the question asks for the value before a change: in its words, with no
    time window, or with one when recall marked a memory as changed ("before this month"
    names a window and a change)."""
    return asks_previous(q.text) and (
        q.intent.timeframe is None or any(n.attributes.get("superseded_by") for n in memories)
    )


def _asks_earlier(q: Question) -> bool:
    """Whether the question's words ask for what held before a change: "before", "used
    to", "previous" (`asks_previous`), or the first or old value ("What dose was I first
    put on?", "Who was Pip's vet at the old practice?": `currency.asks_about_earlier`, as
    recall ranks them) when asked in the past tense (not "What do I use to send invoices?")."""
    return asks_previous(q.text) or (
        asks_about_earlier(q.text) and PAST_VERB.search(q.text) is not None
    )


def _changed_and_short(q: Question, node: ContextNode) -> bool:
    """Whether `node` is a short memory a later one changed (`superseded_by`), answering
    a question about what held before."""
    return (
        bool(node.attributes.get("superseded_by"))
        and len(node.text) <= WHOLE_UPDATE
        and _asks_before_a_change(q, [node])
    )


def _said_in(q: Question, text: str) -> str:
    """The sentence of a memory that answers: the one holding most asked words; a short
    memory whole when no sentence holds an asked word besides the names (the sentence
    naming the person is no better than the one after it that holds the value:
    "party at Ode's fri!! it's 4 Kiln Row, Leeds")."""
    # (The "s" of a possessive is no asked word.)
    about = {t for t in q.about if len(t) > 1}
    if about and not about & terms(text) and len(text) <= WHOLE_UPDATE:
        return text
    return best_sentence(q.wanted, text)


def _entity_in_text(q: Question, text: str) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if names_in(k, text)) / len(q.entity_keys)


def _explore(q: Question, g: AnswerGraph) -> Answer:
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


WHOLE_UPDATE = 160
"""An update this short is quoted whole: a jotted note's sentences hold its value
between them ("Engineer came today, router in the hall now. Lumenet, 900Mb!")."""


def _update_answer(q: Question, g: AnswerGraph, update: Update) -> Answer:
    """The update's text, what it replaced as history (`recall.answer.current`); for a
    question about the value before ("How did Dana take her tea before?"), what it
    replaced, the update as what holds now."""
    if _asks_earlier(q):
        # (What it replaced was changed: no time window the question names rules it out.)
        return _previous_answer(q, update)
    gone = {n.uuid for n in update.replaced}
    others = [n for n in _best_memories(q, g) if n.uuid not in gone and n is not update.current]
    answer = _memories_answer(q, [update.current, *others])
    # The update's own sentence, not a span of it: a span rule reads "no longer uses Emacs;
    # he codes in Helix now" as "Emacs", and "X took over Y" without its subject.
    # Of sentences that hold as many asked words, the one that says the change holds the
    # new value ("Cut dairy out completely. Just a black americano for me now.").
    text = update.current.text
    said = as_sentence(
        text if len(text) <= WHOLE_UPDATE else best_sentence(q.wanted, text, says_change)
    )
    answer.text = f"{said} {history_note(q, update)}"
    answer.evidence.shaped = True
    answer.sources = [*answer.sources, update.replaced[0].uuid]
    return answer


def _previous_answer(q: Question, update: Update) -> Answer:
    old = update.replaced[0]
    answer = _memories_answer(q, [old, *update.replaced[1:]])
    said = as_sentence(
        old.text if len(old.text) <= WHOLE_UPDATE else best_sentence(q.wanted, old.text)
    )
    answer.text = f"{said} {later_note(q, update.current)}"
    answer.evidence.shaped = True
    answer.sources = [old.uuid, update.current.uuid]
    return answer


def extractive_answer(
    question: str, intent: Intent, sub: MergedSubgraph, now_ms: int | None = None
) -> Answer:
    """The answer the merged subgraph gives to `question`, shaped by the intent's type."""
    g = AnswerGraph(sub, now_ms if now_ms is not None else to_epoch_ms(datetime.now(UTC)))
    q = Question.of(question, intent)
    update = current_update(q, g)
    route = _route(q, update is not None)
    if route == "update":
        assert update is not None
        # A later memory changed what an earlier one said: the current value answers.
        answer = _update_answer(q, g, update)
    elif route == "why":
        answer = _why(q, g)
    elif route in ("at_time", "who_what"):
        answer = _who_what(q, g)
    elif route == "when":
        answer = when_answer(q, g)
    else:
        answer = _explore(q, g)
    answer.evidence.route = route
    if route != "update":
        _with_what_came_later(q, g, answer)
    if _COMPOUND.search(question) and answer.evidence.match < 1.0:
        # Two questions in one ("when did X and who did Y"): one piece of evidence that
        # does not hold all the asked words answers one of them at most.
        answer.evidence.shaped = False
    if not concise(answer.text):
        # A whole stored text (or several) handed over is seldom the asked value itself.
        answer.evidence.direct = False
    answer.evidence.spoken = _rests_on_words_said(g, answer)
    return answer


def _with_what_came_later(q: Question, g: AnswerGraph, answer: Answer) -> None:
    """Asked for the value before a change, an answer quoting a memory names a later one
    that changed it after it, as what came later (`recall.answer.current`)."""
    if q.intent.timeframe is not None or not _asks_earlier(q) or not answer.evidence.quoted:
        return
    answered = g.by_id.get(answer.sources[0]) if answer.sources else None
    if answered is None or answered.label != "S_Memory":
        return
    later = later_change(q, g, answered)
    if later is not None:
        answer.text = f"{answer.text} {later_note(q, later)}"
        answer.sources = [*answer.sources, later.uuid]


def _rests_on_words_said(g: AnswerGraph, answer: Answer) -> bool:
    """Whether the answer rests on someone's words in a conversation ("Ana: I ..."): the
    text it quotes is one, or, for an answer from the graphs, the best memory beside it is
    (what the graphs hold was then read from a conversation)."""
    if answer.evidence.quoted:
        first = g.by_id.get(answer.sources[0]) if answer.sources else None
        return first is not None and SPEAKER.match(first.text) is not None
    memories = g.of("S_Memory")
    best = max(memories, key=lambda n: n.score) if memories else None
    return best is not None and SPEAKER.match(best.text) is not None


def _route(q: Question, updated: bool) -> str:
    """Which answer the question takes (`confidence.ROUTES`)."""
    kind = q.intent.type
    if updated:
        return "update"
    if kind == IntentType.WHY:
        return "why"
    if (
        kind == IntentType.WHEN
        and _ASKS_THING.search(q.text)
        and not _ASKS_TIME.search(q.text)
        and not _ASKS_EVENTS.search(q.text)
    ):
        # "Where did Jonas live in 2024?" names a time but asks for a place: what held then.
        return "at_time"
    if kind == IntentType.WHEN:
        return "when"
    if kind in (IntentType.WHO, IntentType.WHAT):
        return "at_time" if q.intent.timeframe is not None else "who_what"
    return "explore"
