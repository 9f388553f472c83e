"""The current value first, the old one as history.

Recall marks, for a question about the present, each ranked memory that a later one
changed (`superseded_by`, see `polyg_core.recall.currency`). When the best memory in the
subgraph is such an update, the answer quotes it and names what it replaced only as
history: "The Beacon team took over the notification service. Until 2026-05-30: the
notification service was owned by Atlas."

The other way round for a question about the value before a change ("Who did Ilse report
to before the reorg?", "What did Bruno use to drive?"): the answer quotes what held then,
and a later memory that says the value changed and speaks to the same asked words is named
after it as what came later: "Ilse reports to Bram. Since 2026-05-22: after the reorg Ilse
reports to Noor instead."
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from polyg_shared.intents import IntentType
from polyg_shared.retrieval import ContextNode
from polyg_shared.timeutil import from_epoch_ms

from polyg_core.recall.answer.evidence import AnswerGraph, Question
from polyg_core.recall.answer.words import as_sentence, best_sentence, overlap
from polyg_core.recall.currency import says_change

__all__ = [
    "Update",
    "asks_current_when",
    "current_update",
    "history_note",
    "later_change",
    "later_note",
]

# "When does the backup start?", "How long before a session times out?" and "How late is
# the pool open?" ask for a current value; "When did Jonas move?" for the time of an event, which the WHEN answer
# gives.
_ASKS_CURRENT_WHEN = re.compile(
    r"^\s*(?:(?:when|what\s+(?:time|date|day)|how\s+(?:long|often|much|many|late|early))"
    r"\s+(?:\w+\s+)?"
    r"(?:do|does|is|are|can)\b|how\s+long\s+(?:before|until)\b|when['’]s\b"
    # "What's the start date for the reno?": a date that holds now.
    r"|what(?:['’]s|\s+is|\s+are)\s+(?:\w+\s+){0,3}(?:date|day|time|deadline)s?\b)",
    re.I,
)


def asks_current_when(question: str) -> bool:
    """Whether a WHEN question asks for a current value ("When does the backup start?",
    "What time is the pickup?"), not for the time of an event."""
    return _ASKS_CURRENT_WHEN.search(question) is not None


@dataclass(frozen=True)
class Update:
    """The best memory, an update, and the memories it superseded (most relevant first)."""

    current: ContextNode
    replaced: list[ContextNode]


def _created(node: ContextNode) -> int:
    value = node.attributes.get("created_at")
    return int(value) if isinstance(value, int) else 0


def current_update(q: Question, g: AnswerGraph) -> Update | None:
    """The update the answer should give, when the subgraph's best memory supersedes others.

    Only for questions that ask for a value (who, what, where, explore; a "when does ..."
    about a current schedule), never for why or the time of an event.
    """
    kind = q.intent.type
    if kind == IntentType.WHY:
        return None
    if kind == IntentType.WHEN and not asks_current_when(q.text):
        return None
    memories = g.of("S_Memory")
    if not memories:
        return None
    best = max(memories, key=lambda n: (n.score, _created(n)))
    replaced = [
        n
        for n in memories
        if n.attributes.get("superseded_by") == best.uuid and n.uuid != best.uuid
    ]
    if not replaced:
        return None
    # The most relevant of what it replaced is the history worth naming.
    replaced.sort(key=lambda n: (n.score, _created(n)), reverse=True)
    return Update(best, replaced)


def history_note(q: Question, update: Update) -> str:
    """ "Until <date of the update>: <what the replaced memory said>."""
    old = update.replaced[0]
    when = _created(update.current)
    until = from_epoch_ms(when).date().isoformat() if when else "earlier"
    said = as_sentence(best_sentence(q.wanted, old.text))
    return f"Until {until}: {said}"


SPEAKS_SHARE = 0.5
"""A later memory speaks to what was asked when its best sentence holds at least this
share of what the answered memory's best sentence holds of the asked words."""


def later_change(q: Question, g: AnswerGraph, answered: ContextNode) -> ContextNode | None:
    """For a question about the value before a change: the newest memory written after the
    answered one that says the value changed (`currency.says_change`) and speaks to the
    asked words about as well; None when there is none."""
    fit = overlap(q.wanted, best_sentence(q.wanted, answered.text))
    if fit <= 0:
        return None
    later = [
        n
        for n in g.of("S_Memory")
        if n.uuid != answered.uuid
        and _created(n) > _created(answered)
        and says_change(n.text)
        and overlap(q.wanted, best_sentence(q.wanted, n.text)) >= SPEAKS_SHARE * fit
    ]
    return max(later, key=_created) if later else None


def later_note(q: Question, later: ContextNode) -> str:
    """ "Since <date of the later memory>: <what it said>." """
    when = _created(later)
    since = from_epoch_ms(when).date().isoformat() if when else "later"
    said = as_sentence(best_sentence(q.wanted, later.text))
    return f"Since {since}: {said}"
