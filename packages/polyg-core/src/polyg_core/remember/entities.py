"""The entities of one `remember`: the rows it writes (the typed entity MERGE of
`graphs/entity.py`), the entity each name its other items use stands for (the write
rule, `decide_entity`), and how it reports each entity with its near-duplicates."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from polyg_shared.nodes import Entity
from polyg_shared.retrieval import WrittenNode

from polyg_core.errors import Candidate, InvalidInput
from polyg_core.graphs.base import check_text, name_key
from polyg_core.graphs.entity import ORIGIN_ENSURED, entity_row
from polyg_core.graphs.entity_refs import EntityRows, decide_entity
from polyg_core.resolve import NameResolver, similar_nodes
from polyg_core.storage.schema import ENTITY
from polyg_core.storage.vector import Neighbour
from polyg_core.text.normalize import normalize_name


@dataclass
class Entities:
    """The entity rows of one remember and how the extraction's names map to them."""

    found: EntityRows
    rows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    embed: set[int] = field(default_factory=set[int])  # rows of entities not stored yet
    chosen: dict[str, str] = field(default_factory=dict[str, str])  # key -> uuid or row:i
    implicit: set[int] = field(default_factory=set[int])

    def row(self, name: str, etype: str, *, origin: str | None = None) -> str:
        """A row for the entity (name_key, type), unless there is one; its marker."""
        key = name_key(name)
        for row in self.rows:
            if row["key"] == key and row["type"] == etype:
                return f"row:{row['i']}"
        same = [
            s
            for s in self.found.get(name.strip(), ([], []))[1]
            if s.entity_type == etype and s.name_key == key
        ]
        old = same[0] if same else None
        i = len(self.rows)
        self.rows.append(
            entity_row(
                i,
                name,
                etype,
                None,
                exists=old is not None,
                old_props=old.properties if old else None,
                old_origin=old.origin if old else None,
                origin=origin,
            )
        )
        if old is None:
            self.embed.add(i)
        return f"row:{i}"

    def ref(self, raw: str) -> str:
        """The uuid (or row marker) a name other items use stands for: an entity of this
        text by normalised name, else the write rule (`decide_entity`), else a new
        plain entity.

        Raises:
            AmbiguousName: several stored entities answer to the name.
            InvalidInput: a blank name, or one without letters or digits.
        """
        name = check_text(raw, "entity name")
        key = normalize_name(name)
        if key in self.chosen:
            return self.chosen[key]
        hit = decide_entity(name, self.found)
        if hit is not None:
            return hit.uuid
        if not key:
            raise InvalidInput(f"entity name {name!r} has no letters or digits; give a real name")
        marker = self.chosen[key] = self.row(name, "entity", origin=ORIGIN_ENSURED)
        self.implicit.add(int(marker[4:]))
        return marker


def is_row(ref: str) -> bool:
    return ref.startswith("row:")


def entity_node(
    resolver: NameResolver,
    i: int,
    ents: Entities,
    stored: dict[int, tuple[Entity, bool]],
    near: dict[tuple[str, int], list[Neighbour]],
) -> WrittenNode:
    """How remember reports the entity of row `i`; a new one with the stored entities
    (and the others this text creates) whose names are close in meaning."""
    entity, created = stored[i]
    hits: list[Candidate] = []
    if created:
        hits = [
            Candidate(h.uuid, str(h.properties.get("name", "")), ENTITY, h.similarity)
            for h in near.get(("entities", i), [])
        ]
        for j, (other, other_created) in stored.items():
            vi, vj = ents.rows[i]["vec"], ents.rows[j]["vec"]
            if j == i or not other_created or vi is None or vj is None:
                continue
            score = min(1.0, float(np.dot(vi, vj)))
            hits.append(Candidate(other.uuid, other.name, ENTITY, score))
    near_dups = resolver.near_duplicates(
        [replace(c, similarity=round(c.similarity, 4)) for c in hits],
        exclude=(entity.uuid,),
    )
    return WrittenNode(
        uuid=entity.uuid,
        name=entity.name,
        label=ENTITY,
        created=created,
        similar_existing=similar_nodes(near_dups),
    )
