"""What the graph side reached, as memories: the graph retriever's candidates for fusion.

The expansion views and personalized PageRank return nodes of every graph: memories,
the concepts memories are about, entities, events. Fusion ranks memories, so what the
graph side found has to be said in memories to survive it:

* a memory node counts with its own score;
* a concept counts for every memory about it, weighted by the concept's specificity
  (a concept nearly every memory is about says little), its score shared among them;
* the people a gathering question names reach their own memories (those they said, or
  for a name that says nothing, those that name it): the ones nearest the question by
  the concepts they are about (a concept is a phrase of its memories, so this matches
  phrase by phrase) and by their whole vectors. "What has Dana cooked for her family?"
  is answered by Dana's memories about meals, cakes and dinners, said on many days in
  words far from the question's; among all memories they rank low, among Dana's first.
  When the people's memories are reached, they lead the graph retriever and it weighs
  more in fusion (`graph_signal`). Each person is ranked on their own, so each speaker
  of a two-person conversation keeps their memories; for a question naming several,
  what joins them (a concept or a rare word their memories share) leads (`_joined`);
  for a question asking for named things, memories that name something do (`_Named`).
  What a person says about the one they talk to ("You'll be a great coach!") is about
  the listener, not what the person did: it counts for less (`speaks_to_listener`), and
  so does a memory that closes on a question ("Love the colours! Which paints did the
  class use?"): it hands the turn to the listener (`asks_back`).

Scores are scaled by the best, so this is one more signal in [0, 1] beside the others.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
from polyg_shared.retrieval import ContextNode, ViewResult

from polyg_core.graphs.walks import GraphWalks
from polyg_core.recall.catalogue import CatalogueEntry, NamespaceCatalogue
from polyg_core.recall.concurrency import both
from polyg_core.recall.context_nodes import to_context
from polyg_core.recall.lexical import idf
from polyg_core.recall.multihop import (
    GATHER_GRAPH_WEIGHT,
    GATHER_PEOPLE_WEIGHT,
    asks_for_names,
    asks_to_gather,
)
from polyg_core.recall.view_context import Seeds
from polyg_core.storage.schema import CONCEPT, MEMORY
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import knn
from polyg_core.text.names import find_names

MAX_MEMORIES_PER_CONCEPT = 40
"""A concept more memories than this are about spreads to none of them (a hub)."""
PERSON_TOP = 30
"""How many of a named person's memories, most like the question first, the graph names."""
CONCEPT_K = 100
"""Concepts nearest the question that lead to the people's memories."""
WHOLE_MEMORY_SHARE = 0.25
"""The weight of the ranking by whole-memory vectors beside the ranking by concepts
(whose phrases match a gathering question's topic better than a whole memory's vector)."""
PERSON_REACH = 3.0
"""How much a named person's memory weighs beside the rest of what the graph side
reached (the views, PPR, concepts), which only breaks ties among them."""
PERSON_ATTRIBUTE = "person"
"""Marks the memory nodes that are the named people's (`people_memories`)."""
RANK_OFFSET = 10
"""Reciprocal-rank offset when the two rankings of the people's memories are fused."""
MAX_PEOPLE_SHARE = 0.6
"""Named people whose memories are more than this share of all say little about which."""
NAMED_BONUS = 0.5
"""What a memory that names something gains when the question asks for named things."""
NAMED_POOL = 60
"""How many of a person's best memories are looked at for names."""
JOIN_BONUS = 0.5
"""What a memory holding something several named people's memories hold gains."""
JOIN_WORD_SHARE = 0.05
"""A word joins two people's memories when at most this share of memories hold it."""
MAX_PERSON_MEMORIES = 5000
"""The newest memories of the named people compared with the question, at most."""
ADDRESSED_SHARE = 0.5
"""What a person's memory that speaks about its listener keeps of its score
(`speaks_to_listener`, `asks_back`). Dev conversation multi-hop R@10 0.562 -> 0.594 (0.2:
the same) for the first; 0.594 -> 0.602 for a memory that asks back."""

_FIRST_PERSON = frozenset(
    [
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "we're",
        "we've",
        "we'd",
        "we'll",
        "us",
        "our",
        "ours",
        "ourselves",
    ]
)
_SECOND_PERSON = frozenset(
    ["you", "you're", "you've", "you'd", "you'll", "your", "yours", "yourself", "yourselves"]
)
_PRONOUN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SPEAKER_PREFIX = re.compile(r"^\s*[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}:\s+")
_BRACKETED = re.compile(r"\[[^\]]*\]")


# The rules below read one memory's text alone, and each recall that gathers asks them of
# the same memories again: their answers are kept per text (bounded), as the rules are.
_PER_TEXT = 1 << 16


@functools.lru_cache(maxsize=_PER_TEXT)
def speaks_to_listener(text: str) -> bool:
    """Whether a memory is about the one it speaks to rather than its author: it says
    "you" and "your" more often than "I", "my", "we" and "our" (a leading "Name: " and a
    bracketed caption left out). "You'll be a great coach, your team is lucky!" is what
    Dana said about Lee; "I took my nephews to the zoo" is what Dana did."""
    body = _BRACKETED.sub(" ", _SPEAKER_PREFIX.sub("", text, count=1))
    words = _PRONOUN_WORD.findall(body.lower().replace("\u2019", "'"))
    first = sum(1 for w in words if w in _FIRST_PERSON)
    second = sum(1 for w in words if w in _SECOND_PERSON)
    return second > first


@functools.lru_cache(maxsize=_PER_TEXT)
def asks_back(text: str) -> bool:
    """Whether a memory closes on a question (a bracketed caption after it left out):
    "Love the colours! Which paints did the class use?" hands the turn to the listener,
    and what it holds of its author's own doings is mostly said elsewhere. Among the first
    20 memories recalled for the dev conversation's multi-hop questions, 6 of the 50
    evidence turns close on a question against 176 of the 590 others."""
    return _BRACKETED.sub(" ", text).rstrip().endswith("?")


def memories_reached(
    catalogue: NamespaceCatalogue, nodes: Iterable[ContextNode]
) -> tuple[dict[str, float], dict[str, float]]:
    """What the graph side's nodes reach (see module doc): memory uuid -> activation from
    the views, PPR and concepts, and from the named people's memories, each in [0, 1]."""
    activation: dict[str, float] = defaultdict(float)
    people: dict[str, float] = {}
    for node in nodes:
        if node.score <= 0:
            continue
        if node.label == MEMORY and node.attributes.get(PERSON_ATTRIBUTE):
            people[node.uuid] = max(people.get(node.uuid, 0.0), node.score)
        elif node.label == MEMORY and catalogue.get(node.uuid) is not None:
            activation[node.uuid] = max(activation[node.uuid], node.score)
        elif node.label == CONCEPT:
            about = catalogue.about_uuids(node.uuid)
            if not about or len(about) > MAX_MEMORIES_PER_CONCEPT:
                continue
            weight = catalogue.concept_specificity(node.uuid) * node.score
            for uuid in about:
                activation[uuid] += weight
    return scaled_by_max(activation), scaled_by_max(people)


def graph_signal(
    catalogue: NamespaceCatalogue, spread: Mapping[str, float], nodes: Iterable[ContextNode]
) -> tuple[dict[str, float], float]:
    """The graph retriever's scores in [0, 1] and its weight in fusion.

    `spread`: activation spread from the best hits through their concepts; `nodes`: what
    the graph side reached (`graph_reach`). With the named people's memories among them,
    those lead (the rest breaks their ties) and the retriever weighs
    `GATHER_PEOPLE_WEIGHT`: they are what the question gathers around. Otherwise the
    views, PPR and the spread weigh `GATHER_GRAPH_WEIGHT`.
    """
    reached, people = memories_reached(catalogue, nodes)
    other = {u: spread.get(u, 0.0) + reached.get(u, 0.0) for u in {*spread, *reached}}
    if not people:
        return scaled_by_max(other), GATHER_GRAPH_WEIGHT
    other = scaled_by_max(other)
    mixed = {u: PERSON_REACH * people.get(u, 0.0) + other.get(u, 0.0) for u in {*people, *other}}
    return scaled_by_max(mixed), GATHER_PEOPLE_WEIGHT


def scaled_by_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores divided by the best one (empty when none is positive)."""
    hi = max(scores.values(), default=0.0)
    return {u: s / hi for u, s in scores.items()} if hi > 0 else {}


def _people_entries(catalogue: NamespaceCatalogue, people: Sequence[str]) -> list[CatalogueEntry]:
    """The memories of the named people, newest first, at most `MAX_PERSON_MEMORIES`:
    for a person who said some of the memories (their author), those; for a name that
    authors nothing (a third person, a service), the memories that name it. In a
    conversation each speaker names the other in passing ("Thanks, Dana!"), so what names
    a speaker is mostly not about them."""
    found: dict[str, CatalogueEntry] = {}
    for name in dict.fromkeys(people):
        own = catalogue.authored_by(name)
        for entry in own or catalogue.mentions(name):
            found[entry.uuid] = entry
    newest = sorted(found.values(), key=lambda e: -e.created_at)
    return newest[:MAX_PERSON_MEMORIES]


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    ordered = sorted(scores.items(), key=lambda us: (-us[1], us[0]))
    return {uuid: i for i, (uuid, _) in enumerate(ordered)}


async def _by_concepts(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    vector: npt.NDArray[np.float32],
    among: Collection[str],
) -> dict[str, float]:
    """Memories of `among` about the concepts nearest the question: a concept names a
    phrase of the memories about it, so this matches the question phrase by phrase where
    a whole memory's vector blurs it. Score: the best concept's similarity times its
    specificity."""
    # Only the concepts' uuids are read: the other properties of the 216 rows asked for
    # (2k+16) were most of the reply, and nothing below reads them.
    hits = await knn(store, namespace, CONCEPT, vector.tolist(), CONCEPT_K, fields=("uuid",))
    scores: dict[str, float] = {}
    for hit in hits:
        about = catalogue.about(hit.uuid)
        if not about or len(about) > MAX_MEMORIES_PER_CONCEPT:
            continue
        score = hit.similarity * catalogue.concept_specificity(hit.uuid)
        for entry in about:
            if entry.uuid in among and score > scores.get(entry.uuid, 0.0):
                scores[entry.uuid] = score
    return scores


async def people_memories(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    people: Sequence[str],
    vector: npt.NDArray[np.float32] | None,
    question: str = "",
) -> list[ContextNode]:
    """The named people's memories most like the question (`vector`), as memory nodes
    scored in [0, 1]: each person's memories ranked by their whole vectors and by the
    concepts they are about, the two ranks fused (reciprocal rank), the best
    `PERSON_TOP` of each person kept (see `_joined` for a question naming several).

    A question asking for things told by name (`multihop.asks_for_names`: "Which bands
    has Dana seen?") is answered by memories that name something ("It was The Lumens!",
    said in no word of the question): among each person's best, those gain `NAMED_BONUS`.
    """
    if vector is None or not people:
        return []
    groups = _people_groups(catalogue, people)
    entries = {e.uuid: e for group in groups for e in group}
    if not entries:
        return []
    # Two independent reads, sent together.
    similarity, concepts = await both(
        GraphWalks(store).memory_similarity(namespace, list(entries), vector.tolist()),
        _by_concepts(store, namespace, catalogue, vector, entries),
    )
    sims = dict(similarity)
    named = _Named(catalogue, people) if asks_for_names(question) else None
    tops = [_person_top(group, concepts, sims, named) for group in groups]
    scores = _joined(catalogue, tops)
    out: list[ContextNode] = []
    for uuid, score in sorted(scores.items(), key=lambda us: (-us[1], us[0])):
        entry = entries[uuid]
        props = {"uuid": uuid, "content": entry.content, "created_at": entry.created_at}
        node = to_context(MEMORY, props, score)
        attributes = {**node.attributes, PERSON_ATTRIBUTE: True}
        out.append(node.model_copy(update={"attributes": attributes}))
    return out


def _people_groups(
    catalogue: NamespaceCatalogue, people: Sequence[str]
) -> list[list[CatalogueEntry]]:
    """Each named one's memories (`_people_entries`), one group per name, leaving out a
    name whose memories are nearly all (`MAX_PEOPLE_SHARE`): it tells nothing about which
    memories gather. Each speaker of a two-person conversation has about half: each one's
    own memories still gather what the question asks of them."""
    groups: list[list[CatalogueEntry]] = []
    for name in dict.fromkeys(people):
        group = _people_entries(catalogue, [name])
        if group and len(group) <= MAX_PEOPLE_SHARE * len(catalogue):
            groups.append(group)
    return groups


class _Named:
    """Which memories name something other than the asked people and the speakers."""

    def __init__(self, catalogue: NamespaceCatalogue, people: Sequence[str]) -> None:
        self.catalogue = catalogue
        self.known = {" ".join(p.lower().split()) for p in people}

    def __call__(self, uuid: str) -> bool:
        entry = self.catalogue.get(uuid)
        if entry is None:
            return False
        for name in _names_in(entry.content):
            key = " ".join(name.lower().split())
            if key in self.known:
                continue
            if self.catalogue.authored_uuids(name):
                # A speaker of the namespace named in passing ("Thanks, Lee!").
                self.known.add(key)
                continue
            return True
        return False


@functools.lru_cache(maxsize=_PER_TEXT)
def _names_in(text: str) -> tuple[str, ...]:
    """The names `find_names` finds in a memory's text, in order (their types are not
    read, so not guessed)."""
    return tuple(mention.name for mention in find_names(text, typed=False))


def _person_top(
    group: Sequence[CatalogueEntry],
    concepts: Mapping[str, float],
    sims: Mapping[str, float],
    named: _Named | None = None,
) -> dict[str, float]:
    """The best `PERSON_TOP` memories of one person, scored in (0, 1] by the fused ranks of
    their concepts and of their whole vectors among that person's memories; one about the
    listener or that asks back keeps `ADDRESSED_SHARE` (with `named`, those of the best
    `NAMED_POOL` that name something gain `NAMED_BONUS`)."""
    own = {e.uuid for e in group}
    fused: dict[str, float] = defaultdict(float)
    for scores, weight in ((concepts, 1.0), (sims, WHOLE_MEMORY_SHARE)):
        ranks = _ranks({u: s for u, s in scores.items() if u in own})
        for uuid, rank in ranks.items():
            fused[uuid] += weight / (RANK_OFFSET + rank)
    for entry in group:
        if entry.uuid in fused and (speaks_to_listener(entry.content) or asks_back(entry.content)):
            fused[entry.uuid] *= ADDRESSED_SHARE
    if named is not None:
        pool = sorted(fused.items(), key=lambda us: (-us[1], us[0]))[:NAMED_POOL]
        for uuid, _ in pool:
            if named(uuid):
                fused[uuid] *= 1.0 + NAMED_BONUS
    top = sorted(fused.items(), key=lambda us: (-us[1], us[0]))[:PERSON_TOP]
    best = top[0][1] if top else 1.0
    return {uuid: score / best for uuid, score in top}


def _joined(catalogue: NamespaceCatalogue, tops: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """One score per memory over the people's tops: its best. For a question naming
    several ("What have Dana and Lee both painted?"), what joins them is something
    memories of more than one of them are about (Dana's sunset, Lee's sunset): a concept,
    or a word few memories hold (`_join_keys`). A memory holding such a shared thing gains
    `JOIN_BONUS`, scaled back into [0, 1]."""
    scores: dict[str, float] = {}
    for top in tops:
        for uuid, score in top.items():
            scores[uuid] = max(scores.get(uuid, 0.0), score)
    if len(tops) < 2:
        return scores
    keys = {uuid: _join_keys(catalogue, uuid) for uuid in scores}
    owners: dict[str, set[int]] = defaultdict(set)
    for i, top in enumerate(tops):
        for uuid in top:
            for key in keys[uuid]:
                owners[key].add(i)
    shared = {key for key, who in owners.items() if len(who) > 1}
    for uuid in scores:
        if shared.intersection(keys[uuid]):
            scores[uuid] *= 1.0 + JOIN_BONUS
    return scaled_by_max(scores)


def _join_keys(catalogue: NamespaceCatalogue, uuid: str) -> set[str]:
    """What a memory is about that can join it to another person's: its concepts, and its
    words held by few memories (at most `JOIN_WORD_SHARE` of them, or two): "kayak" joins
    "I enjoy kayaking" and "Kayaking is my passion" where their concepts differ."""
    entry = catalogue.get(uuid)
    if entry is None:
        return set()
    lexical = catalogue.lexical
    rare = idf(len(lexical), max(2, int(JOIN_WORD_SHARE * len(lexical))))
    words = {f"word:{t}" for t in lexical.tokens(entry.content) if lexical.idf(t) >= rare}
    return {*entry.concepts, *words}


async def graph_reach(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    seeds: Seeds,
    views: Sequence[ViewResult],
    *,
    question: str = "",
    people: Sequence[str] = (),
    vector: npt.NDArray[np.float32] | None = None,
    people_found: Sequence[ContextNode] | None = None,
) -> list[ContextNode]:
    """The nodes the graph side found: the concept seeds, what the views reached, and,
    for a question shaped to gather (`multihop.asks_to_gather`, not one that merely
    names two things), the named people's memories most like it (`people_found`: those
    already read by `people_reach`)."""
    out = [n for n in seeds.semantic.nodes if n.label == CONCEPT]
    for view in views:
        if view.status == "ok":
            out.extend(view.nodes)
    if people_found is not None:
        out.extend(people_found)
    elif asks_to_gather(question):
        out.extend(await people_memories(store, namespace, catalogue, people, vector, question))
    return out


async def people_reach(
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    *,
    question: str,
    people: Sequence[str],
    vector: npt.NDArray[np.float32] | None,
) -> list[ContextNode]:
    """The part of `graph_reach` that needs no view (the named people's memories, for a
    question shaped to gather; else none), so that it is read while the views run."""
    if not asks_to_gather(question):
        return []
    return await people_memories(store, namespace, catalogue, people, vector, question)
