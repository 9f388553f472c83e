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

    A row keeps, as `quoted`, its description when that is a passage of the remembered
    `text` (the rule extractor's sentence): concepts embedded with one sentence are alike
    because of it, and `similar_within` does not link them for it.

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
            texts[i] = f"{shown}: {cdesc}" if cdesc else shown
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
                "quoted": _quoted(cdesc, text),
            }
        )
    return rows, texts


def _quoted(description: str | None, text: str) -> str | None:
    """`description`, whitespace collapsed, when it is a passage of `text`; else None."""
    if not description or not text:
        return None
    flat = " ".join(description.split())
    return flat if flat in " ".join(text.split()) else None


def similar_within(
    rows: list[dict[str, Any]], written: dict[int, tuple[Concept, bool]]
) -> list[tuple[str, str, float]]:
    """`S_SIMILAR_TO` between concepts of one text: a later concept to an earlier one."""
    out: list[tuple[str, str, float]] = []
    for j, later in enumerate(rows):
        for earlier in rows[:j]:
            if later["vec"] is None or earlier["vec"] is None:
                continue
            if later["quoted"] is not None and later["quoted"] == earlier["quoted"]:
                continue  # alike because embedded with the same sentence
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
