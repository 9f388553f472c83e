"""A second hop from the first results: what the best memories say leads to the rest.

A question that gathers ("What has Dana done with her family?") is answered by memories
said on many days in words of their own: the first results hold some of them, and they
share words and meaning with the others more than the question does ("took the kids to
the zoo", "the kids loved the clay"). Pseudo-relevance feedback takes the best few
memories of the first pass and searches again:

* lexical: the words those memories hold that the question does not, weighted by how
  rare they are and how strongly the memories that hold them matched (RM3-like), added
  to the question's words for a second BM25 pass;
* dense: the memories most like the best ones by their own stored vectors ("more like
  this"), among the first pass's candidates and the named people's memories.

Both come back as one signal in [0, 1] that fusion adds with a small weight: a memory the
second hop finds strongly but the question alone ranks low climbs, the first pass's
order otherwise stands.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

from polyg_core.recall.catalogue import NamespaceCatalogue
from polyg_core.recall.lexical import idf
from polyg_core.storage.schema import MEMORY
from polyg_core.storage.store import FalkorStore

FEEDBACK_DOCS = 5
"""How many of the first pass's best memories the second hop starts from."""
FEEDBACK_TERMS = 8
"""How many of their words are added to the question's for the second lexical pass."""
FEEDBACK_K = 100
"""How many memories the second lexical pass ranks."""
MIN_TERM_DOCS = 2
"""A word is added only when at least this many of the best memories hold it (or the one
best memory, when fewer started the hop): a word of one memory is its own topic."""
MAX_TERM_SHARE = 0.05
"""A word held by more than this share of all memories says little about the topic."""
MAX_AMONG = 2000
"""The most candidates compared with the best memories by vector."""


def _scaled(scores: Mapping[str, float]) -> dict[str, float]:
    """Min-max scaled to [0, 1] over the list (all 1 when they are equal)."""
    if not scores:
        return {}
    hi, lo = max(scores.values()), min(scores.values())
    if hi - lo < 1e-9:
        return {u: 1.0 for u in scores}
    return {u: (s - lo) / (hi - lo) for u, s in scores.items()}


def feedback_terms(
    catalogue: NamespaceCatalogue,
    question: str,
    seeds: Sequence[tuple[str, float]],
    leave_out: Collection[str] = (),
) -> list[str]:
    """The words the best memories (`seeds`: uuid, score) share that the question lacks,
    best first: each word scores its idf times the summed scores of the memories holding
    it; words in `leave_out` (names), in the question, or common are left out."""
    lexical = catalogue.lexical
    asked = set(lexical.tokens(question)) | set(leave_out)
    n = len(lexical)
    weight: dict[str, float] = defaultdict(float)
    holders: dict[str, int] = defaultdict(int)
    for uuid, score in seeds:
        entry = catalogue.get(uuid)
        if entry is None:
            continue
        for term in set(lexical.tokens(entry.content)):
            if term in asked:
                continue
            weight[term] += score
            holders[term] += 1
    need = min(MIN_TERM_DOCS, len(seeds))
    scored: dict[str, float] = {}
    common = idf(n, max(1, int(MAX_TERM_SHARE * n)))
    for term, w in weight.items():
        if holders[term] < need:
            continue
        rarity = lexical.idf(term)
        if rarity <= 0 or rarity < common or len(term) < 3:
            continue
        scored[term] = w * rarity
    return [t for t, _ in sorted(scored.items(), key=lambda ts: (-ts[1], ts[0]))][:FEEDBACK_TERMS]


def lexical_feedback(
    catalogue: NamespaceCatalogue,
    question: str,
    seeds: Sequence[tuple[str, float]],
    leave_out: Collection[str] = (),
) -> dict[str, float]:
    """BM25 for the question's words and the best memories' shared words, scaled."""
    terms = feedback_terms(catalogue, question, seeds, leave_out)
    if not terms:
        return {}
    hits = catalogue.bm25(f"{question} {' '.join(terms)}", FEEDBACK_K)
    return _scaled({e.uuid: s for e, s in hits})


async def dense_feedback(
    store: FalkorStore,
    namespace: str,
    seeds: Sequence[tuple[str, float]],
    among: Collection[str],
) -> dict[str, float]:
    """How like the best memories (`seeds`) each memory of `among` is by stored vector:
    the mean cosine similarity to them, scaled. The seeds themselves are left out."""
    seed_ids = [u for u, _ in seeds]
    ids = [u for u in among if u not in set(seed_ids)][:MAX_AMONG]
    if not seed_ids or not ids:
        return {}
    res = await store.query(
        namespace,
        f"MATCH (s:{MEMORY}) WHERE s.uuid IN $seeds AND s.embedding IS NOT NULL "
        f"MATCH (m:{MEMORY}) WHERE m.uuid IN $ids AND m.embedding IS NOT NULL "
        "RETURN m.uuid, avg(1.0 - vec.cosineDistance(m.embedding, s.embedding))",
        {"seeds": seed_ids, "ids": ids},
        read_only=True,
    )
    return _scaled({str(u): float(s) for u, s in res.rows})


LEXICAL_WEIGHT = 0.1
"""The second lexical pass's weight in fusion."""
DENSE_WEIGHT = 0.2
"""The "more like this" pass's weight in fusion."""


async def add_feedback(
    signals: dict[str, dict[str, float]],
    fused: dict[str, float],
    store: FalkorStore,
    namespace: str,
    catalogue: NamespaceCatalogue,
    question: str,
    names: Sequence[str],
) -> None:
    """The second hop from the first pass's best memories (`fused`), added to `fused` and
    kept in `signals["feedback"]`. Names (the question's and the namespace's authors) are
    never feedback words: every memory of a speaker holds them."""
    seeds = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:FEEDBACK_DOCS]
    if not seeds:
        return
    top = seeds[0][1] or 1.0
    seeds = [(u, s / top) for u, s in seeds]
    tokens = catalogue.lexical.tokens
    leave_out = {t for n in [*names, *catalogue.reader.author_keys()] for t in tokens(n)}
    lex = lexical_feedback(catalogue, question, seeds, leave_out)
    dense = await dense_feedback(store, namespace, seeds, {*fused, *signals.get("entity", {})})
    found = {*lex, *dense}
    signals["feedback"] = {u: max(lex.get(u, 0.0), dense.get(u, 0.0)) for u in found}
    for u in found:
        fused[u] = (
            fused.get(u, 0.0) + LEXICAL_WEIGHT * lex.get(u, 0.0) + DENSE_WEIGHT * dense.get(u, 0.0)
        )
