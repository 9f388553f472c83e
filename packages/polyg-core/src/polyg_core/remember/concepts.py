"""The concepts of one `remember`: their `WRITE_CONCEPTS` rows (`graphs/semantic.py`) and
their `S_SIMILAR_TO` links, to stored concepts and between the concepts of one text."""

from __future__ import annotations

from typing import Any

import numpy as np
from polyg_shared.nodes import Concept

from polyg_core.graphs.base import new_uuid
from polyg_core.remember.items import Items
from polyg_core.remember.lookup import Lookup
from polyg_core.storage.vector import Neighbour

CONCEPT_SIMILAR = 0.8
CONCEPT_K = 5


def concept_rows(
    items: Items, found: Lookup, text: str = ""
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """`WRITE_CONCEPTS` rows of the extraction's concepts, and the text to embed for those
    that are new or stored without a description.

    A concept whose description is quoted from the remembered `text` (the rule
    extractor's is the sentence the phrase first appears in) is embedded as its name and
    the few words around its first mention there, not the whole sentence: the concepts
    of one sentence would otherwise all get nearly the sentence's vector.

    A text's description of a concept it mentions (the rule extractor's is the sentence
    the phrase first appears in) describes that text, not the concept: it never replaces
    a stored description. Only `add_concept` redefines a concept. Rewriting it on every
    mention would also re-embed the node each time, and each write of a node that
    carries a vector leaves a stale entry in FalkorDB's HNSW index
    (FalkorDB/FalkorDB#2197): the concept index answered 16 of 32 rows after a few
    hundred `remember` calls.
    """
    rows: list[dict[str, Any]] = []
    texts: dict[int, str] = {}
    for i, (key, (cname, cdesc)) in enumerate(items.concepts.items()):
        old = found.concepts.get(key)
        if old is None or (cdesc is not None and not old.get("description")):
            shown = str(old["name"]) if old else cname
            texts[i] = _embedded(shown, cname, cdesc, text)
        rows.append(
            {
                "i": i,
                "k": key,
                "uuid": new_uuid(),
                "name": cname,
                "desc": cdesc,
                "origin": None,
                # Named by a text now: no longer only implied by a memory.
                "unmark": old is not None and old.get("origin") is not None,
                "vec": None,
                "similar": [],
                "ents": [],
            }
        )
    return rows, texts


WINDOW = 4
"""Words on each side of a concept's mention embedded with it when its description is
quoted from the text."""


def _embedded(shown: str, name: str, description: str | None, text: str) -> str:
    """The text a concept's vector is made of."""
    if not description:
        return shown
    flat = " ".join(description.split())
    if not text or flat not in " ".join(text.split()):
        return f"{shown}: {description}"
    words = flat.split()
    lowered = [w.lower().strip(".,;:!?\"'()") for w in words]
    first = name.lower().split()[0] if name.split() else ""
    at = next((k for k, w in enumerate(lowered) if w == first), None)
    if at is None:
        return shown
    span = len(name.split())
    window = " ".join(words[max(0, at - WINDOW) : at + span + WINDOW])
    return f"{shown}: {window}"


def similar_within(
    rows: list[dict[str, Any]], written: dict[int, tuple[Concept, bool]]
) -> list[tuple[str, str, float]]:
    """`S_SIMILAR_TO` between concepts of one text: a later concept to an earlier one."""
    out: list[tuple[str, str, float]] = []
    for j, later in enumerate(rows):
        for earlier in rows[:j]:
            if later["vec"] is None or earlier["vec"] is None:
                continue
            score = float(np.dot(later["vec"], earlier["vec"]))
            if score >= CONCEPT_SIMILAR and earlier["i"] in written and j in written:
                out.append(
                    (written[j][0].uuid, written[earlier["i"]][0].uuid, round(min(1.0, score), 4))
                )
    return out


def stored_similar(
    rows: list[dict[str, Any]],
    texts: dict[int, str],
    found: Lookup,
    near: dict[tuple[str, int], list[Neighbour]],
) -> None:
    """Set the `S_SIMILAR_TO` targets of the concepts embedded now (`texts`) from the k-NN
    answer (`near`): stored concepts at least `CONCEPT_SIMILAR` alike, not itself."""
    for i in texts:
        own = found.concepts.get(rows[i]["k"], {}).get("uuid")
        rows[i]["similar"] = [
            {"uuid": h.uuid, "score": round(h.similarity, 4)}
            for h in near.get(("concepts", i), [])
            if h.similarity >= CONCEPT_SIMILAR and h.uuid != own
        ][:CONCEPT_K]
