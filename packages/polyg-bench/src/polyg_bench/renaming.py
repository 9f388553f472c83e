"""A retrieval dataset with its speakers renamed, and recall measured again on it.

Ranking tuned on one conversation can come to lean on its speakers' names. Renaming the
speakers (in the speaker fields, the turns, the questions and the gold answers) and asking
the same questions again shows how much of a recall figure depends on who the speakers
are: the evidence ids and every other character stay as they were.

What is renamed, for each speaker of the mapping (case-sensitive, whole words only, so
`Will` never touches `Willow` or `will`):

* the speaker fields (the conversation's `speakers` and each turn's `speaker`);
* every occurrence of the name, the possessive `Name's` included;
* its short forms: a capitalised word of at least three letters that is a proper prefix of
  the name and occurs as a whole word in the turns (`Ros` or `Rosa` for `Rosalind`). A
  short form becomes the new name's prefix of the same length, or the whole new name when
  that is shorter. A word that is a prefix of two speakers' names cannot be told apart and
  stays as it is; a word that is a speaker's full name is that speaker's name, never a
  short form.

`NAME_PAIRS` is the bench's fixed list of invented names; `variant_names` picks a
conversation's names from it deterministically, and `run_renamed` ingests and asks each
variant in namespaces of its own.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory

from polyg_bench.dataset import Conversation, Dataset, Question
from polyg_bench.retrieval import KS, RetrievalReport, run_retrieval

NAME_PAIRS: tuple[tuple[str, str], ...] = (
    ("Talia", "Bram"),
    ("June", "Will"),
    ("Odette", "Kasimir"),
    ("Hope", "Mark"),
    ("Priya", "Tobias"),
    ("Grace", "Summer"),
    ("Ingrid", "Desmond"),
    ("May", "Rose"),
    ("Noor", "Lucian"),
    ("Faith", "Bill"),
)
"""Invented speaker names, two per pair: plain names, and names that are also English words
or months (June, Will, Hope, Mark, Grace, Summer, May, Rose, Faith, Bill)."""

SPARE_NAMES: tuple[str, ...] = ("Ivy", "Robin", "Iris", "Dawn", "Clay")
"""Names given in place of a pair's name that already occurs in a conversation as a word
(words too, but seldom capitalised in talk, so a variant keeps its kind of name); variant
k starts at the k-th, so that variants differ."""

SHORT_FORM_MIN = 3
"""The fewest letters a short form of a name has."""

_LETTERS = r"[^\W\d_]"
_CAPITALISED_WORD = re.compile(rf"(?<!\w){_LETTERS}{{{SHORT_FORM_MIN},}}(?!\w)")


def _whole(words: Iterable[str]) -> re.Pattern[str]:
    """Any of `words` as a whole word (no letter, digit or underscore either side), the
    longest first so that a name wins over its own prefix."""
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in ordered) + r")(?!\w)")


def speakers_of(conversation: Conversation) -> list[str]:
    """The conversation's speakers: its `speakers` list, then any other turn's speaker, in
    order, without repeats or blanks."""
    out: list[str] = []
    named = [s.strip() for s in conversation.speakers]
    turns = [t.speaker.strip() for s in conversation.sessions for t in s.turns]
    for name in [*named, *turns]:
        if name and name not in out:
            out.append(name)
    return out


@dataclass(frozen=True)
class _Scope:
    """The conversations a renaming applies to, and their questions."""

    conversations: list[Conversation]
    questions: list[Question]

    @classmethod
    def of(cls, dataset: Dataset, conversation_id: str | None) -> _Scope:
        convs = [c for c in dataset.conversations if conversation_id in (None, c.id)]
        if conversation_id is not None and not convs:
            known = ", ".join(repr(c.id) for c in dataset.conversations)
            raise InvalidInput(
                f"no conversation {conversation_id!r} in the dataset to rename speakers in "
                f"(it has {known or 'none'})"
            )
        ids = {c.id for c in convs}
        return cls(convs, [q for q in dataset.questions if q.conversation_id in ids])

    @property
    def speakers(self) -> list[str]:
        out: list[str] = []
        for conv in self.conversations:
            out += [s for s in speakers_of(conv) if s not in out]
        return out

    @property
    def turn_texts(self) -> list[str]:
        return [t.text for c in self.conversations for s in c.sessions for t in s.turns]

    @property
    def texts(self) -> list[str]:
        """Every text a name can occur in: speaker fields, turns, questions, answers."""
        named = [s for c in self.conversations for s in c.speakers]
        speakers = [t.speaker for c in self.conversations for s in c.sessions for t in s.turns]
        asked = [text for q in self.questions for text in (q.question, q.answer)]
        return [*named, *speakers, *self.turn_texts, *asked]


def occurs_as_word(word: str, texts: Iterable[str]) -> bool:
    """Whether `word` occurs as a whole word (case-sensitive) in any of `texts`."""
    pattern = _whole([word])
    return any(pattern.search(t) for t in texts)


def short_forms(speakers: Sequence[str], turn_texts: Iterable[str]) -> dict[str, str]:
    """Short form to the speaker it stands for (see the module doc), found in `turn_texts`."""
    found: dict[str, str] = {}
    for text in turn_texts:
        for word in _CAPITALISED_WORD.findall(text):
            if not word[0].isupper() or word in found or word in speakers:
                continue
            owners = [s for s in speakers if len(s) > len(word) and s.startswith(word)]
            if len(owners) == 1:
                found[word] = owners[0]
    return found


def _check_mapping(mapping: Mapping[str, str], scope: _Scope) -> None:
    """Refuse a mapping that cannot rename the scope's speakers one to one."""
    if not mapping:
        raise InvalidInput("the renaming names no speaker: give old name -> new name pairs")
    speakers = scope.speakers
    unknown = [old for old in mapping if old not in speakers]
    if unknown:
        raise InvalidInput(
            f"cannot rename {', '.join(map(repr, unknown))}: not a speaker of the dataset "
            f"(its speakers: {', '.join(map(repr, speakers)) or 'none'})"
        )
    _check_new_names(mapping)
    texts = scope.texts
    taken = [new for new in mapping.values() if occurs_as_word(new, texts)]
    if taken:
        raise InvalidInput(
            f"{', '.join(map(repr, taken))} already occurs in the dataset as a word: the "
            "renamed speaker could not be told from it; choose another name"
        )


def _check_new_names(mapping: Mapping[str, str]) -> None:
    """Refuse a blank or padded new name, and one new name for two speakers."""
    for old, new in mapping.items():
        if not new.strip() or new != new.strip() or not re.search(_LETTERS, new):
            raise InvalidInput(
                f"the new name for {old!r} is {new!r}: give a name with letters and no "
                "leading or trailing spaces"
            )
    news = list(mapping.values())
    doubled = sorted({n for n in news if news.count(n) > 1})
    if doubled:
        olds = [old for old, new in mapping.items() if new in doubled]
        raise InvalidInput(
            f"{', '.join(map(repr, olds))} would all be renamed {doubled[0]!r}: give each "
            "speaker a name of its own"
        )


def _replacements(mapping: Mapping[str, str], scope: _Scope) -> dict[str, str]:
    """Each word to replace (names, then short forms) and what replaces it."""
    out = dict(mapping)
    for short, speaker in short_forms(scope.speakers, scope.turn_texts).items():
        if speaker in mapping:
            new = mapping[speaker]
            out[short] = new[: len(short)] if len(new) >= len(short) else new
    return out


def rename_speakers(
    dataset: Dataset, mapping: Mapping[str, str], conversation_id: str | None = None
) -> Dataset:
    """A copy of `dataset` with the speakers of `mapping` renamed (see the module doc).

    Ids, sessions' times, evidence and categories are untouched, and so is every character
    of a text that is not a speaker's name or short form; `dataset` itself is not changed.

    Args:
        dataset: the conversations and questions.
        mapping: old speaker name to new name.
        conversation_id: rename in this conversation and its questions only (default: in
            every conversation and question).

    Raises:
        InvalidInput: no conversation has `conversation_id`; the mapping is empty, names
            a speaker the dataset (or that conversation) lacks, gives two speakers one
            name, gives a blank name, or a new name already occurs there as a word.
    """
    scope = _Scope.of(dataset, conversation_id)
    _check_mapping(mapping, scope)
    replace = _replacements(mapping, scope)
    pattern = _whole(replace)

    def sub(text: str) -> str:
        return pattern.sub(lambda m: replace[m.group(0)], text)

    out = dataset.model_copy(deep=True)
    ids = {c.id for c in scope.conversations}
    for conv in out.conversations:
        if conv.id not in ids:
            continue
        conv.speakers = [mapping.get(s.strip(), s) for s in conv.speakers]
        for session in conv.sessions:
            for turn in session.turns:
                turn.speaker = mapping.get(turn.speaker.strip(), turn.speaker)
                turn.text = sub(turn.text)
    for q in out.questions:
        if q.conversation_id in ids:
            q.question = sub(q.question)
            q.answer = sub(q.answer)
    return out


def check_variant_count(count: int) -> int:
    """`count` when it is a number of variants the bench can make (0 is none).

    Raises:
        InvalidInput: `count` is below 0 or above the number of name pairs.
    """
    if not 0 <= count <= len(NAME_PAIRS):
        raise InvalidInput(
            f"--renamed-speakers is {count}: give 1 to {len(NAME_PAIRS)} (one variant per "
            "invented name pair the bench has), or 0 for none"
        )
    return count


def variant_names(dataset: Dataset, variant: int) -> dict[str, dict[str, str]]:
    """Per conversation id, its speakers' new names in variant `variant` (1-based).

    Variant k takes names from pair k of `NAME_PAIRS` on (pairs k, k+1, ..., wrapping
    around), one per speaker in order, so a conversation with more speakers takes more
    names. A name that already occurs in the conversation as a word (a month, a word
    that starts a sentence) cannot be given; its place goes to the first free name of
    `SPARE_NAMES` from the k-th on (wrapping around), then of the rest of the list.
    Conversations without speakers are left out.

    Raises:
        InvalidInput: `variant` is out of range, or a conversation has more speakers than
            the lists have names it can take.
    """
    if not 1 <= variant <= len(NAME_PAIRS):
        raise InvalidInput(
            f"there is no renaming variant {variant}: the bench has variants 1 to "
            f"{len(NAME_PAIRS)}, one per invented name pair"
        )
    names = [name for pair in NAME_PAIRS for name in pair]
    start = 2 * (variant - 1)
    ordered = names[start:] + names[:start]
    out: dict[str, dict[str, str]] = {}
    for conv in dataset.conversations:
        speakers = speakers_of(conv)
        if not speakers:
            continue
        texts = _Scope.of(dataset, conv.id).texts
        chosen = _chosen_names(len(speakers), ordered, texts, variant)
        if len(chosen) < len(speakers):
            raise InvalidInput(
                f"conversation {conv.id!r} has {len(speakers)} speakers but only "
                f"{len(chosen)} of the bench's invented names can name them (the others "
                "are words of it already)"
            )
        out[conv.id] = dict(zip(speakers, chosen, strict=True))
    return out


def _chosen_names(count: int, ordered: list[str], texts: list[str], variant: int) -> list[str]:
    """Up to `count` names for a conversation's speakers (`variant_names`): each slot's
    own name of `ordered`, else the first free spare."""
    free = [n for n in [*ordered, *SPARE_NAMES] if not occurs_as_word(n, texts)]
    turn = (variant - 1) % len(SPARE_NAMES)
    spare = [*SPARE_NAMES[turn:], *SPARE_NAMES[:turn]]
    spares = [n for n in [*spare, *ordered[count:]] if n in free]
    chosen: list[str] = []
    for slot in ordered[:count]:
        pick = next((n for n in [slot, *spares] if n in free and n not in chosen), None)
        if pick is not None:
            chosen.append(pick)
    return chosen


def renamed_variant(dataset: Dataset, variant: int) -> tuple[Dataset, dict[str, dict[str, str]]]:
    """`dataset` with every conversation's speakers renamed as `variant_names` says, and
    those names."""
    names = variant_names(dataset, variant)
    out = dataset
    for conversation_id, mapping in names.items():
        out = rename_speakers(out, mapping, conversation_id)
    return out, names


@dataclass
class RenamedRun:
    """One variant: its names (per conversation, old to new) and its retrieval report."""

    variant: int
    names: dict[str, dict[str, str]]
    report: RetrievalReport

    @property
    def label(self) -> str:
        """The new names, conversation after conversation."""
        return "; ".join(", ".join(m.values()) for m in self.names.values())


async def run_renamed(
    memory: Memory,
    dataset: Dataset,
    count: int,
    *,
    namespace_prefix: str = "bench_retrieval_renamed",
    keep: bool = False,
    retrievers: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[RenamedRun]:
    """Ingest and ask `dataset` again with its speakers renamed, variants 1 to `count`.

    Variant k's namespaces are `<prefix><k>_<conversation index>`, deleted afterwards
    unless `keep`.

    Raises:
        InvalidInput: `count` out of range (before anything is ingested).
    """
    check_variant_count(count)
    variants = [renamed_variant(dataset, k) for k in range(1, count + 1)]
    runs: list[RenamedRun] = []
    for k, (renamed, names) in enumerate(variants, start=1):

        def said(line: str, k: int = k) -> None:
            if progress is not None:
                progress(f"renamed speakers, variant {k}/{count}: {line}")

        report = await run_retrieval(
            memory,
            renamed,
            namespace_prefix=f"{namespace_prefix}{k}",
            keep=keep,
            retrievers=retrievers,
            progress=said,
        )
        runs.append(RenamedRun(k, names, report))
    return runs


def polyg_recall(report: RetrievalReport, ks: Sequence[int] = KS) -> dict[str, dict[str, float]]:
    """polyg's recall@k per category (and `overall`, last), unrounded."""
    return {
        cat: {f"R@{k}": report.recall(lambda q: q.ranked.get("polyg", []), cat, k) for k in ks}
        for cat in [*report.categories, "overall"]
    }


def comparison_table(
    given: RetrievalReport, runs: Sequence[RenamedRun], ks: Sequence[int] = KS
) -> list[dict[str, Any]]:
    """Rows of {category, run, speakers, n, R@k...}: per category (`overall` last), the
    dataset as given, each variant, the variants' mean and minimum, and as given minus
    that mean (positive: the given names helped)."""
    columns = [f"R@{k}" for k in ks]
    ours = polyg_recall(given, ks)
    theirs = [polyg_recall(r.report, ks) for r in runs]
    rows: list[dict[str, Any]] = []
    for cat, values in ours.items():
        n = len([q for q in given.questions if cat in ("overall", q.category)])
        head = {"category": cat, "n": n}
        rows.append({**head, "run": "as given", "speakers": "as given", **_rounded(values)})
        per_variant = [t.get(cat, {}) for t in theirs]
        for run, got in zip(runs, per_variant, strict=True):
            rows.append({**head, "run": f"variant {run.variant}", "speakers": run.label})
            rows[-1] |= _rounded(got)
        if not runs:
            continue
        mean = {c: statistics.fmean(v.get(c, 0.0) for v in per_variant) for c in columns}
        low = {c: min(v.get(c, 0.0) for v in per_variant) for c in columns}
        gap = {c: values[c] - mean[c] for c in columns}
        rows.append({**head, "run": "mean", "speakers": "variants", **_rounded(mean)})
        rows.append({**head, "run": "min", "speakers": "variants", **_rounded(low)})
        rows.append({**head, "run": "as given - mean", "speakers": "", **_rounded(gap)})
    return rows


def _rounded(values: Mapping[str, float]) -> dict[str, float]:
    # + 0.0: a difference that rounds to nothing reads 0.0, never -0.0.
    return {k: round(v, 3) + 0.0 for k, v in values.items()}


def renamed_data(given: RetrievalReport, runs: Sequence[RenamedRun]) -> dict[str, Any]:
    """The comparison as plain JSON-ready data: each variant's names, namespaces and polyg
    table, and the comparison rows."""
    return {
        "variants": [
            {
                "variant": r.variant,
                "names": r.names,
                "namespaces": r.report.namespaces,
                "table": [row for row in r.report.table() if row["system"] == "polyg"],
            }
            for r in runs
        ],
        "comparison": comparison_table(given, runs),
    }
