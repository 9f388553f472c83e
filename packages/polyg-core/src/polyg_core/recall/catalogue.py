"""What recall knows about a namespace's memories without asking FalkorDB per question.

A `NamespaceCatalogue` answers, per namespace, each memory's text, source id, times, tags
and concepts, BM25 over the texts (`recall.lexical`), which memories mention a name or
were written by someone, and which come just before or after one in time. It reads them
from the catalogue's file (`recall.catalogue_index`), so a new process reads only what a
question touches instead of loading every memory first.

FalkorDB stays the source of truth: every lookup first reads a cheap stamp (count of
memories, newest record time) and brings the file up to date, fetching only what was
added since, so a memory written by another process is searchable by the next recall; a
deletion rebuilds the file.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt

from polyg_core.recall.catalogue_index import (
    CatalogueEntry,
    CatalogueReader,
    CatalogueWriter,
    FileState,
    author_of,
    name_key,
    name_tokens,
)
from polyg_core.recall.lexical import Posting, Tokenizer, bm25_top, idf
from polyg_core.storage.embedded import default_data_dir
from polyg_core.storage.schema import CONCEPT, MEMORY, R_ABOUT
from polyg_core.storage.store import FalkorStore
from polyg_core.text.names import is_word_name, named_in_text

__all__ = [
    "CatalogueEntry",
    "MemoryCatalogue",
    "NamespaceCatalogue",
    "author_of",
    "name_tokens",
    "without_names",
]

logger = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Below this many memories a share says little: every name is "common" in three.
MIN_MEMORIES_FOR_COMMON = 20
MAX_CACHED_NAMES = 1_000
"""Names whose memories are kept in the process between recalls (until a write)."""
MAX_CACHED_ENTRIES = 50_000
"""Entries kept in the process per namespace; beyond this the cache starts again."""
MAX_CACHED_FREQUENCIES = 100_000
"""Words whose document frequency is kept per namespace; beyond this the cache starts again."""
MAX_CACHED_CONCEPTS = 100_000
"""Concepts whose memories are kept per namespace; beyond this the cache starts again."""


def _kept(
    cache: dict[str, list[int]], key: str, limit: int, read: Callable[[str], list[int]]
) -> list[int]:
    """`cache[key]`, read with `read` the first time; a cache of `limit` entries starts again."""
    docs = cache.get(key)
    if docs is None:
        if len(cache) >= limit:
            cache.clear()
        docs = cache[key] = read(key)
    return docs


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
class StoredLexical:
    """BM25 over the catalogue file's postings (the interface of `LexicalIndex`)."""

    reader: CatalogueReader
    state: FileState
    tokens: Tokenizer
    frequencies: dict[str, int] = field(default_factory=lambda: {})
    """Document frequencies read so far at this `state` (the catalogue keeps them until
    the file changes): ranking asks the idf of the same words for many candidates."""

    def __len__(self) -> int:
        return self.state.n_docs

    def idf(self, term: str, at_least: int = 0) -> float:
        """BM25's idf of an indexed term; 0 for an unknown one (see `LexicalIndex.idf`)."""
        df = self.frequencies.get(term)
        if df is None:
            if len(self.frequencies) >= MAX_CACHED_FREQUENCIES:
                self.frequencies.clear()
            df = self.frequencies[term] = self.reader.document_frequency(term)
        return idf(max(self.state.n_docs, at_least), df) if df else 0.0

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The best `k` documents for `query` with their BM25 scores, best first."""
        terms = self.tokens(query)
        found = self.reader.postings(terms)
        postings: list[Posting] = [found[t] for t in terms if t in found]
        return bm25_top(self.state.n_docs, self.state.total_terms, postings, k)


class _Entries(Sequence[CatalogueEntry]):
    """The catalogue's entries by document number, read from the file when asked."""

    def __init__(self, catalogue: NamespaceCatalogue) -> None:
        self._cat = catalogue

    def __len__(self) -> int:
        return self._cat.state.n_docs

    def __getitem__(self, doc: Any) -> Any:
        if not isinstance(doc, int):
            raise TypeError("catalogue entries are read one document number at a time")
        found = self._cat.entries_at([doc])
        if not found:
            raise IndexError(doc)
        return found[0]

    def __iter__(self) -> Iterator[CatalogueEntry]:
        for _, e in self._cat.reader.all_entries():
            yield e


class _Positions:
    """uuid → document number, read from the file when asked."""

    def __init__(self, catalogue: NamespaceCatalogue) -> None:
        self._cat = catalogue

    def get(self, uuid: str) -> int | None:
        return self._cat.doc_of(uuid)

    def __getitem__(self, uuid: str) -> int:
        doc = self._cat.doc_of(uuid)
        if doc is None:
            raise KeyError(uuid)
        return doc

    def __contains__(self, uuid: object) -> bool:
        return isinstance(uuid, str) and self._cat.doc_of(uuid) is not None


@dataclass
class NamespaceCatalogue:
    """The memories of one namespace as recall reads them, from the catalogue file.

    Entries are numbered in the order they were added. Entries read are kept (up to
    MAX_CACHED_ENTRIES), so one memory is one object for as long as the file is not
    rebuilt; `loaded` counts the entries read from the file.
    """

    reader: CatalogueReader
    tokens: Tokenizer = field(default_factory=Tokenizer)
    state: FileState = field(default_factory=lambda: FileState((0, 0), 0, 0, ""))
    loaded: int = 0
    _by_doc: dict[int, CatalogueEntry] = field(default_factory=lambda: {})
    _doc_by_uuid: dict[str, int] = field(default_factory=lambda: {})
    _uuid_firsts: list[int] = field(default_factory=lambda: [])
    _uuid_blocks: list[npt.NDArray[np.bytes_]] = field(default_factory=lambda: [])
    _uuids_upto: int = 0
    _mentions: dict[str, list[int]] = field(default_factory=lambda: {})
    _authored: dict[str, list[int]] = field(default_factory=lambda: {})
    _frequencies: dict[str, int] = field(default_factory=lambda: {})
    _concepts: dict[str, list[int]] = field(default_factory=lambda: {})

    def refresh(self) -> None:
        """Read the file's state again; forget cached entries if it was rebuilt."""
        state = self.reader.state()
        if state != self.state:
            self._mentions.clear()
            self._authored.clear()
            self._frequencies.clear()
            self._concepts.clear()
        if state.generation != self.state.generation:
            self._by_doc.clear()
            self._doc_by_uuid.clear()
            self._uuid_firsts.clear()
            self._uuid_blocks.clear()
            self._uuids_upto = 0
        self.state = state

    @property
    def stamp(self) -> tuple[int, int]:
        return self.state.stamp

    @property
    def lexical(self) -> StoredLexical:
        return StoredLexical(self.reader, self.state, self.tokens, self._frequencies)

    @property
    def entries(self) -> Sequence[CatalogueEntry]:
        return _Entries(self)

    @property
    def position(self) -> _Positions:
        return _Positions(self)

    def __len__(self) -> int:
        return self.state.n_docs

    def entries_at(self, docs: Sequence[int]) -> list[CatalogueEntry]:
        """The entries numbered `docs`, in that order (missing ones left out)."""
        want = [d for d in dict.fromkeys(docs) if d not in self._by_doc]
        if want:
            found = self.reader.entries(want)
            if len(self._by_doc) + len(found) > MAX_CACHED_ENTRIES:
                self._by_doc.clear()
                self._doc_by_uuid.clear()
            self.loaded += len(found)
            self._by_doc.update(found)
            self._doc_by_uuid.update((e.uuid, d) for d, e in found.items())
        return [e for d in docs if (e := self._by_doc.get(d)) is not None]

    def uuids_at(self, docs: Sequence[int]) -> list[str]:
        """The uuids of the entries numbered `docs`, in that order, without reading the
        entries (a name in thousands of memories costs their uuids only)."""
        if not docs:
            return []
        if max(docs) >= self._uuids_upto:
            for first, block in self.reader.uuid_chunks(self._uuids_upto):
                self._uuid_firsts.append(first)
                self._uuid_blocks.append(block)
                self._uuids_upto = first + len(block)
        firsts = self._uuid_firsts
        if len(firsts) == 1:  # the file was built in one go: one block, read at once
            block = self._uuid_blocks[0]
            offsets = np.asarray(docs, dtype=np.int64) - firsts[0]
            offsets = offsets[(offsets >= 0) & (offsets < len(block))]
            return [u.decode() for u in block[offsets].tolist()]
        at = np.searchsorted(firsts, docs, side="right") - 1
        out: list[str] = []
        blocks: list[int] = at.tolist()
        for d, c in zip(docs, blocks, strict=True):
            if c >= 0 and 0 <= d - firsts[c] < len(self._uuid_blocks[c]):
                out.append(self._uuid_blocks[c][d - firsts[c]].decode())
        return out

    def doc_of(self, uuid: str) -> int | None:
        doc = self._doc_by_uuid.get(uuid)
        if doc is None:
            doc = self.reader.doc_of(uuid)
            if doc is not None:
                self._doc_by_uuid[uuid] = doc
        return doc

    def get(self, uuid: str) -> CatalogueEntry | None:
        """The entry of a memory, if the catalogue has it."""
        # Ranking asks this of the same few hundred memories hundreds of times a recall.
        entry = self._by_doc.get(self._doc_by_uuid.get(uuid, -1))
        if entry is not None:
            return entry
        doc = self.doc_of(uuid)
        if doc is None:
            return None
        found = self.entries_at([doc])
        return found[0] if found else None

    def bm25(self, query: str, k: int) -> list[tuple[CatalogueEntry, float]]:
        """The best `k` memories for `query` by BM25, with their (positive) scores."""
        hits = self.lexical.search(query, k)
        entries = self.entries_at([d for d, _ in hits])
        return list(zip(entries, (s for _, s in hits), strict=True))

    def _mention_docs(self, name: str) -> list[int]:
        want = name_tokens(name)
        if not want:
            return []
        key = " ".join(want)
        cached = self._mentions.get(key)
        if cached is not None:
            return cached
        *first, last = want
        # A name's last word may be written in the possessive ("Dana's office"), which
        # the index holds as one word.
        found = self.reader.word_docs(last)
        if "'" not in last:
            possessive = self.reader.word_docs(f"{last}'s")
            if len(possessive):
                found = np.sort(np.concatenate([found, possessive]))
        for w in first:
            found = np.intersect1d(found, self.reader.word_docs(w), assume_unique=True)
        both = np.sort(np.concatenate([found, np.asarray(self._authored_docs(key), np.int32)]))
        # Not np.union1d: numpy's unique imports numpy.ma on first use (0.2 s).
        docs: list[int] = (
            both[np.concatenate(([True], both[1:] != both[:-1]))].tolist() if len(both) else []
        )
        if len(self._mentions) >= MAX_CACHED_NAMES:
            self._mentions.clear()
        self._mentions[key] = docs
        return docs

    def mentions(self, name: str) -> list[CatalogueEntry]:
        """Memories whose words contain every word of `name`, or whose author it is."""
        return self.entries_at(self._mention_docs(name))

    def _authored_docs(self, key: str) -> list[int]:
        return _kept(self._authored, key, MAX_CACHED_NAMES, self.reader.authored_docs)

    def mention_uuids(self, name: str) -> list[str]:
        """The uuids of `mentions(name)`."""
        return self.uuids_at(self._mention_docs(name))

    def authors_in(self, text: str) -> list[str]:
        """Authors of memories whose whole name occurs in `text` (as words)."""
        have = " " + " ".join(name_tokens(text)) + " "
        # "What will Dana do?" does not name an author called Will.
        return [
            a
            for a in self.reader.author_keys()
            if f" {a} " in have and (not is_word_name(a) or named_in_text(text, a))
        ]

    def common_names(self, names: Sequence[str], share: float) -> set[str]:
        """The names found in (or authoring) more than `share` of the memories."""
        n = self.state.n_docs
        if n < MIN_MEMORIES_FOR_COMMON:
            return set()
        return {name for name in names if len(self._mention_docs(name)) / n > share}

    def authored_by(self, name: str) -> list[CatalogueEntry]:
        """Memories whose author (who tag or `Name: ` prefix) is `name`."""
        return self.entries_at(self._authored_docs(name_key(name)))

    def authored_uuids(self, name: str) -> list[str]:
        """The uuids of `authored_by(name)`."""
        return self.uuids_at(self._authored_docs(name_key(name)))

    def specificity(self, matches: int) -> float:
        """How much a name found in `matches` memories says: idf scaled to [0, 1]."""
        n = self.state.n_docs
        if n <= 1 or matches <= 0:
            return 0.0
        return max(0.0, math.log(n / matches) / math.log(n))

    def concept_specificity(self, concept: str) -> float:
        """The specificity of a concept by how many memories are about it."""
        return self.specificity(len(self._concept_docs(concept)))

    def about(self, concept: str) -> list[CatalogueEntry]:
        """Memories about `concept` (by uuid)."""
        return self.entries_at(self._concept_docs(concept))

    def about_uuids(self, concept: str) -> list[str]:
        """The uuids of `about(concept)`."""
        return self.uuids_at(self._concept_docs(concept))

    def _concept_docs(self, concept: str) -> list[int]:
        """The documents about `concept`, kept until the file changes: a multi-hop recall
        asks for the same concepts' memories and counts over a hundred times (one file
        read each)."""
        return _kept(self._concepts, concept, MAX_CACHED_CONCEPTS, self.reader.concept_docs)

    def created_between(self, lo: int, hi: int) -> list[str]:
        """The uuids of memories created in [lo, hi] (epoch ms)."""
        return self.reader.created_between(lo, hi)

    def _around(self, entry: CatalogueEntry, step: int) -> CatalogueEntry | None:
        doc = self.reader.next_in_time(entry.time_key, step)
        if doc is None:
            return None
        found = self.entries_at([doc])
        return found[0] if found else None

    def follows(self, later: CatalogueEntry, earlier: CatalogueEntry) -> bool:
        """Whether `later` comes right after `earlier` in time order."""
        after = self._around(earlier, 1)
        return after is not None and after.uuid == later.uuid

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
    tag_list = tuple(str(t) for t in (tags or ()))
    return CatalogueEntry(
        uuid=str(uuid),
        content=text,
        source_id=None if source_id is None else str(source_id),
        created_at=int(created or 0),
        recorded_at=int(recorded or created or 0),
        category=str(category or "episodic"),
        tags=tag_list,
        concepts=tuple(str(c) for c in (concepts or ())),
        author=author_of(text, tag_list),
    )


_FIELDS = (
    "m.uuid, m.content, m.source_id, m.created_at, m.recorded_at, m.category, m.tags, "
    f"[(m)-[:{R_ABOUT}]->(c:{CONCEPT}) | c.uuid]"
)


def catalogue_dir(store: FalkorStore) -> Path:
    """Where the catalogue files of `store`'s namespaces live: under the data dir, one
    folder per server (the embedded one, or a hash of an external server's address)."""
    s = store.settings
    base = (s.data_dir or default_data_dir()) / "catalogue"
    if s.url or s.host or s.cluster:
        return base / hashlib.sha256(store.where.encode()).hexdigest()[:16]
    return base / "embedded"


@dataclass
class MemoryCatalogue:
    """Per-namespace catalogues for one store, kept in step with FalkorDB.

    `fetched` counts the memories read from FalkorDB to update catalogue files: a process
    that finds the files up to date reads none.
    """

    store: FalkorStore
    directory: Path | None = None
    fetched: int = 0
    _namespaces: dict[str, NamespaceCatalogue] = field(default_factory=lambda: {})
    _locks: dict[str, anyio.Lock] = field(default_factory=lambda: {})

    def path(self, namespace: str) -> Path:
        """The catalogue file of `namespace`."""
        return (self.directory or catalogue_dir(self.store)) / f"{namespace}.sqlite"

    async def get(self, namespace: str) -> NamespaceCatalogue:
        """The namespace's catalogue, brought up to date first if its memories changed.

        Reads FalkorDB only; the file is written, never the graph. Checking costs one query
        (the label's count; an indexed count of those recorded at or after the file's
        newest), not a scan. The file is rebuilt when the counts differ, when memories were recorded after
        its newest, or when its newest is gone while the count stayed (a namespace restored
        to an older state, or a deletion and an older import in between).
        """
        lock = self._locks.setdefault(namespace, anyio.Lock())
        async with lock:
            cat = self._namespaces.get(namespace)
            if cat is None:
                reader = await anyio.to_thread.run_sync(CatalogueReader, self.path(namespace))
                cat = NamespaceCatalogue(reader)
                self._namespaces[namespace] = cat
            cat.refresh()
            count, newer, newest_kept = await self._stamp(namespace, cat.stamp[1])
            gone = count > 0 and cat.stamp[1] > 0 and not newest_kept
            if count != cat.stamp[0] or newer or gone:
                await self._update(namespace, cat, count)
                cat.refresh()
            return cat

    async def _stamp(self, namespace: str, newest: int) -> tuple[int, int, int]:
        """In one query: how many memories there are (the label's count, kept by FalkorDB,
        not a scan), how many were recorded after `newest`, and how many at it (through
        the `recorded_at` index)."""
        res = await self.store.query(
            namespace,
            "CALL db.meta.stats() YIELD labels "
            f"WITH coalesce(labels['{MEMORY}'], 0) AS total "
            f"OPTIONAL MATCH (m:{MEMORY}) WHERE m.recorded_at >= $newest "
            "RETURN total, sum(CASE WHEN m.recorded_at > $newest THEN 1 ELSE 0 END), count(m)",
            {"newest": newest},
            read_only=True,
        )
        if not res.rows:
            return 0, 0, 0
        total, after, since = res.rows[0]
        return int(total or 0), int(after or 0), int(since or 0) - int(after or 0)

    async def _update(self, namespace: str, cat: NamespaceCatalogue, count: int) -> None:
        base = cat.stamp
        path = cat.reader.path
        if base != (0, 0) and count > base[0]:
            # Only additions since the file was written: fetch the new memories alone.
            res = await self.store.query(
                namespace,
                f"MATCH (m:{MEMORY}) WHERE m.recorded_at > $after RETURN {_FIELDS}",
                {"after": base[1]},
                read_only=True,
            )
            self.fetched += len(res.rows)
            known = cat.reader.docs_of([str(r[0]) for r in res.rows])
            added = sorted(
                (_entry(r) for r in res.rows if str(r[0]) not in known), key=lambda e: e.time_key
            )
            stamp = (base[0] + len(added), _newest(res.rows, base[1]))
            if stamp[0] == count and await anyio.to_thread.run_sync(
                _append, path, added, base, stamp
            ):
                return
        res = await self.store.query(
            namespace, f"MATCH (m:{MEMORY}) RETURN {_FIELDS}", read_only=True
        )
        self.fetched += len(res.rows)
        entries = sorted((_entry(r) for r in res.rows), key=lambda e: e.time_key)
        stamp = (len(entries), _newest(res.rows, 0))
        await anyio.to_thread.run_sync(_replace, path, entries, stamp)
        logger.debug("memory catalogue of %s rebuilt: %d memories", namespace, len(entries))

    def forget(self, namespace: str) -> None:
        """Close a namespace's catalogue file (the next lookup opens it again)."""
        cat = self._namespaces.pop(namespace, None)
        if cat is not None:
            cat.reader.close()

    def close(self) -> None:
        """Close every open catalogue file."""
        for namespace in list(self._namespaces):
            self.forget(namespace)


def _newest(rows: Sequence[Sequence[Any]], floor: int) -> int:
    """The newest record time among fetched memory rows (`_FIELDS`), at least `floor`."""
    return max([floor, *(int(r[4] or 0) for r in rows)])


def _append(
    path: Path, entries: Sequence[CatalogueEntry], base: tuple[int, int], stamp: tuple[int, int]
) -> bool:
    writer = CatalogueWriter(path)
    try:
        return writer.append(entries, base, stamp)
    finally:
        writer.close()


def _replace(path: Path, entries: Sequence[CatalogueEntry], stamp: tuple[int, int]) -> None:
    writer = CatalogueWriter(path)
    try:
        writer.replace(entries, stamp)
    finally:
        writer.close()
