"""What recall knows about a namespace's memories without asking FalkorDB per question.

A `MemoryCatalogue` keeps, per namespace, each memory's text, source id, times, tags
and concepts, with a BM25 index over the texts (`recall.lexical`). FalkorDB stays the
source of truth: every lookup first reads a cheap stamp (count of memories, newest record
time) and fetches what was added since, so a memory written by another process is
searchable by the next recall; a deletion reloads the namespace.

Why an in-process BM25 and not FalkorDB's full-text index: the full-text index scores
an OR query without usable term weighting (on the dev conversation it finds the
evidence in the top 10 for 9% of the questions, BM25 for 54%), and it has no BM25
scorer to select. The full-text index still serves exact lookups elsewhere.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from polyg_core.recall.lexical import LexicalIndex
from polyg_core.storage.schema import CONCEPT, MEMORY, R_ABOUT
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
WHO_PREFIX = "who:"
# Below this many memories a share says little: every name is "common" in three.
MIN_MEMORIES_FOR_COMMON = 20


def author_of(content: str, tags: Sequence[str]) -> str | None:
    """Who said or did what a memory records: its `who:` tag, else a leading `Name: `."""
    for t in tags:
        if t.startswith(WHO_PREFIX):
            return t[len(WHO_PREFIX) :].strip() or None
    m = _SPEAKER.match(content)
    return m.group(1) if m else None


def name_tokens(text: str) -> tuple[str, ...]:
    """Lower-case word tokens, as names are compared against memory texts."""
    return tuple(_WORD.findall(text.lower()))


def without_names(text: str, names: Iterable[str]) -> str:
    """`text` with the given names (and their possessive 's) taken out.

    A name found in most memories pulls a question's embedding toward every memory that
    carries it (a speaker prefixed to each turn), drowning what is asked about it.
    Returns `text` unchanged when nothing else would be left.
    """
    out = text
    for name in sorted(set(names), key=len, reverse=True):
        if name.strip():
            out = re.sub(rf"(?i)\b{re.escape(name.strip())}(?:'s|’s)?\b", " ", out)
    out = re.sub(r"\s+", " ", out).strip()
    return out if _WORD.search(out.lower()) else text


@dataclass
class CatalogueEntry:
    """One memory as recall ranks it."""

    uuid: str
    content: str
    source_id: str | None
    created_at: int
    recorded_at: int
    category: str
    tags: tuple[str, ...]
    concepts: tuple[str, ...]
    author: str | None

    @property
    def time_key(self) -> tuple[int, int, str]:
        """Where the memory sits in time: created, then recorded (write order), then uuid."""
        return (self.created_at, self.recorded_at, self.uuid)


@dataclass
class NamespaceCatalogue:
    """The memories of one namespace with their BM25 index and lookups, grown in place.

    Entries are numbered in the order they were added; a separate list keeps them in
    time order for neighbours. Adding memories touches only the new ones.
    """

    entries: list[CatalogueEntry] = field(default_factory=lambda: [])
    stamp: tuple[int, int] = (0, 0)
    position: dict[str, int] = field(default_factory=lambda: {})
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    _time_keys: list[tuple[int, int, str]] = field(default_factory=lambda: [])
    _by_word: dict[str, list[int]] = field(default_factory=lambda: {})
    _by_author: dict[str, list[int]] = field(default_factory=lambda: {})
    _by_concept: dict[str, list[int]] = field(default_factory=lambda: {})

    def add(self, entries: Iterable[CatalogueEntry]) -> None:
        """Index more memories (each uuid once)."""
        for e in entries:
            if e.uuid in self.position:
                continue
            i = len(self.entries)
            self.entries.append(e)
            self.position[e.uuid] = i
            self.lexical.add(e.content)
            bisect.insort(self._time_keys, e.time_key)
            for w in set(_WORD.findall(e.content.lower())):
                self._by_word.setdefault(w, []).append(i)
            if e.author is not None:
                self._by_author.setdefault(" ".join(name_tokens(e.author)), []).append(i)
            for c in e.concepts:
                self._by_concept.setdefault(c, []).append(i)

    def get(self, uuid: str) -> CatalogueEntry | None:
        """The entry of a memory, if the catalogue has it."""
        i = self.position.get(uuid)
        return None if i is None else self.entries[i]

    def __len__(self) -> int:
        return len(self.entries)

    def bm25(self, query: str, k: int) -> list[tuple[CatalogueEntry, float]]:
        """The best `k` memories for `query` by BM25, with their (positive) scores."""
        return [(self.entries[d], s) for d, s in self.lexical.search(query, k)]

    def mentions(self, name: str) -> list[CatalogueEntry]:
        """Memories whose words contain every word of `name`, or whose author it is."""
        want = name_tokens(name)
        if not want:
            return []
        found: set[int] = set(self._by_word.get(want[0], []))
        for w in want[1:]:
            found &= set(self._by_word.get(w, []))
        found |= set(self._by_author.get(" ".join(want), []))
        return [self.entries[i] for i in sorted(found)]

    def authors_in(self, text: str) -> list[str]:
        """Authors of memories whose whole name occurs in `text` (as words)."""
        have = " " + " ".join(name_tokens(text)) + " "
        return [a for a in self._by_author if f" {a} " in have]

    def common_names(self, names: Sequence[str], share: float) -> set[str]:
        """The names found in (or authoring) more than `share` of the memories."""
        n = len(self.entries)
        if n < MIN_MEMORIES_FOR_COMMON:
            return set()
        return {name for name in names if len(self.mentions(name)) / n > share}

    def authored_by(self, name: str) -> list[CatalogueEntry]:
        """Memories whose author (who tag or `Name: ` prefix) is `name`."""
        return [self.entries[i] for i in self._by_author.get(" ".join(name_tokens(name)), [])]

    def specificity(self, matches: int) -> float:
        """How much a name found in `matches` memories says: idf scaled to [0, 1]."""
        n = len(self.entries)
        if n <= 1 or matches <= 0:
            return 0.0
        return max(0.0, math.log(n / matches) / math.log(n))

    def concept_specificity(self, concept: str) -> float:
        """The specificity of a concept by how many memories are about it."""
        return self.specificity(len(self._by_concept.get(concept, [])))

    def about(self, concept: str) -> list[CatalogueEntry]:
        """Memories about `concept` (by uuid)."""
        return [self.entries[i] for i in self._by_concept.get(concept, [])]

    def _around(self, entry: CatalogueEntry, step: int) -> CatalogueEntry | None:
        i = bisect.bisect_left(self._time_keys, entry.time_key) + step
        if 0 <= i < len(self._time_keys):
            return self.get(self._time_keys[i][2])
        return None

    def follows(self, later: CatalogueEntry, earlier: CatalogueEntry) -> bool:
        """Whether `later` comes right after `earlier` in time order."""
        return self._around(earlier, 1) is later

    def neighbours(self, uuid: str, window_ms: int) -> list[CatalogueEntry]:
        """The memories just before and after `uuid` in time, within `window_ms` of it."""
        me = self.get(uuid)
        if me is None:
            return []
        out: list[CatalogueEntry] = []
        for step in (-1, 1):
            other = self._around(me, step)
            if other is not None and abs(other.created_at - me.created_at) <= window_ms:
                out.append(other)
        return out


def _entry(row: Sequence[Any]) -> CatalogueEntry:
    uuid, content, source_id, created, recorded, category, tags, concepts = row
    text = str(content or "")
    tag_list = tuple(str(t) for t in (tags or []))
    return CatalogueEntry(
        uuid=str(uuid),
        content=text,
        source_id=None if source_id is None else str(source_id),
        created_at=int(created or 0),
        recorded_at=int(recorded or created or 0),
        category=str(category or "episodic"),
        tags=tag_list,
        concepts=tuple(str(c) for c in (concepts or [])),
        author=author_of(text, tag_list),
    )


_FIELDS = (
    "m.uuid, m.content, m.source_id, m.created_at, m.recorded_at, m.category, m.tags, "
    f"[(m)-[:{R_ABOUT}]->(c:{CONCEPT}) | c.uuid]"
)


@dataclass
class MemoryCatalogue:
    """Per-namespace catalogues for one store, refreshed from FalkorDB when memories change."""

    store: FalkorStore
    _namespaces: dict[str, NamespaceCatalogue] = field(default_factory=lambda: {})
    _locks: dict[str, anyio.Lock] = field(default_factory=lambda: {})

    async def get(self, namespace: str) -> NamespaceCatalogue:
        """The namespace's catalogue, reloaded first if its memories changed (read-only)."""
        lock = self._locks.setdefault(namespace, anyio.Lock())
        async with lock:
            res = await self.store.query(
                namespace,
                f"MATCH (m:{MEMORY}) RETURN count(m), max(m.recorded_at)",
                read_only=True,
            )
            count, newest = res.rows[0] if res.rows else (0, 0)
            stamp = (int(count or 0), int(newest or 0))
            cat = self._namespaces.get(namespace)
            if cat is not None and cat.stamp == stamp:
                return cat
            if cat is not None and stamp[1] > cat.stamp[1] and stamp[0] > cat.stamp[0]:
                # Only additions since the last load: fetch the new memories alone.
                res = await self.store.query(
                    namespace,
                    f"MATCH (m:{MEMORY}) WHERE m.recorded_at > $after RETURN {_FIELDS}",
                    {"after": cat.stamp[1]},
                    read_only=True,
                )
                added = [_entry(r) for r in res.rows if str(r[0]) not in cat.position]
                if len(cat.entries) + len(added) == stamp[0]:
                    cat.add(added)
                    cat.stamp = stamp
                    return cat
            res = await self.store.query(
                namespace, f"MATCH (m:{MEMORY}) RETURN {_FIELDS}", read_only=True
            )
            cat = NamespaceCatalogue(stamp=stamp)
            cat.add(sorted((_entry(r) for r in res.rows), key=lambda e: e.time_key))
            self._namespaces[namespace] = cat
            logger.debug("memory catalogue of %s loaded: %d memories", namespace, len(cat))
            return cat

    def forget(self, namespace: str) -> None:
        """Drop a namespace's catalogue (the next lookup reloads it)."""
        self._namespaces.pop(namespace, None)
