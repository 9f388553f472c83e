"""An answer's confidence, from the evidence it rests on.

Not a list's length or a node's raw score: the confidence says how likely the answer is
right, from what the answer found.

* how well the chosen evidence matches the question's words (`match`) and how clearly
  it beats the runner-up (`margin`);
* whether the asked entity was found and answered about, and whether the evidence lies
  in the asked timeframe (each counts only when the question asks for one);
* for WHY, the causal chain's confidence (the product of its hops);
* how many independent pieces of evidence agree (views that found the node, facts and
  relations that say the same, memories that agree);
* whether the answer is a fact, relation, event or chain the graphs hold, or a quoted
  stored text (a sentence can hold the question's words without saying what is asked,
  so a quote is trusted less: at most 0.7).

* whether the answer has the form the question asks for (`shaped`): a date for a "how
  long" question, a whole sentence where a short span was wanted, a list of an entity's
  facts none of which holds the asked words, one piece of evidence for a question that
  asks two things: each is seldom right, so it counts ×0.6;
* whether the answer states the asked value itself (`direct`: a span, a date the evidence
  states, a duration, a fact's value) or hands over a whole stored text, or a time that
  is only when a text was recorded: token for token, such an answer seldom is the asked
  value, so it counts ×0.8 and is calibrated apart. A day named by its weekday ("last
  Friday", `weekday`) is answered as the speaker put it ("the Friday before ..."), the
  stated value with its ambiguity kept: reported, not counted down;
* evidence about another entity or another time than the one asked contradicts the
  question, and so does a memory that a later one changed (`stale`), quoted for a
  question about now, and a causal chain that holds none of the question's words: at
  most 0.4.

An answer that says nothing was found scores at most 0.1. The weights are fixed by
reasoning, not fitted to a dataset: they give the raw confidence, an order. What is
reported is that order calibrated on the team's own data (`calibration`): by the
answer's route, source and form, how often answers with that raw confidence were right. `polyg bench retrieval` and
`polyg bench answers` measure how often each confidence bucket is right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Evidence:
    """What an answer rests on, for its confidence.

    Attributes:
        match: how well the chosen evidence matches the question's words (0-1).
        entity: 1 when the asked entity was found and answered about, 0 when it was asked
            but not found, None when no entity was asked.
        time: 1 when the evidence lies in the asked timeframe, 0 when it does not, None
            when no time was asked.
        chain: the causal chain's confidence (product of its hops), WHY only.
        agreement: how many independent pieces of evidence say the same (views that
            found the chosen node, statements or memories that agree), at least 1.
        margin: how much better the chosen evidence matches than the runner-up (0-1).
        found: False when nothing in memory answers (the answer says so).
        quoted: True when the answer quotes a stored text instead of a fact, relation,
            event or chain the graphs hold (a sentence that matches the question's words
            may still not say what is asked).
        shaped: False when the answer could not take the form the question asks for (a
            "how long" question answered with a date, a "what" question with a whole
            quoted sentence in which no asked span was found).
        route: which answer the question took (`ROUTES`); the calibration maps the raw
            confidence to how often answers of that route are right.
        direct: False when the answer hands over a whole stored text (or several) rather
            than the asked value read from it, or gives a time that is only when a text
            was recorded, not one it states.
        stale: True when the answer rests on a memory that a later one changed, for a
            question about now (the value it quotes no longer holds).
        spoken: True when the answer rests on someone's words in a conversation ("Ana:
            I ..."): the text it quotes is a turn, or, for an answer from the graphs, the
            best memory beside it is. A turn answers a question less directly than a note
            written to be recalled, and what the graphs read from turns is less sure than
            what was written to them: calibrated apart.
        weekday: True when the answer's day was read from a weekday name ("last
            Friday"). The answer says it as the speaker did ("the Friday before ...",
            the day read in brackets), so it is the stated value: reported for refits,
            not counted down.
    """

    match: float = 0.0
    entity: float | None = None
    time: float | None = None
    chain: float | None = None
    agreement: int = 1
    margin: float = 0.0
    found: bool = True
    quoted: bool = False
    shaped: bool = True
    route: str = "other"
    direct: bool = True
    stale: bool = False
    spoken: bool = False
    weekday: bool = False


ROUTES = ("update", "why", "at_time", "when", "who_what", "explore", "other")
"""The answers' routes: an update's current value, a causal chain, a value held at an
asked time, the time of an event (or a duration, or the events of a period), an entity's
facts and relations (or a stored text about it), a summary of memories."""

NOT_FOUND_CAP = 0.1
QUOTE_CAP = 0.7
UNSHAPED_FACTOR = 0.6
INDIRECT_FACTOR = 0.8
CONCISE_WORDS = 8  # an answer longer than this hands over a text, not a value
CONTRADICTED_CAP = 0.4
FLOOR = 0.02
CEILING = 0.95


def confidence_of(evidence: Evidence) -> float:
    """A confidence in [0.02, 0.95] from the answer's evidence (see the module doc)."""
    if not evidence.found:
        return round(min(NOT_FOUND_CAP, 0.05 + 0.05 * evidence.match), 3)
    score = 0.1 + 0.45 * evidence.match + 0.1 * min(evidence.margin, 1.0)
    if evidence.entity is not None:
        # Evidence that leaves out an entity the question names is likely about another.
        score += 0.2 * evidence.entity - 0.3 * (1.0 - evidence.entity)
    else:
        score += 0.05
    if evidence.time is not None:
        score += 0.1 * evidence.time - 0.15 * (1.0 - evidence.time)
    score += 0.05 * min(max(evidence.agreement, 1) - 1, 3)
    if evidence.quoted:
        score = min(score * 0.85, QUOTE_CAP)
    if not evidence.shaped:
        # An answer of another form than the one asked (a date for "how long", a whole
        # sentence for "what") is seldom right whatever its evidence.
        score *= UNSHAPED_FACTOR
    if not evidence.direct:
        score *= INDIRECT_FACTOR
    if contradicts(evidence):
        # The evidence is about another entity or another time than the one asked, or
        # says what no longer holds: it contradicts the question however well its words
        # match.
        score = min(score, CONTRADICTED_CAP)
    if evidence.chain is not None:
        # A causal answer is no surer than its weakest reading: the chain or the match.
        score = min(score, 0.3 + 0.6 * evidence.chain) * (0.6 + 0.4 * evidence.chain)
    return round(min(CEILING, max(FLOOR, score)), 3)


def contradicts(evidence: Evidence) -> bool:
    """Whether the evidence is about another entity or time than the one asked, or is a
    memory a later one changed (the answer stays at most `CONTRADICTED_CAP`)."""
    return (
        evidence.entity == 0.0
        or evidence.time == 0.0
        or evidence.stale
        or off_chain(evidence.chain, evidence.match)
    )


def off_chain(chain: float | None, match: float) -> bool:
    """A causal chain that holds none of the question's words explains something else
    (asked why the payment gateway failed, the auth outage's chain is no answer)."""
    return chain is not None and match == 0.0


_WORD = re.compile(r"[\w'’-]+")


def concise(text: str) -> bool:
    """Whether an answer is short enough to be a value (at most `CONCISE_WORDS` words)
    rather than a stored text handed over."""
    return len(_WORD.findall(text)) <= CONCISE_WORDS


def factors_of(evidence: Evidence) -> dict[str, float]:
    """The evidence as numbers for the caller to see (absent ones left out): `raw` is the
    confidence before calibration, `route_<name>` the answer's route."""
    out: dict[str, float] = {
        "raw": confidence_of(evidence),
        f"route_{evidence.route}": 1.0,
        "match": round(evidence.match, 3),
        "margin": round(evidence.margin, 3),
        "agreement": float(evidence.agreement),
        "found": 1.0 if evidence.found else 0.0,
        "quoted": 1.0 if evidence.quoted else 0.0,
        "shaped": 1.0 if evidence.shaped else 0.0,
        "direct": 1.0 if evidence.direct else 0.0,
    }
    if evidence.stale:
        out["stale"] = 1.0
    if evidence.spoken:
        out["spoken"] = 1.0
    if evidence.weekday:
        out["weekday"] = 1.0
    if evidence.entity is not None:
        out["entity_found"] = round(evidence.entity, 3)
    if evidence.time is not None:
        out["time_found"] = round(evidence.time, 3)
    if evidence.chain is not None:
        out["chain"] = round(evidence.chain, 3)
    return out
