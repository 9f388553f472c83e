"""The memories that answer a question: several retrievers, fused into one ranked list.

Retrievers (each gives scores in [0, 1]; any can be switched off):

* lexical: BM25 over memory texts (see `catalogue`), min-max scaled over its top list; two
  neighbouring question words the index holds as one word are searched joined too ("road
  trip" finds "roadtrip", `lexical.joined_pairs`);
* dense: k-NN through the memories' HNSW vector index, min-max scaled likewise;
* entity: memories mentioning the question's names, each name weighted by how specific
  it is (a name in nearly every memory says almost nothing), and those its named
  person said or did (author: a `who:` tag or a leading `Name: `); when the question
  names speakers, what other speakers said ranks lower (second-hand,
  `FusionWeights.other_author`); a speaker named only as the listener ("... recommend to
  Bram?") or an owner ("Bram's new job") is not the one asked about
  (`without_listeners`);
* time: memories inside the question's timeframe;
* graph: for multi-hop questions, spreading activation from the best hits through the
  concepts they are about to other memories about the same, weighted by the concept's
  specificity;
* neighbours: the memory just before and after a strong hit in time (the sentence that
  carries on a thought); when the hit ends with a question and that question is what
  matched (it holds at least as many of the asked words as the rest of the hit), the
  memory after it is the reply and ranks just above the hit, and the hit itself gives way
  (`FusionWeights.asking`): a question holds no answer. A hit that states something and
  then asks back ("... I baked for the school fair. How about you?") keeps its place, and a
  reply that asks back keeps its share as the reply. Another speaker's question to the
  asked speaker ("That loaf looks amazing! Did you bake it?") is answered by the asked
  speaker's next turn, which ranks just above it likewise. What the question's names add
  to a hit (the entity retriever's share) is not handed on: the reply takes the hit's
  share without it and adds its own, so the asked speaker's reply to someone else's
  question competes with the asked speaker's other words on equal terms.

Fusion is a weighted sum of the scaled scores: lexical and dense carry the weight, the
graph-side signals add candidates and re-rank, and a neighbour scores below the hit it
hangs on (a reply to a question just above it). A question that asks what would or might
be (`Intent.inferential`) leaves its hedging words out of the lexical query and leans on
dense (`FusionWeights.inferential_lexical`). A question that asks when or how long lifts the
best candidates that state a time (inside the question's window, when it has one) or a
duration (`FusionWeights.dated`); one that asks what
was done puts a memory that only tells a plan below the ones that tell the deed
(`FusionWeights.plan`). Age only breaks ties (a 1% weight), and not at all for a question
about a stated past window, so a memory that matches is never vetoed by its age.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from polyg_shared.intents import Intent, IntentType
from polyg_shared.retrieval import RETRIEVERS, ContextNode, MergedSubgraph, RecalledMemory
from polyg_shared.timeutil import to_epoch_ms

from polyg_core.errors import InvalidInput
from polyg_core.recall.answer.event_time import asks_time, duration_in, is_how_long, resolve
from polyg_core.recall.catalogue import CatalogueEntry, NamespaceCatalogue, name_tokens
from polyg_core.recall.classifier import without_hedges
from polyg_core.recall.context_nodes import iso_at, to_context
from polyg_core.recall.currency import (
    BELOW,
    CHANGE_NOUNS,
    CONSIDERED,
    EndedValue,
    accumulates,
    asks_about_earlier,
    asks_about_now,
    says_change,
    shapes_asked,
    supersede,
    unsettled,
    value_shapes,
)
from polyg_core.recall.filters import MemoryFilter
from polyg_core.recall.graph_memories import graph_signal
from polyg_core.recall.lexical import joined_pairs
from polyg_core.recall.memory_fit import (
    asked_words,
    asks_about_a_plan,
    asks_what_was_done,
    matched_sentence,
    tells_a_plan,
    tells_it_was_missed,
)
from polyg_core.recall.multihop import GATHER_ENTITY_WEIGHT, without_form_words
from polyg_core.recall.subjects import (
    about_another_numbered,
    asks_about_the_user,
    others_news_ahead,
    subjects_of,
    tells_of_another,
)
from polyg_core.storage.schema import MEMORY
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import knn
from polyg_core.text.names import STOP_WORDS as NAME_STOP_WORDS
from polyg_core.text.normalize import STOP_WORDS_EN

LEXICAL_K = 100
DENSE_K = 50
USERS_WINDOW = 50
"""Asked about the user, how many of the best memories are read for another's news that
would keep the user's notes from being compared (`subjects.others_news_ahead`)."""
LATER_SOURCES = 3
"""How many of the best first-stage hits `_later_near` looks after."""
LATER_K = 8
"""How many memories nearest each of them in meaning `_later_near` reads."""
SEEDS_FOR_EXPANSION = 10
DATED_CONSIDERED = 20
PLANS_CONSIDERED = 20
NEIGHBOUR_WINDOW_MS = 6 * 3600 * 1000
COMMON_NAME_SHARE = 0.3
DAY_MS = 86_400_000
# A retriever's list this long holds memories that do not answer: its lowest score is the
# reference for 0. A shorter one (a namespace of a few memories) is scaled from zero.
RANGE_FROM = 5
# Word weights for comparing two memories' subjects count the namespace as at least this
# large, so that in a handful of memories a shared name still weighs as a name.
IDF_COLLECTION_FLOOR = 1000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class FusionWeights:
    """How much each retriever's scaled score adds to a memory's fused score.

    Attributes:
        lexical, dense: the two text retrievers (equal by default: on real conversations
            each finds evidence the other misses).
        entity: the question's names (specificity-weighted) and their authors (0.1 since
            other speakers' memories give way on their own, `other_author`: dev R@10
            0.835 -> 0.845 against 0.2, R@1 unchanged).
        time: inside the question's timeframe.
        graph: reached through a shared concept from a strong hit.
        neighbours: a neighbour scores this share of its hit's fused score (max, not sum).
        reply: the share for the memory right after a hit whose final question matched,
            of the hit's score without its names' credit; the reply adds its own credit
            (`_name_credit`). Before, a reply by the asked speaker to another's question
            inherited a share of a score that held no credit for the name, and for a
            gathering question (entity 0.3 there) every other memory of that speaker the
            text retrievers found outranked it. Dev conversation R@1 0.504 -> 0.521, R@10
            0.858 -> 0.862, multi-hop R@10 0.586 -> 0.602; handing plain neighbours their
            own credit too cost single-hop R@10 0.943 -> 0.929.
        age: the tie-breaking weight of recency (exp(-days/30)).
        inferential_lexical: the lexical weight for a question that asks what would or might
            be ("Would Alice enjoy a theme park?"); dense takes the rest of lexical + dense.
            What answers it was said in other words than the question's (Alice's trips,
            not "theme park"), which the dense retriever matches and BM25 does not.
        asking: the factor on a strong hit whose closing question is what matched ("Which
            trail did you hike?"): it repeats the asked words and holds no answer, so the
            statements that answer (its reply, or what was told on another day) rank above
            it. Measured on the dev conversation: R@1 0.388 -> 0.420 at 0.7 (0.413 at 0.5
            and 0.6, 0.418 at 0.85).
        other_author: the factor on a memory by another speaker when the question names
            speakers ("What did Talia bake?"): what Oren said about her cake is second-hand,
            her own words answer (on the dev conversation 178 of 186 evidence turns of a
            question naming one speaker are that speaker's). R@1 0.420 -> 0.433 at 0.7.
            It also falls on a memory by the asked speaker that only asks someone else
            ("Talia: What did you bake?"): the asked words are about whom she asks, on top
            of `asking`. R@1 0.489 -> 0.492, no question's evidence ranks lower.
        dated: added to a best candidate that says when (or, for "how long", for how long)
            when the question asks when: "I paddled the race last Saturday" answers "When
            did Bruno race?", "That race sounds great!" does not. Dev conversation R@1
            0.423 -> 0.457 (temporal 0.649 -> 0.757) at 0.2, R@10 unchanged; 0.3 costs R@10.
        plan: the factor on a best candidate whose matched sentence tells a plan when the
            question asks what was done ("When did Ilse go to choir camp?": "We're thinking
            about going to choir camp next month" has not said she went;
            `recall.memory_fit`), or that tells it was missed ("... I missed it though").
            Dev conversation R@1 0.473 -> 0.482 (temporal 0.757 -> 0.784) at 0.7, the same
            at 0.6 and 0.8, R@10 unchanged; the missed deed moves two evidence turns up one
            rank, R@1 unchanged.
    """

    lexical: float = 0.5
    dense: float = 0.5
    entity: float = 0.1
    time: float = 0.3
    graph: float = 0.1
    neighbours: float = 0.6
    reply: float = 1.05
    age: float = 0.01
    inferential_lexical: float = 0.25
    asking: float = 0.7
    other_author: float = 0.7
    dated: float = 0.2
    plan: float = 0.7


def check_retrievers(names: Iterable[str] | None) -> frozenset[str]:
    """The retrievers to run: all when None, else exactly the given ones.

    Raises:
        InvalidInput: an unknown name (the message lists the known ones).
    """
    if names is None:
        return frozenset(RETRIEVERS)
    chosen = {n.strip().lower() for n in names if n.strip()}
    unknown = sorted(chosen - set(RETRIEVERS))
    if unknown:
        raise InvalidInput(
            f"unknown retriever(s) {', '.join(unknown)}; choose from {', '.join(RETRIEVERS)}"
        )
    if not chosen:
        raise InvalidInput(f"no retriever chosen; choose from {', '.join(RETRIEVERS)}")
    return frozenset(chosen)


def _scaled(scores: Mapping[str, float], ranged: bool, floor: float = 0.0) -> dict[str, float]:
    """Scores in [0, 1]: the best is 1. The reference for 0 is the lowest score of a list
    long enough to hold memories that do not answer (`ranged`: at least `RANGE_FROM`), else
    `floor`, the retriever's own zero: of three memories the runner-up keeps what it scored
    instead of nothing."""
    if not scores:
        return {}
    hi = max(scores.values())
    lo = min(scores.values()) if ranged else min(floor, min(scores.values()))
    if hi - lo < 1e-9:
        return {u: 1.0 for u in scores}
    return {u: (s - lo) / (hi - lo) for u, s in scores.items()}


@dataclass
class MemoryRanking:
    """Fused memories, best first, with each retriever's scaled scores, and for a question
    about the present which memory each changed one was superseded by."""

    ranked: list[tuple[CatalogueEntry, float]] = field(default_factory=lambda: [])
    signals: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    superseded_by: dict[str, str] = field(default_factory=dict[str, str])
    others: set[str] = field(default_factory=set[str])
    """For a question about the present or the past, the memories about someone close to
    whom is asked (`subjects.Subjects.others`): they answer nothing about them."""
    unsettled: set[str] = field(default_factory=set[str])
    """For a question about the present or the past (not about a plan), the memories that
    tell only a wish, a plan under thought or a rumour (`currency.unsettled`)."""
    old_values: set[str] = field(default_factory=set[str])
    """For a question about the present, the memories about an old value a later version
    replaced (`currency.Supersession.old_values`)."""
    came_after: set[str] = field(default_factory=set[str])
    """For "... before X?", the memories that hold X: they tell what came after
    (`_after_below`)."""
    closeness: dict[str, float] = field(default_factory=dict[str, float])
    """Each dense hit's cosine similarity to the question, unscaled: how close in meaning
    two memories are to it does not depend on how many others were found."""
    later_near: set[str] = field(default_factory=set[str])
    """Memories written after one of the best first-stage hits and near it in meaning that
    the first stage did not find (`_later_near`): currency compares them too."""

    def to_models(self, limit: int) -> list[RecalledMemory]:
        """The first `limit` memories as result models."""
        out: list[RecalledMemory] = []
        signals = list(self.signals.items())
        for entry, score in self.ranked[:limit]:
            uuid = entry.uuid
            found = {name: round(sig[uuid], 4) for name, sig in signals if uuid in sig}
            out.append(
                RecalledMemory(
                    uuid=uuid,
                    content=entry.content,
                    source_id=entry.source_id,
                    created_at=iso_at(entry.created_at) if entry.created_at else None,
                    score=round(max(score, 0.0), 6),
                    retrievers=found,
                )
            )
        return out


def _asks_what_was_asked(catalogue: NamespaceCatalogue, hit: str, asked: set[str]) -> bool:
    """Whether `hit` ends with a question that holds what was asked.

    True for a memory that is only a question; for one that says something and then asks,
    only when its last sentence holds at least as many of the asked words (`asked`: the
    question's lexical terms) as the sentences before it.
    """
    text = hit.rstrip()
    if not text.endswith("?"):
        return False
    parts = _SENTENCE_END.split(text)
    if len(parts) <= 1:
        return True
    tokens = catalogue.lexical.tokens
    last = asked.intersection(tokens(parts[-1]))
    before = asked.intersection(tokens(" ".join(parts[:-1])))
    return len(last) >= len(before)


_SPEAKER_PREFIX = re.compile(r"^\s*[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}:\s+")
_WORDS_OF_A_STATEMENT = 5
# "[shares a photo of a kiln]": a note about what came with the words, not something said.
_BRACKETED = re.compile(r"\[[^\]]*\]")


@functools.lru_cache(maxsize=1 << 14)
def only_asks(text: str) -> bool:
    """Whether a memory says nothing but asks: every sentence of five words or more is a
    question ("Wow, Noor! What trail did you hike?"), so it holds no answer of its own."""
    body = _BRACKETED.sub(" ", _SPEAKER_PREFIX.sub("", text.strip(), count=1))
    sentences = [p for p in _SENTENCE_END.split(body) if p.strip()]
    asks = False
    for sentence in sentences:
        if sentence.rstrip().endswith("?"):
            asks = True
        elif len(sentence.split()) >= _WORDS_OF_A_STATEMENT:
            return False
    return asks


_CLAUSE_END = re.compile(r",\s+|\s+[-–—]\s+|;\s+")
# Words a question opens with: a clause that opens with one asks, it states nothing.
_ASKING_OPENERS = frozenset({
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does",
    "did", "is", "are", "was", "were", "can", "could", "will", "would", "should", "shall",
    "have", "has", "had", "any", "anything",
})  # fmt: skip
_WORDS_OF_A_CLAUSE = 4


def states_then_asks(text: str) -> bool:
    """Whether a memory that asks opens with a statement of its own ("Anabela lives in
    Porto, visit her at Easter?"): it holds a value, whatever it asks after it."""
    body = _BRACKETED.sub(" ", _SPEAKER_PREFIX.sub("", text.strip(), count=1)).strip()
    first = _CLAUSE_END.split(_SENTENCE_END.split(body)[0])[0].strip()
    words = first.split()
    return (
        len(words) >= _WORDS_OF_A_CLAUSE
        and not first.endswith("?")
        and words[0].lower().strip("\"'“") not in _ASKING_OPENERS
    )


_CAPITALISED_WORD = re.compile(r"\b[A-Z][a-z]{2,}\b")


def _called_by_short_name(
    catalogue: NamespaceCatalogue, question: str, speakers: Sequence[str]
) -> list[str]:
    """Speakers the question names by the start of their first name ("Sam" for Samantha):
    a capitalised word that begins exactly one speaker's first name."""
    known = {_author_key(s) for s in speakers}
    authors = [a for a in catalogue.reader.author_keys() if a not in known]
    out: list[str] = []
    for m in _CAPITALISED_WORD.finditer(question):
        short = m.group(0).lower()
        if not catalogue.lexical.tokens(short):
            continue  # a stop word ("What", "How") is no name
        found = [a for a in authors if a.split()[0] != short and a.split()[0].startswith(short)]
        if len(found) == 1 and found[0] not in out:
            out.append(found[0])
    return out


_LISTENER = re.compile(r"\b(?:to|with)\s+$", re.IGNORECASE)
_POSSESSIVE_AFTER = re.compile(r"^['’]s\b")


def without_listeners(question: str, speakers: Sequence[str]) -> list[str]:
    """The speakers a question asks about, those it names only as a listener or an owner
    left out when another one remains: "What did Ines recommend to Bram?" and "What does
    Ines think of Bram's new job?" are answered in Ines's words; "What did Ines and Bram
    cook?" in both."""
    speakers = list(dict.fromkeys(speakers))
    if len(speakers) < 2:
        return speakers
    spoken: list[str] = []
    for name in speakers:
        first = name.split()[0] if name.split() else name
        found = [
            m
            for m in re.finditer(rf"\b{re.escape(first)}\b", question, re.IGNORECASE)
            if not _LISTENER.search(question[: m.start()])
            and not _POSSESSIVE_AFTER.match(question[m.end() :])
        ]
        # A speaker the question does not name as a word (a short name) stays asked about.
        if found or re.search(rf"\b{re.escape(first)}\b", question, re.IGNORECASE) is None:
            spoken.append(name)
    return spoken or speakers


def _author_key(name: str | None) -> str:
    return " ".join(name_tokens(name)) if name else ""


def _entity_signal(catalogue: NamespaceCatalogue, names: Sequence[str]) -> dict[str, float]:
    scores: dict[str, float] = defaultdict(float)
    for name in dict.fromkeys(names):
        found = catalogue.mention_uuids(name)
        if not found:
            continue
        weight = catalogue.specificity(len(found))
        for uuid in found:
            scores[uuid] += weight
        # What the named one said or did is about them even when the text never
        # names them; this holds however common the name is.
        for uuid in catalogue.authored_uuids(name):
            scores[uuid] += 1.0
    return _scaled_by_max(scores)


def _scaled_by_max(scores: Mapping[str, float]) -> dict[str, float]:
    hi = max(scores.values(), default=0.0)
    return {u: s / hi for u, s in scores.items()} if hi > 0 else {}


def _time_signal(
    catalogue: NamespaceCatalogue, intent: Intent
) -> tuple[dict[str, float], tuple[int, int] | None]:
    window = _question_window(intent)
    if window is None:
        return {}, None
    return {u: 1.0 for u in catalogue.created_between(*window)}, window


def _graph_signal(
    catalogue: NamespaceCatalogue, seeds: Sequence[tuple[str, float]]
) -> dict[str, float]:
    activation: dict[str, float] = defaultdict(float)
    for uuid, score in seeds:
        entry = catalogue.get(uuid)
        if entry is None or not entry.concepts:
            continue
        share = score / len(entry.concepts)
        for concept in entry.concepts:
            weight = catalogue.concept_specificity(concept)
            if weight <= 0:
                continue
            for other in catalogue.about_uuids(concept):
                if other != uuid:
                    activation[other] += share * weight
    return _scaled_by_max(activation)


async def rank_memories(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    question: str,
    intent: Intent,
    vector: npt.NDArray[np.float32] | None,
    *,
    now_ms: int,
    retrievers: Collection[str] = RETRIEVERS,
    weights: FusionWeights | None = None,
    memory_filter: MemoryFilter | None = None,
    names: Sequence[str] = (),
    decay_tau_days: float = 30.0,
    multi_hop: bool = False,
    graph_nodes: Sequence[ContextNode] = (),
    ended: Sequence[EndedValue] = (),
) -> MemoryRanking:
    """Rank the namespace's memories for a question (see the module docstring).

    `ended` holds values of the question's subjects that newer facts replaced (the
    temporal graph's supersession, `TemporalGraph.replaced_facts`).

    Reads only: the catalogue and the vector index.
    """
    first = await first_stage(
        store,
        namespace,
        catalogue,
        question,
        intent,
        vector,
        retrievers=retrievers,
        weights=weights,
        names=names,
        multi_hop=multi_hop,
    )
    return rank_after(
        first,
        now_ms=now_ms,
        memory_filter=memory_filter,
        decay_tau_days=decay_tau_days,
        graph_nodes=graph_nodes,
        ended=ended,
    )


@dataclass
class FirstStage:
    """The first-stage retrievers' scores for one question (lexical, dense, entity, time:
    none needs what the graph side reaches), from which `rank_after` finishes the ranking."""

    question: _Question | None
    ranking: MemoryRanking
    window: tuple[int, int] | None = None


async def first_stage(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    question: str,
    intent: Intent,
    vector: npt.NDArray[np.float32] | None,
    *,
    retrievers: Collection[str] = RETRIEVERS,
    weights: FusionWeights | None = None,
    names: Sequence[str] = (),
    multi_hop: bool = False,
) -> FirstStage:
    """`rank_memories`' first stage: it can run while the graph side expands."""
    out = MemoryRanking()
    if not len(catalogue):
        return FirstStage(None, out)
    q = _Question(
        catalogue=catalogue,
        text=without_hedges(question) if intent.inferential else question,
        intent=intent,
        speakers=without_listeners(
            question, [*names, *_called_by_short_name(catalogue, question, names)]
        ),
        weights=weights or FusionWeights(),
        retrievers=retrievers,
        multi_hop=multi_hop,
    )
    window = await _collect_signals(out, store, namespace, q, vector)
    # A question that gathers wants every value, one of what would be ("Would Ana enjoy a
    # cruise?") reasons from what was said, one about what held before a change finds the
    # note that held it: none asks for a value a later note replaced.
    if (
        vector is not None
        and "dense" in retrievers
        and not intent.inferential
        and not accumulates(q.text)
        and not asks_about_earlier(q.text)
    ):
        await _later_near(out, store, namespace, q, vector)
    return FirstStage(q, out, window)


async def _later_near(
    out: MemoryRanking,
    store: FalkorStore,
    namespace: str,
    q: _Question,
    vector: npt.NDArray[np.float32],
) -> None:
    """The memories written after one of the best `LATER_SOURCES` first-stage hits and
    among its `LATER_K` nearest in meaning, that no first-stage retriever found: a later
    version is often said in words far from the question ("first tandem w/ Goncalo, he
    wants to do football vocab" after "my tandem partner: Beatriz"), and among thousands of
    memories it ranks nowhere near the one it changes. Currency compares them with the best
    (`out.later_near`); only an update moves up. Those no retriever found join the ranking
    at the dense score of the farthest hit (0), their cosine to the question in
    `out.closeness`."""
    fused = _fuse(out.signals, _base_weights(q))
    sources = sorted(fused, key=lambda u: (-fused[u], u))[:LATER_SOURCES]
    if not sources:
        return
    try:
        res = await store.query(
            namespace,
            f"UNWIND $us AS u MATCH (s:{MEMORY} {{uuid: u}}) WHERE s.embedding IS NOT NULL "
            f"CALL db.idx.vector.queryNodes('{MEMORY}', 'embedding', $k, s.embedding) "
            "YIELD node "
            "RETURN u, node.uuid, 1.0 - vec.cosineDistance(node.embedding, vecf32($v))",
            {"us": sources, "k": LATER_K + 1, "v": [float(x) for x in vector]},
            read_only=True,
        )
    except Exception as exc:  # no vector index yet: nothing to find
        if "index" in str(exc).lower():
            return
        raise
    dense = out.signals.setdefault("dense", {})
    for source, uuid, similarity in res.rows:
        first, later = q.catalogue.get(str(source)), q.catalogue.get(str(uuid))
        if first is None or later is None or later.created_at <= first.created_at:
            continue
        out.later_near.add(later.uuid)
        if later.uuid not in fused:
            out.closeness[later.uuid] = float(similarity)
            dense[later.uuid] = 0.0


def rank_after(
    first: FirstStage,
    *,
    now_ms: int,
    memory_filter: MemoryFilter | None = None,
    decay_tau_days: float = 30.0,
    graph_nodes: Sequence[ContextNode] = (),
    ended: Sequence[EndedValue] = (),
) -> MemoryRanking:
    """`rank_memories` from its first stage, with the nodes the graph side reached."""
    q, out, window = first.question, first.ranking, first.window
    if q is None:
        return out
    fused = _fuse(out.signals, _base_weights(q))
    _expand_and_lift(out.signals, fused, q, graph_nodes)
    in_window = window is not None and window[1] < now_ms
    ranked = _scored_entries(
        q.catalogue,
        fused,
        memory_filter or MemoryFilter(),
        age_weight=0.0 if in_window else q.weights.age,
        now_ms=now_ms,
        decay_tau_days=decay_tau_days,
    )
    order = _in_order_of_currency(q, ranked, now_ms, ended, out.closeness, out.later_near)
    out.ranked, out.superseded_by = order.ranked, order.superseded_by
    out.others, out.unsettled, out.old_values = order.others, order.unsettled, order.old_values
    out.came_after = order.came_after
    return out


def _expand_and_lift(
    signals: dict[str, dict[str, float]],
    fused: dict[str, float],
    q: _Question,
    graph_nodes: Sequence[ContextNode],
) -> None:
    """From the fused scores' best seeds, add what shared concepts and neighbouring turns
    reach, then lift what says when for a when question and put others' words about the
    asked speakers below their own."""
    seeds = sorted(fused.items(), key=lambda kv: -kv[1])[:SEEDS_FOR_EXPANSION]
    # Spreading through shared concepts joins memories a multi-hop question needs together;
    # on other questions it only adds noise (measured: R@1 0.375 vs 0.365 when always on).
    if "graph" in q.retrievers and seeds and q.multi_hop:
        _add_graph(signals, fused, q.catalogue, seeds, graph_nodes)
    if "neighbours" in q.retrievers and seeds:
        _add_neighbours(signals, fused, q, seeds)
    if q.weights.dated and asks_time(q.text):
        _dated_up(fused, q)
    if q.weights.plan < 1.0:
        _plans_below(fused, q)
    if q.speakers and q.weights.other_author < 1.0:
        _second_hand_below(fused, q)


def _in_order_of_currency(
    q: _Question,
    ranked: list[tuple[CatalogueEntry, float]],
    now_ms: int,
    ended: Sequence[EndedValue],
    closeness: Mapping[str, float],
    later: Collection[str] = (),
) -> _Currency:
    """Best first, updates placed for what the question asks: the current value for the
    present, the replaced one for "before", every value for a question that gathers;
    `later`: memories currency compares beside the best (`MemoryRanking.later_near`)."""
    catalogue = q.catalogue
    if accumulates(q.text):
        # A question that gathers ("what events has Noa joined?") wants every value said;
        # a later one adds to the earlier ones instead of replacing them.
        ranked.sort(key=lambda es: (-es[1], es[0].created_at, es[0].uuid))
    elif asks_about_now(q.text, q.intent, now_ms):
        # What is current wins: ties go to the newer memory, and an update ranks above
        # what it changes (recall.currency). A question for a reason ("Why does Lena
        # commute by train?") asks what was said of a cause, not a value a later note
        # replaces: a newer note about the same person is no update of it.
        ranked.sort(key=lambda es: (-es[1], -es[0].created_at, es[0].uuid))
        if q.intent.type is IntentType.WHY:
            return _Currency(ranked)
        return _reordered(
            catalogue, q.text, ranked, _subjects(q), ended, meaning=closeness, later=later
        )
    else:
        ranked.sort(key=lambda es: (-es[1], es[0].created_at, es[0].uuid))
        if asks_about_earlier(q.text):
            # What held before a change: the changed memory ranks above its update (and
            # is marked as changed, so that the answer quotes it, not the update).
            return _reordered(
                catalogue,
                q.text,
                ranked,
                _subjects(q),
                ended,
                earlier=True,
                meaning=closeness,
                later=later,
            )
    return _Currency(ranked)


@dataclass(frozen=True)
class _Currency:
    """Memories in the order of what is current (`_in_order_of_currency`)."""

    ranked: list[tuple[CatalogueEntry, float]]
    superseded_by: dict[str, str] = field(default_factory=dict[str, str])
    others: set[str] = field(default_factory=set[str])
    unsettled: set[str] = field(default_factory=set[str])
    old_values: set[str] = field(default_factory=set[str])
    came_after: set[str] = field(default_factory=set[str])


@dataclass(frozen=True)
class _Question:
    """What one ranking needs to know about the question and how to rank it."""

    catalogue: NamespaceCatalogue
    text: str
    intent: Intent
    speakers: Sequence[str]
    weights: FusionWeights
    retrievers: Collection[str]
    multi_hop: bool

    @property
    def names(self) -> list[str]:
        """The question's names and the speakers it names."""
        return [*self.intent.entities, *self.speakers]


async def _collect_signals(
    out: MemoryRanking,
    store: FalkorStore,
    namespace: str,
    q: _Question,
    vector: npt.NDArray[np.float32] | None,
) -> tuple[int, int] | None:
    """Each first-stage retriever's scaled scores into `out.signals` (and the dense hits'
    cosines into `out.closeness`); the question's time window."""
    signals = out.signals
    if "lexical" in q.retrievers:
        signals["lexical"] = _lexical_signal(q)
    if "dense" in q.retrievers and vector is not None:
        out.closeness = await _dense_hits(store, namespace, q.catalogue, vector)
        signals["dense"] = _scaled(
            out.closeness,
            # Cosine has no usable zero (unrelated texts score anywhere from 0 to 0.3, and
            # short texts that share a name far more): dense stays scaled over its own list.
            # Measured: scaling a short list from 0.2 lets BM25 outvote dense on a question
            # that asks what would be ("Would Dana enjoy a theme park?").
            ranged=True,
        )
    if "entity" in q.retrievers and q.names:
        signals["entity"] = _entity_signal(q.catalogue, q.names)
    window: tuple[int, int] | None = None
    if "time" in q.retrievers:
        signals["time"], window = _time_signal(q.catalogue, q.intent)
    return window


def _lexical_signal(q: _Question) -> dict[str, float]:
    semantic = q.intent.semantic_query
    query = semantic if semantic.strip() else q.text
    text = f"{q.text} {query}" if query != q.text else q.text
    text = without_form_words(text)
    lexical = q.catalogue.lexical
    joined = joined_pairs(
        q.text,
        lambda word: any(lexical.idf(t) > 0 for t in lexical.tokens(word)),
        STOP_WORDS_EN,
    )
    if joined:
        text = f"{text} {' '.join(joined)}"
    hits = q.catalogue.bm25(text, LEXICAL_K)
    return _scaled({e.uuid: s for e, s in hits}, ranged=len(hits) >= RANGE_FROM)


async def _dense_hits(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    vector: npt.NDArray[np.float32],
) -> dict[str, float]:
    """The memories nearest the question by vector, with their cosine similarity."""
    found = await knn(store, namespace, MEMORY, vector.tolist(), DENSE_K, fields=("uuid",))
    return {h.uuid: h.similarity for h in found if catalogue.get(h.uuid)}


def _base_weights(q: _Question) -> dict[str, float]:
    """The first-stage retrievers' weights for this question."""
    w = q.weights
    lexical_weight = w.lexical
    dense_weight = w.dense
    if q.intent.inferential:
        lexical_weight = min(w.inferential_lexical, w.lexical + w.dense)
        dense_weight = w.lexical + w.dense - lexical_weight
    return {
        "lexical": lexical_weight,
        "dense": dense_weight,
        "entity": GATHER_ENTITY_WEIGHT if q.multi_hop else w.entity,
        "time": w.time,
    }


def _fuse(
    signals: Mapping[str, Mapping[str, float]], base_weights: Mapping[str, float]
) -> dict[str, float]:
    """The weighted sum over the text retrievers' candidates (over entity and time when
    neither text retriever ran or found anything)."""
    # A dict, not a set: the candidates keep the order their retrievers gave them, so
    # the fused scores' order (and every tie it decides) does not hang on the hash seed.
    candidates: dict[str, None] = {}
    for name in ("lexical", "dense"):
        candidates.update(dict.fromkeys(signals.get(name, {})))
    if not candidates:
        for name in ("entity", "time"):
            candidates.update(dict.fromkeys(signals.get(name, {})))
    fused: dict[str, float] = defaultdict(float)
    for uuid in candidates:
        fused[uuid] = sum(
            weight * signals.get(name, {}).get(uuid, 0.0) for name, weight in base_weights.items()
        )
    return fused


def _add_graph(
    signals: dict[str, dict[str, float]],
    fused: dict[str, float],
    catalogue: NamespaceCatalogue,
    seeds: Sequence[tuple[str, float]],
    graph_nodes: Sequence[ContextNode],
) -> None:
    top = seeds[0][1] or 1.0
    spread = _graph_signal(catalogue, [(u, s / top) for u, s in seeds])
    # What the expansion views and PPR reached through entities and concepts.
    graph, graph_weight = graph_signal(catalogue, spread, graph_nodes)
    signals["graph"] = graph
    for uuid, s in graph.items():
        fused[uuid] += graph_weight * s


def _add_neighbours(
    signals: dict[str, dict[str, float]],
    fused: dict[str, float],
    q: _Question,
    seeds: Sequence[tuple[str, float]],
) -> None:
    catalogue = q.catalogue
    nb: dict[str, float] = {}
    asked = set(catalogue.lexical.tokens(q.text))
    asked_authors = {_author_key(n) for n in q.speakers}
    asking: dict[str, float] = {}
    credit = _name_credit(signals, q)
    for uuid, score in _lending(seeds, q):
        hit = catalogue.entries[catalogue.position[uuid]]
        # A hit that only asks holds no answer whatever part of it matched ("Great news,
        # Noor! How is the new kiln?" matched on the name): dev R@1 0.457 -> 0.460, R@10
        # 0.850 -> 0.853.
        # ... but one that states before it asks ("Ana lives in Porto, visit her at
        # Easter?") holds its own.
        bare = only_asks(hit.content) and not states_then_asks(hit.content)
        asks = bare or _asks_what_was_asked(catalogue, hit.content, asked)
        if asks:
            asking[uuid] = q.weights.asking
            if _asks_the_other(hit, asked_authors, whole=bare):
                asking[uuid] *= q.weights.other_author
        answered = asks or _remark_to_the_asked(hit, asked_authors)
        for other in catalogue.neighbours(uuid, NEIGHBOUR_WINDOW_MS):
            # A memory whose closing question matched is answered by the next one: the
            # reply holds what the question was about, so it ranks just above the hit.
            # A reply by someone other than the person asked about answers for its
            # author, not for them: it keeps the ordinary neighbour's share.
            if answered and _replies(catalogue, hit, other, asked_authors):
                share = q.weights.reply * (score - credit(uuid)) + credit(other.uuid)
            else:
                share = q.weights.neighbours * score
            if share > nb.get(other.uuid, 0.0):
                nb[other.uuid] = share
    # A hit that asks gives way before its neighbours take their shares: a reply that asks
    # back ("... Pebble, my tortoise. How are your pets?") keeps the share it has as the
    # reply, its closing question notwithstanding.
    for uuid, factor in asking.items():
        fused[uuid] *= factor
    nb = {u: s for u, s in nb.items() if s > fused.get(u, 0.0)}
    top = max(nb.values(), default=0.0)
    signals["neighbours"] = {u: s / top for u, s in nb.items()} if top > 0 else {}
    fused.update(nb)


def _lending(seeds: Sequence[tuple[str, float]], q: _Question) -> list[tuple[str, float]]:
    """The `seeds` that lend their neighbours a share: asked about the user, not another's
    news (`subjects.tells_of_another`), which lends nothing to what was written beside it."""
    if not asks_about_the_user(q.text):
        return list(seeds)
    entry = q.catalogue.entries
    position = q.catalogue.position
    return [(u, s) for u, s in seeds if not tells_of_another(entry[position[u]].content)]


def _replies(
    catalogue: NamespaceCatalogue,
    hit: CatalogueEntry,
    other: CatalogueEntry,
    asked_authors: Collection[str],
) -> bool:
    """Whether `other` is the reply to `hit`'s question: someone else's turn right after
    it (the next of a user's notes, or of anyone's words without a known author, answers
    no question of the one before: "rapid rating 1320?? same as blitz lol", then a note
    on something else written the same day), by the person asked about if any."""
    return (
        hit.author is not None
        and other.author is not None
        and _author_key(other.author) != _author_key(hit.author)
        and catalogue.follows(other, hit)
        and (not asked_authors or _author_key(other.author) in asked_authors)
    )


def _name_credit(
    signals: Mapping[str, Mapping[str, float]], q: _Question
) -> Callable[[str], float]:
    """What the question's names added to a memory's fused score (the entity retriever's
    weighted score): it belongs to the memory by the named one, so a neighbour does not
    inherit its hit's credit and gets its own."""
    entity = signals.get("entity", {})
    weight = _base_weights(q)["entity"]
    return lambda uuid: weight * entity.get(uuid, 0.0)


_ADDRESSED = re.compile(r"\b(?:you|your|yours|yourself|yourselves|ya)\b", re.IGNORECASE)


def _asks_the_other(hit: CatalogueEntry, asked_authors: Collection[str], *, whole: bool) -> bool:
    """Whether a memory whose question matched is the asked speaker's question to someone
    else ("Noor: What pet do you have?" for "What pet does Noor have?"): the asked words are
    about whom Noor asks, as second-hand as another speaker's words about Noor. For a memory
    that only asks (`whole`) any sentence may address the other; else its closing question
    must ("Noor: Great news! Any hobbies you're trying out?" for "What hobbies does Noor
    have?")."""
    if not asked_authors or _author_key(hit.author) not in asked_authors:
        return False
    text = _BRACKETED.sub(" ", hit.content).rstrip()
    asked_part = text if whole else _SENTENCE_END.split(text)[-1]
    return _ADDRESSED.search(asked_part) is not None


def _remark_to_the_asked(hit: CatalogueEntry, asked_authors: Collection[str]) -> bool:
    """Whether a hit is another speaker's question to the asked speaker ("Oren: That loaf
    looks amazing! Did you bake it?" for "Did Talia bake the rye loaf?"): second-hand, it
    matched on what the asked speaker did, and the asked speaker's next turn answers it
    first-hand. A remark that asks nothing ("That race sounds great!") reacts to what was
    said before it; the next turn need not say more of it."""
    if not asked_authors or not hit.author or _author_key(hit.author) in asked_authors:
        return False
    if "?" not in hit.content:
        return False
    if _ADDRESSED.search(hit.content) is not None:
        return True
    body = _author_key(_SPEAKER_PREFIX.sub("", hit.content, count=1))
    return any(f" {a} " in f" {body} " for a in asked_authors)


def _plans_below(fused: dict[str, float], q: _Question) -> None:
    """Asked what someone did, a memory whose matched sentence tells a plan ("we're thinking
    about going camping next month") has not said it happened: among the best candidates
    it gives way to the ones that tell the deed (`recall.memory_fit`)."""
    if not asks_what_was_done(q.text):
        return
    catalogue = q.catalogue
    tokens = catalogue.lexical.tokens
    names = [*catalogue.reader.author_keys(), *q.speakers]
    asked = asked_words(
        without_form_words(q.text),
        tokens,
        lambda term: catalogue.lexical.idf(term, at_least=IDF_COLLECTION_FLOOR),
        leave_out={t for n in names for t in tokens(n)},
    )
    best = sorted(fused.items(), key=lambda kv: -kv[1])[:PLANS_CONSIDERED]
    for uuid, _ in best:
        entry = catalogue.get(uuid)
        if entry is None:
            continue
        sentence, _ = matched_sentence(entry.content, asked, tokens)
        if tells_a_plan(sentence) or tells_it_was_missed(entry.content):
            fused[uuid] *= q.weights.plan


def _dated_up(fused: dict[str, float], q: _Question) -> None:
    """A question that asks when (or how long) is answered by a memory that says when (or
    how long): among the best candidates, those that date what they tell score higher."""
    how_long = is_how_long(q.text)
    window = _question_window(q.intent)
    best = sorted(fused.items(), key=lambda kv: -kv[1])[:DATED_CONSIDERED]
    for uuid, _ in best:
        entry = q.catalogue.get(uuid)
        if entry is None:
            continue
        text = entry.content
        if how_long:
            says = duration_in(text) is not None
        else:
            dated = resolve(text, entry.created_at)
            # "When did Ilse go camping in April?": a memory of April that dates its camping
            # "last year" tells of another trip; it says when, but not when asked.
            says = dated is not None and (
                window is None or window[0] <= dated.start_ms <= window[1]
            )
        if says:
            fused[uuid] += q.weights.dated


def _question_window(intent: Intent) -> tuple[int, int] | None:
    """The question's timeframe in epoch ms (open ends far away), None without one."""
    tf = intent.timeframe
    if tf is None or (tf.start is None and tf.end is None):
        return None
    lo = to_epoch_ms(tf.start) if tf.start is not None else -(2**62)
    hi = to_epoch_ms(tf.end) if tf.end is not None else 2**62
    return lo, hi


def _second_hand_below(fused: dict[str, float], q: _Question) -> None:
    """A question about what a speaker said or did is answered in their own words: what
    another speaker said about them ("That race sounds great!") is second-hand."""
    asked = {_author_key(n) for n in q.speakers}
    for uuid in fused:
        entry = q.catalogue.get(uuid)
        if entry is not None and entry.author and _author_key(entry.author) not in asked:
            fused[uuid] *= q.weights.other_author


def _scored_entries(
    catalogue: NamespaceCatalogue,
    fused: Mapping[str, float],
    flt: MemoryFilter,
    *,
    age_weight: float,
    now_ms: int,
    decay_tau_days: float,
) -> list[tuple[CatalogueEntry, float]]:
    """The fused memories that pass the filter, recency added as a tie-breaker."""
    ranked: list[tuple[CatalogueEntry, float]] = []
    for uuid, score in fused.items():
        entry = catalogue.get(uuid)
        if entry is None or (flt.active and not flt.matches_entry(entry.category, entry.tags)):
            continue
        if age_weight:
            days = max(0.0, (now_ms - entry.created_at) / DAY_MS)
            score += age_weight * math.exp(-days / decay_tau_days)
        ranked.append((entry, score))
    return ranked


_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def _subjects(q: _Question) -> list[str]:
    """The names the question asks about: its entities and speakers, and any capitalised
    words the memories mention as a name ("Does Kemal Droste eat meat?")."""
    names = list(q.names)
    for name in capitalised_names(q.text, q.catalogue.lexical.tokens):
        if name not in names and q.catalogue.mention_uuids(name):
            names.append(name)
    return names


_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\"“(]\s*)$")


def capitalised_names(question: str, tokens: Callable[[str], Sequence[str]]) -> list[str]:
    """The runs of capitalised words in a question that can be names, function words left
    out ("Did Kemal Droste ..." names "Kemal Droste").

    A single capitalised word that opens a sentence is capitalised by grammar, not as a
    name: "How does Noor unwind?" names Noor, not "How" (a word in many memories that,
    taken as a name, made any later memory holding "how" and "now" an update of an earlier
    one holding "how"). A name that opens the question is one of the classifier's entities.
    """
    out: list[str] = []
    for m in _CAPITALISED.finditer(question):
        run = re.sub(r"(?:'s|’s)$", "", m.group(0)).split()
        words = [w for w in run if w.lower() not in NAME_STOP_WORDS and tokens(w)]
        if len(run) == 1 and _SENTENCE_START.search(question[: m.start()]) is not None:
            continue
        name = " ".join(words)
        if name and name not in out:
            out.append(name)
    return out


def _reordered(
    catalogue: NamespaceCatalogue,
    question: str,
    ranked: list[tuple[CatalogueEntry, float]],
    names: Sequence[str],
    ended: Sequence[EndedValue],
    *,
    earlier: bool = False,
    meaning: Mapping[str, float] | None = None,
    later: Collection[str] = (),
) -> _Currency:
    """Updates above what they change (or, `earlier`, the changed memories above their
    updates), which memory each changed one was superseded by, and the memories about
    someone close to whom is asked."""
    lexical = catalogue.lexical
    stating, asking = _stating_and_asking(ranked)
    stating, ahead = _users_notes_first(question, stating)
    # Currency compares the best `CONSIDERED`, and the later memories near the best in
    # meaning (`later`): their subjects are read among them (and among the notes that
    # only ask, whose news may be another's or a rumour).
    stating, compared = _with_later(stating, later)
    considered = [e for e, _ in stating[:compared]]
    read = [*considered, *(e for e, _ in asking)]
    about = subjects_of(catalogue, question, names, read, COMMON_NAME_SHARE)
    # Notes about another of a numbered thing asked ("ward 9" for "ward 8") are others'.
    others = about.others | about_another_numbered(question, read)
    # Question words ("how", "what", "does") are in most memories and say nothing of what
    # a memory is about: two that share only "how" are no versions of one another.
    function_words = {t for w in NAME_STOP_WORDS for t in lexical.tokens(w)}
    wishes = _wishes(question, read)
    asked = [t for t in lexical.tokens(question) if t not in function_words]
    asked_shapes = shapes_asked(set(asked), lexical.tokens, question)
    moved = supersede(
        stating,
        asked,
        lexical.tokens,
        lambda term: lexical.idf(term, at_least=IDF_COLLECTION_FLOOR),
        common=about.common,
        named=about.compared,
        ended=ended,
        earlier=earlier,
        meaning=meaning,
        name_terms={t for n in names for t in lexical.tokens(n)},
        people=about.people,
        kept=about.kept,
        required=about.named,
        others=others,
        unsettled=wishes,
        considered=compared,
        asked_shapes=asked_shapes,
    )
    scores = dict(moved.scores)
    # ... and a wish answers less than any note that states a value, unless a later note
    # changed it (what held before may have been said beside a plan: "cholesterol 6.1,
    # gp wants to retest").
    wishes -= moved.superseded_by.keys()
    # Asked about the user, another's news goes below the user's notes, unless it is a
    # later version of one of them.
    news = {e.uuid for e in considered if e.uuid in about.news_of_others} | ahead
    strangers = news - _versions_of_others(moved.superseded_by, news)
    below = [*stating[:CONSIDERED], *_among(stating[CONSIDERED:], ahead)]
    _others_below(below, scores, others | wishes | strangers, asking)
    _shapeless_below(stating[:CONSIDERED], scores, asked_shapes)
    out = [(e, scores.get(e.uuid, s)) for e, s in ranked]
    if scores:
        newest_first = -1 if not earlier else 1
        out.sort(key=lambda es: (-es[1], newest_first * es[0].created_at, es[0].uuid))
    came_after: set[str] = set()
    if earlier:
        out, came_after = _after_below(out, question, lexical.tokens, function_words)
    return _Currency(out, moved.superseded_by, others, wishes, moved.old_values, came_after)


def _users_notes_first(
    question: str, stating: list[tuple[CatalogueEntry, float]]
) -> tuple[list[tuple[CatalogueEntry, float]], set[str]]:
    """Asked about the user, `stating` with another's news among its best `USERS_WINDOW`
    (`subjects.others_news_ahead`) moved after the rest, so that the user's notes are
    compared; and the news moved."""
    ahead = others_news_ahead(question, [e for e, _ in stating[:USERS_WINDOW]])
    if not ahead:
        return stating, ahead
    return [*_among(stating, ahead, keep=False), *_among(stating, ahead)], ahead


def _among(
    ranked: Sequence[tuple[CatalogueEntry, float]], uuids: Collection[str], *, keep: bool = True
) -> list[tuple[CatalogueEntry, float]]:
    """The memories of `ranked` in `uuids` (`keep`), or those not in it, in order."""
    return [(e, s) for e, s in ranked if (e.uuid in uuids) == keep]


def _versions_of_others(superseded_by: Mapping[str, str], news: Collection[str]) -> set[str]:
    """The later versions of the memories that are not another's `news`: another's news
    that is one stays where currency put it."""
    return {new for old, new in superseded_by.items() if old not in news}


def _with_later(
    stating: list[tuple[CatalogueEntry, float]], later: Collection[str]
) -> tuple[list[tuple[CatalogueEntry, float]], int]:
    """`stating` with the `later` memories beyond the best `CONSIDERED` moved just after
    them, and how many currency compares: the best and those."""
    near = [es for es in stating[CONSIDERED:] if es[0].uuid in later]
    rest = [es for es in stating[CONSIDERED:] if es[0].uuid not in later]
    return [*stating[:CONSIDERED], *near, *rest], CONSIDERED + len(near)


# "Where did I live before Birchfield Road?": what the question says came after.
_BEFORE_WHAT = re.compile(r"\bbefore\s+([^,?!.]+)", re.IGNORECASE)


def _after_below(
    ranked: list[tuple[CatalogueEntry, float]],
    question: str,
    tokens: Callable[[str], list[str]],
    left_out: set[str],
) -> tuple[list[tuple[CatalogueEntry, float]], set[str]]:
    """For "... before X?", the best `CONSIDERED` memories that hold all of X's words and
    say no change go just below the best one that does not: they tell what came after
    ("Keys for 14 Birchfield Road!" for "Where did I live before Birchfield Road?")."""
    m = _BEFORE_WHAT.search(question)
    if m is None or _A_CHANGE.search(m.group(1)) is not None:
        # "before the upgrade": the change itself, which currency places (a note of the
        # old value may name the change it awaited: "upgrade planned someday").
        return ranked, set()
    after = set(tokens(m.group(1))) - left_out
    if not after:
        return ranked, set()
    top = ranked[:CONSIDERED]
    # A note that says the change names both values ("Priya left, and now Daniel Kim is
    # my manager"): it answers what held before too.
    holding = [
        es for es in top if after <= set(tokens(es[0].content)) and not says_change(es[0].content)
    ]
    rest = [es for es in top if es not in holding]
    if not holding or not rest:
        return ranked, set()
    # ... and below it in score too: the answer reads the memories by score.
    best, score = rest[0]
    below = [(e, min(s, score - (i + 1) * BELOW)) for i, (e, s) in enumerate(holding)]
    moved = [(best, score), *below, *rest[1:], *ranked[CONSIDERED:]]
    return moved, {e.uuid for e, _ in holding}


_A_CHANGE = re.compile(rf"\b(?:{CHANGE_NOUNS})s?\b", re.IGNORECASE)


def _stating_and_asking(
    ranked: list[tuple[CatalogueEntry, float]],
) -> tuple[list[tuple[CatalogueEntry, float]], list[tuple[CatalogueEntry, float]]]:
    """The ranked memories that state something, and those among the best `CONSIDERED`
    that only ask.

    A memory that only asks ("How is the new flat?") states no value: it updates nothing,
    whatever words it shares with the question. A rumour or another's news may be written
    as a question ("Tomasz might go in w/ a firm in Milton Keynes?? prob nothing", "kenji's
    dog Tofu at the office friday??"): it goes below with the wishes and others' news.
    """
    stating = [
        (e, score) for e, score in ranked if not only_asks(e.content) or states_then_asks(e.content)
    ]
    states = {e.uuid for e, _ in stating[:CONSIDERED]}
    return stating, [(e, s) for e, s in ranked[:CONSIDERED] if e.uuid not in states]


def _wishes(question: str, considered: Sequence[CatalogueEntry]) -> set[str]:
    """The considered memories that tell only a wish, a plan under thought or a rumour
    (`currency.unsettled`): "Noa wants to move to Lisbon someday" is no later version of
    where Noa lives. None when the question asks about the plan itself ("Is Noa thinking
    of moving?")."""
    if asks_about_a_plan(question):
        return set()
    return {e.uuid for e in considered if unsettled(e.content)}


def _others_below(
    considered: Sequence[tuple[CatalogueEntry, float]],
    scores: dict[str, float],
    others: set[str],
    asking: Sequence[tuple[CatalogueEntry, float]] = (),
) -> None:
    """A note about someone close to whom is asked ("Ines's partner is a paramedic")
    answers nothing about them: it goes below the considered notes that are not such
    (`scores`, the new scores, updated in place), and so does such a note among those
    that only ask (`asking`; the others of them keep their place)."""
    rest = [scores.get(e.uuid, s) for e, s in considered if e.uuid not in others]
    if not others or not rest:
        return
    floor = min(rest) - BELOW
    for e, s in [*considered, *asking]:
        if e.uuid in others:
            scores[e.uuid] = min(scores.get(e.uuid, s), floor)


def _shapeless_below(
    considered: Sequence[tuple[CatalogueEntry, float]],
    scores: dict[str, float],
    shapes: frozenset[str],
) -> None:
    """For a question that asks for a value of a shape by name ("What's Rahul's mobile?"),
    the considered notes that give none of that shape go below the best that gives one
    ("rahul says the freezer alarm goes to his phone now" below a note with his number);
    `scores`, the new scores, is updated in place."""
    if not shapes:
        return
    given = [scores.get(e.uuid, s) for e, s in considered if value_shapes(e.content) & shapes]
    if not given:
        return
    best = max(given)
    for e, s in considered:
        if not value_shapes(e.content) & shapes and scores.get(e.uuid, s) >= best:
            scores[e.uuid] = best - BELOW


def with_memories(merged: MergedSubgraph, ranking: MemoryRanking, count: int) -> MergedSubgraph:
    """The merged subgraph with the best `count` ranked memories in it, at their fused score.

    The fused score is scaled so the best memory scores as high as the best graph node:
    the answer's evidence sits beside the graph context instead of far below it.
    """
    top = ranking.ranked[:count]
    if not top:
        return merged
    best_node = max((n.score for n in merged.nodes), default=1.0) or 1.0
    best_memory = top[0][1] or 1.0
    ours: dict[str, ContextNode] = {}
    for entry, score in top:
        props = {
            "uuid": entry.uuid,
            "content": entry.content,
            "category": entry.category,
            "created_at": entry.created_at,
            "source_id": entry.source_id,
        }
        if entry.uuid in ranking.superseded_by:
            props["superseded_by"] = ranking.superseded_by[entry.uuid]
        if entry.uuid in ranking.others:
            props["about_someone_close"] = True
        if entry.uuid in ranking.unsettled:
            props["unsettled"] = True
        if entry.uuid in ranking.old_values:
            props["about_an_old_value"] = True
        if entry.uuid in ranking.came_after:
            props["came_after"] = True
        node = to_context(MEMORY, props, best_node * max(score, 0.0) / best_memory)
        ours[entry.uuid] = node.model_copy(update={"views": ["semantic"]})
    nodes = [n for n in merged.nodes if n.uuid not in ours]
    nodes.extend(ours.values())
    nodes.sort(key=lambda n: (-n.score, n.text))
    return merged.model_copy(update={"nodes": nodes})
