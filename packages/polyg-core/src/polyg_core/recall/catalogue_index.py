"""The memory catalogue's file: one SQLite database per namespace, next to the data.

Recall ranks memories by BM25 over their texts, by the names they mention, by who wrote
them, by the concepts they are about and by their neighbours in time. Loading all of that
from FalkorDB into the process cost every new process its first recall (5.7 s at 15,000
memories); this file keeps it on disk instead, so a new process opens the file and reads
only the postings and rows a question touches.

Why not FalkorDB's full-text index: it scores without usable term weighting (on the dev
conversation it found the evidence in the top 10 for 9 % of the questions, BM25 for 54 %),
and its tokenizer and stemmer are not bm25s's, so recall's lexical ranking would change.
The file holds exactly the postings of `recall.lexical`, scored by the same function.

FalkorDB stays the source of truth: the file records the stamp (count of memories, newest
record time) it was built at, and `recall.catalogue` brings it up to date before a read.
Writes happen in one transaction (`BEGIN IMMEDIATE`) that first checks the stamp it
builds on, so several processes sharing the file never apply the same memories twice.

Layout: `entries` (one row per memory, numbered in the order added), `terms` (BM25
postings of stemmed terms: documents, counts, lengths as int32 blobs), `words` (which
memories hold each plain word, for name lookups), `uuid_chunks` (the uuids of each
write's memories as one fixed-width blob: a name found in thousands of memories costs one
read, not a row per memory), `concepts` and `authors`. A term's postings are appended as
one chunk per write and merged once a term has many chunks.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid as uuidlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from polyg_core.recall.lexical import Ints, Posting, Tokenizer, term_counts

SCHEMA_VERSION = 2
MAX_CHUNKS = 32
"""A term with more chunks than this has them merged into one on the next write."""
_IN_BATCH = 500
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s")
WHO_PREFIX = "who:"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries(
    doc INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, content TEXT NOT NULL,
    source_id TEXT, created_at INTEGER NOT NULL, recorded_at INTEGER NOT NULL,
    category TEXT NOT NULL, tags TEXT NOT NULL, concepts TEXT NOT NULL, author TEXT,
    author_key TEXT);
CREATE INDEX IF NOT EXISTS entries_time ON entries(created_at, recorded_at, uuid);
CREATE INDEX IF NOT EXISTS entries_author ON entries(author_key) WHERE author_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS authors(
    author_key TEXT PRIMARY KEY, first_doc INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS terms(
    term TEXT NOT NULL, chunk INTEGER NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL,
    lengths BLOB NOT NULL, PRIMARY KEY(term, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS words(
    word TEXT NOT NULL, chunk INTEGER NOT NULL, docs BLOB NOT NULL,
    PRIMARY KEY(word, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS uuid_chunks(
    first_doc INTEGER PRIMARY KEY, width INTEGER NOT NULL, uuids BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS concepts(
    concept TEXT NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY(concept, doc)) WITHOUT ROWID;
"""
_TABLES = ("meta", "entries", "authors", "terms", "words", "uuid_chunks", "concepts")
_ENTRY_COLUMNS = (
    "doc, uuid, content, source_id, created_at, recorded_at, category, tags, concepts, author"
)


def name_tokens(text: str) -> tuple[str, ...]:
    """Lower-case word tokens, as names are compared against memory texts."""
    return tuple(_WORD.findall(text.lower()))


def name_key(name: str) -> str:
    """A name as the catalogue files it: its word tokens joined by spaces."""
    return " ".join(name_tokens(name))


def author_of(content: str, tags: Sequence[str]) -> str | None:
    """Who said or did what a memory records: its `who:` tag, else a leading `Name: `."""
    for t in tags:
        if t.startswith(WHO_PREFIX):
            return t[len(WHO_PREFIX) :].strip() or None
    m = _SPEAKER.match(content)
    return m.group(1) if m else None


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


@dataclass(frozen=True)
class FileState:
    """What a catalogue file holds: the FalkorDB stamp it was built at, its size, and a
    generation that changes whenever documents are renumbered (a rebuild)."""

    stamp: tuple[int, int]
    n_docs: int
    total_terms: int
    generation: str


_EMPTY = FileState((0, 0), 0, 0, "")


def _ints(values: Iterable[int]) -> bytes:
    return np.fromiter(values, dtype=np.int32).tobytes()


def _array(blob: bytes) -> Ints:
    return np.frombuffer(blob, dtype=np.int32)


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the catalogue file at `path`, created with its schema if missing.

    A file of another schema version is emptied (it is rebuilt from FalkorDB).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(_SCHEMA)
    row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    if row is None or int(row[0]) != SCHEMA_VERSION:
        conn.execute("BEGIN IMMEDIATE")
        for table in _TABLES:
            conn.execute(f"DELETE FROM {table}")
        conn.execute("INSERT INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    return conn


def read_state(conn: sqlite3.Connection) -> FileState:
    """The file's state (an empty file has stamp (0, 0) and no documents)."""
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if "n_docs" not in meta:
        return _EMPTY
    return FileState(
        stamp=(int(meta["stamp_count"]), int(meta["stamp_newest"])),
        n_docs=int(meta["n_docs"]),
        total_terms=int(meta["total_terms"]),
        generation=str(meta["generation"]),
    )


def _chunks(items: Sequence[Any], size: int = _IN_BATCH) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class CatalogueWriter:
    """Writes to one catalogue file; each method is one transaction."""

    def __init__(self, path: Path) -> None:
        self.conn = connect(path)
        self.tokens = Tokenizer()

    def close(self) -> None:
        self.conn.close()

    def replace(self, entries: Sequence[CatalogueEntry], stamp: tuple[int, int]) -> None:
        """Make the file hold exactly `entries` (in this order), built at `stamp`."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            for table in _TABLES:
                if table != "meta":
                    c.execute(f"DELETE FROM {table}")
            self._add(entries, _EMPTY, stamp, uuidlib.uuid4().hex)
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def append(
        self, entries: Sequence[CatalogueEntry], base: tuple[int, int], stamp: tuple[int, int]
    ) -> bool:
        """Add `entries` to a file built at `base`, making it built at `stamp`.

        Returns False, writing nothing, when the file is no longer at `base` and not
        already at `stamp` (another process changed it: the caller rebuilds).
        """
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            state = read_state(c)
            if state.stamp == stamp:
                c.execute("COMMIT")
                return True
            if state.stamp != base:
                c.execute("ROLLBACK")
                return False
            self._add(entries, state, stamp, state.generation or uuidlib.uuid4().hex)
            c.execute("COMMIT")
            return True
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def _add(
        self,
        entries: Sequence[CatalogueEntry],
        state: FileState,
        stamp: tuple[int, int],
        generation: str,
    ) -> None:
        c = self.conn
        first = state.n_docs
        postings: dict[str, tuple[list[int], list[int], list[int]]] = {}
        words: dict[str, list[int]] = {}
        total = state.total_terms
        rows: list[tuple[Any, ...]] = []
        about: list[tuple[str, int]] = []
        authors: list[tuple[str, int]] = []
        for i, e in enumerate(entries):
            doc = first + i
            terms = self.tokens(e.content)
            total += len(terms)
            for t, n in term_counts(terms).items():
                p = postings.setdefault(t, ([], [], []))
                p[0].append(doc)
                p[1].append(n)
                p[2].append(len(terms))
            for w in set(_WORD.findall(e.content.lower())):
                words.setdefault(w, []).append(doc)
            key = name_key(e.author) if e.author is not None else None
            if key is not None:
                authors.append((key, doc))
            about.extend((concept, doc) for concept in e.concepts)
            rows.append(
                (
                    doc,
                    e.uuid,
                    e.content,
                    e.source_id,
                    e.created_at,
                    e.recorded_at,
                    e.category,
                    json.dumps(list(e.tags)),
                    json.dumps(list(e.concepts)),
                    e.author,
                    key,
                )
            )
        c.executemany(f"INSERT INTO entries VALUES ({_marks(11)})", rows)
        if entries:
            ids = np.array([e.uuid.encode() for e in entries])
            c.execute(
                "INSERT INTO uuid_chunks VALUES (?, ?, ?)", (first, ids.itemsize, ids.tobytes())
            )
        c.executemany(
            "INSERT INTO terms VALUES (?, ?, ?, ?, ?)",
            ((t, first, _ints(d), _ints(n), _ints(n_)) for t, (d, n, n_) in postings.items()),
        )
        c.executemany(
            "INSERT INTO words VALUES (?, ?, ?)", ((w, first, _ints(d)) for w, d in words.items())
        )
        c.executemany("INSERT OR IGNORE INTO concepts VALUES (?, ?)", about)
        c.executemany("INSERT OR IGNORE INTO authors VALUES (?, ?)", authors)
        if state.n_docs:
            self._merge_chunks("terms", list(postings))
            self._merge_chunks("words", list(words))
        meta = {
            "version": SCHEMA_VERSION,
            "stamp_count": stamp[0],
            "stamp_newest": stamp[1],
            "n_docs": first + len(entries),
            "total_terms": total,
            "generation": generation,
        }
        c.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()]
        )

    def _merge_chunks(self, table: str, keys: Sequence[str]) -> None:
        """Merge the chunks of every key in `keys` that has more than MAX_CHUNKS."""
        col = "term" if table == "terms" else "word"
        blobs = "docs, tfs, lengths" if table == "terms" else "docs"
        c = self.conn
        for part in _chunks(keys):
            many = [
                str(r[0])
                for r in c.execute(
                    f"SELECT {col} FROM {table} WHERE {col} IN ({_marks(len(part))}) "
                    f"GROUP BY {col} HAVING count(*) > ?",
                    (*part, MAX_CHUNKS),
                )
            ]
            for key in many:
                found = c.execute(
                    f"SELECT chunk, {blobs} FROM {table} WHERE {col} = ? ORDER BY chunk",
                    (key,),
                ).fetchall()
                merged = [b"".join(bytes(r[i]) for r in found) for i in range(1, len(found[0]))]
                c.execute(f"DELETE FROM {table} WHERE {col} = ?", (key,))
                c.execute(
                    f"INSERT INTO {table} VALUES (?, ?, {_marks(len(merged))})",
                    (key, found[0][0], *merged),
                )


def entry_from_row(row: Sequence[Any]) -> CatalogueEntry:
    """An entry from a row of `_ENTRY_COLUMNS` (after the document number)."""
    _, uid, content, source_id, created, recorded, category, tags, concepts, author = row
    return CatalogueEntry(
        uuid=str(uid),
        content=str(content),
        source_id=None if source_id is None else str(source_id),
        created_at=int(created),
        recorded_at=int(recorded),
        category=str(category),
        tags=tuple(str(t) for t in json.loads(tags)),
        concepts=tuple(str(c) for c in json.loads(concepts)),
        author=None if author is None else str(author),
    )


class CatalogueReader:
    """Reads of one catalogue file; each returns what the file holds when it runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)

    def close(self) -> None:
        self.conn.close()

    def state(self) -> FileState:
        return read_state(self.conn)

    def entries(self, docs: Sequence[int]) -> dict[int, CatalogueEntry]:
        """The entries numbered `docs` that exist."""
        out: dict[int, CatalogueEntry] = {}
        for part in _chunks(list(docs)):
            for row in self.conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE doc IN ({_marks(len(part))})",
                tuple(part),
            ):
                out[int(row[0])] = entry_from_row(row)
        return out

    def uuid_chunks(self, from_doc: int) -> list[tuple[int, npt.NDArray[np.bytes_]]]:
        """The uuid blocks of the writes from document `from_doc` on, as (first document,
        fixed-width byte strings)."""
        return [
            (int(first), np.frombuffer(blob, dtype=f"S{int(width)}"))
            for first, width, blob in self.conn.execute(
                "SELECT first_doc, width, uuids FROM uuid_chunks WHERE first_doc >= ? "
                "ORDER BY first_doc",
                (from_doc,),
            )
        ]

    def doc_of(self, uuid: str) -> int | None:
        row = self.conn.execute("SELECT doc FROM entries WHERE uuid = ?", (uuid,)).fetchone()
        return None if row is None else int(row[0])

    def docs_of(self, uuids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for part in _chunks(list(uuids)):
            for u, d in self.conn.execute(
                f"SELECT uuid, doc FROM entries WHERE uuid IN ({_marks(len(part))})",
                tuple(part),
            ):
                out[str(u)] = int(d)
        return out

    def all_entries(self, batch: int = 2_000) -> Iterator[tuple[int, CatalogueEntry]]:
        """Every entry in document order, read `batch` rows at a time."""
        last = -1
        while True:
            rows = self.conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE doc > ? ORDER BY doc LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield int(row[0]), entry_from_row(row)
            last = int(rows[-1][0])

    def postings(self, terms: Sequence[str]) -> dict[str, Posting]:
        """The BM25 postings of the indexed ones among `terms`."""
        found: dict[str, list[tuple[bytes, bytes, bytes]]] = {}
        for part in _chunks(sorted(set(terms))):
            for t, docs, tfs, lengths in self.conn.execute(
                f"SELECT term, docs, tfs, lengths FROM terms WHERE term IN ({_marks(len(part))}) "
                "ORDER BY term, chunk",
                tuple(part),
            ):
                found.setdefault(str(t), []).append((docs, tfs, lengths))
        return {
            t: Posting(*(np.concatenate([_array(c[i]) for c in chunks]) for i in range(3)))
            for t, chunks in found.items()
        }

    def document_frequency(self, term: str) -> int:
        row = self.conn.execute(
            "SELECT sum(length(docs)) FROM terms WHERE term = ?", (term,)
        ).fetchone()
        return int(row[0] or 0) // 4

    def word_docs(self, word: str) -> Ints:
        """The documents holding the plain word `word`, ascending."""
        chunks = [
            _array(r[0])
            for r in self.conn.execute(
                "SELECT docs FROM words WHERE word = ? ORDER BY chunk", (word,)
            )
        ]
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int32)

    def authored_docs(self, key: str) -> list[int]:
        return [
            int(r[0])
            for r in self.conn.execute(
                "SELECT doc FROM entries WHERE author_key = ? ORDER BY doc", (key,)
            )
        ]

    def author_keys(self) -> list[str]:
        """Every author's key, in order of their first memory."""
        return [
            str(r[0])
            for r in self.conn.execute("SELECT author_key FROM authors ORDER BY first_doc")
        ]

    def concept_docs(self, concept: str) -> list[int]:
        return [
            int(r[0])
            for r in self.conn.execute(
                "SELECT doc FROM concepts WHERE concept = ? ORDER BY doc", (concept,)
            )
        ]

    def concept_count(self, concept: str) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM concepts WHERE concept = ?", (concept,)
        ).fetchone()
        return int(row[0])

    def created_between(self, lo: int, hi: int) -> list[str]:
        """The uuids of memories created in [lo, hi], in document order."""
        return [
            str(r[0])
            for r in self.conn.execute(
                "SELECT uuid FROM entries WHERE created_at BETWEEN ? AND ? ORDER BY doc", (lo, hi)
            )
        ]

    def next_in_time(self, key: tuple[int, int, str], step: int) -> int | None:
        """The document just after (`step` 1) or before (-1) `key` in time order."""
        if step > 0:
            sql = (
                "SELECT doc FROM entries WHERE (created_at, recorded_at, uuid) > (?, ?, ?) "
                "ORDER BY created_at, recorded_at, uuid LIMIT 1"
            )
        else:
            sql = (
                "SELECT doc FROM entries WHERE (created_at, recorded_at, uuid) < (?, ?, ?) "
                "ORDER BY created_at DESC, recorded_at DESC, uuid DESC LIMIT 1"
            )
        row = self.conn.execute(sql, key).fetchone()
        return None if row is None else int(row[0])
