"""A namespace's write stamp, and the replies of reads kept while it holds.

Every query that changes a namespace's data sets a new random stamp on its metadata
node in the same query (`stamped`: the store does it for every write it sends, so no
writer can forget it, and a write and its stamp are applied together or not at all).
A reader that reads the stamp and finds the one it saw before knows that nothing was
written since, by this process or any other (a CLI import, another server on the same
FalkorDB). A random token, not a counter: a namespace deleted and written again, or
restored from a backup (`storage.backup` stamps it anew), never shows an old stamp again.

`StampedReads` keeps replies of reads that depend only on stored data under the stamp
read before them: the data they hold is at least as new as that stamp. A reader that
reads the same stamp later may use them; any other stamp starts afresh.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Final

from polyg_core.storage.schema import META

__all__ = [
    "STAMP_PARAM",
    "STAMP_PROPERTY",
    "StampedReads",
    "new_stamp",
    "restamp_query",
    "stamped",
    "writes_data",
]

STAMP_PROPERTY: Final = "write_stamp"
"""The metadata node's property that holds the namespace's write stamp."""

STAMP_PARAM: Final = "polyg_write_stamp"

MAX_ENTRIES: Final = 50_000
"""Replies kept per namespace at most; beyond, the cache starts afresh (a namespace read
in many ways between two writes keeps what it read most recently)."""

# Cypher changes data only through these clauses (FOREACH and LOAD CSV hold one of them).
_WRITE_CLAUSE = re.compile(r"\b(?:CREATE|MERGE|SET|DELETE|REMOVE)\b", re.IGNORECASE)
# Index definitions change no data and take no clause before them.
_INDEX_DEFINITION = re.compile(
    r"^\s*(?:(?:CREATE|DROP)\s+(?:VECTOR\s+|FULLTEXT\s+)?INDEX\b"
    r"|CALL\s+db\.idx\.(?:fulltext|vector)\.(?:create|drop)\w*\s*\()",
    re.IGNORECASE,
)

_PREFIX: Final = (
    f"MATCH (polyg_meta:{META} {{key: 'meta'}}) SET polyg_meta.{STAMP_PROPERTY} = "
    f"${STAMP_PARAM} WITH count(polyg_meta) AS polyg_stamped "
)


def new_stamp() -> str:
    """A stamp no write has set before."""
    return uuid.uuid4().hex


def restamp_query() -> str:
    """A whole query that sets a new write stamp and changes nothing else (for data put
    in place without a query, like a restored backup)."""
    return f"MATCH (m:{META} {{key: 'meta'}}) SET m.{STAMP_PROPERTY} = '{new_stamp()}'"


def writes_data(cypher: str) -> bool:
    """Whether a query may change a namespace's data (an index definition does not)."""
    return bool(_WRITE_CLAUSE.search(cypher)) and not _INDEX_DEFINITION.match(cypher)


def stamped(cypher: str) -> str:
    """`cypher` preceded by the setting of a new write stamp (`$polyg_write_stamp`) on
    the namespace's metadata node, in the same query. The stamp's clauses end in one
    row whatever they find (a namespace without its metadata node yet is written as
    before, unstamped), and leave no variable but `polyg_stamped` in scope."""
    return _PREFIX + cypher


@dataclass
class StampedReads:
    """Replies of reads kept under one write stamp of one namespace (see module doc).

    Values are shared between the readers that find them: a caller must not change
    what it gets.
    """

    stamp: str
    max_entries: int = MAX_ENTRIES
    _entries: dict[Hashable, Any] = field(default_factory=dict[Hashable, Any], repr=False)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The reply kept under `key`, else `default`."""
        return self._entries.get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        """Keep `value` under `key` (the cache starts afresh when full)."""
        if len(self._entries) >= self.max_entries and key not in self._entries:
            self._entries.clear()
        self._entries[key] = value
