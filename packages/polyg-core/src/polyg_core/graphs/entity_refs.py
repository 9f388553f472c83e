"""Entity references on a write: the one rule every writer uses.

`ensure_entity_uuids` turns the entity names a write was given into entity
uuids, creating plain entities for names nothing matches, so the cross-links
(`X_INVOLVES`, `X_AFFECTS`, `X_REPRESENTS`) and untyped relation ends always have
an endpoint. Every writer goes through it: the per-record graph methods (events,
facts, causal links and nodes, concepts, `EntityGraph.ensure`), the batch writer
(`graphs/bulk.py`, used by JSONL and Cypher import), and `remember`.

The rule: a name is an entity's uuid, its exact name, or its normalised name
(case, spaces, punctuation); similarity by meaning never decides. When several
entities answer to the name (one name for entities of several types, or one
normalised name without an exact spelling), the write fails with `AmbiguousName`
and its candidates: the caller names the uuid (or, where the write takes one,
the type). Nothing picks one of them silently. A name nothing matches becomes
a new entity of type "entity" marked `origin = "ensure"`, which orphan cleanup
removes once nothing links to it. The write reports the entities it created
(`created_entities`), each with its near-duplicates by meaning (`similar_existing`,
the resolver's rule), so a caller who meant a stored entity can merge on purpose.

`lexically_compatible` is the guard applied to every match by meaning made on a
write (causal descriptions, events, scratch labels; entity names on a write match
exactly or not at all): sentence embeddings put "latency increased" next to "latency
decreased" and "deploy v2.3.1" next to "deploy v2.3.2" (cosine 0.95-0.96 with
all-MiniLM-L6-v2), so an embedding match only counts when the two texts carry
the same numbers, the same negation and no opposite polarity words.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from polyg_shared.results import WrittenNode

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput
from polyg_core.graphs.base import ensure_vectors
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import ENTITY_NAMES, NameResolver, similar_nodes
from polyg_core.storage.schema import ENTITY
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_description, normalize_name

logger = logging.getLogger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)

_NEGATORS = frozenset({"not", "no", "never", "without", "none", "nothing", "nor", "cannot"})
# Words that flip the state a description talks about when only one side has them.
_FLIPPERS = _NEGATORS | frozenset(
    {"fixed", "resolved", "recovered", "restored", "repaired", "prevented", "avoided", "reverted"}
)
_POLARITY: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        (
            "increase increased increases increasing higher more rise rising rose up gain grew",
            "decrease decreased decreases decreasing lower less fall falling fell down drop "
            "dropped loss shrank",
        ),
        ("high", "low"),
        (
            "add added adds adding present set defined included exists",
            "remove removed removes removing missing absent unset undefined excluded deleted",
        ),
        ("enable enabled enables enabling on", "disable disabled disables disabling off"),
        ("start started starts starting", "stop stopped stops stopping"),
        (
            "success succeeded succeeds successful pass passed passes passing ok",
            "failure failed fails failing fail unsuccessful",
        ),
        ("open opened", "close closed"),
        ("valid", "invalid"),
        ("available", "unavailable"),
        ("online", "offline"),
        ("healthy", "unhealthy"),
        ("connected", "disconnected"),
        ("allow allowed accept accepted grant granted", "deny denied reject rejected refused"),
        ("upgrade upgraded", "downgrade downgraded"),
        ("before", "after"),
        ("fast faster", "slow slower"),
        ("min minimum", "max maximum"),
        ("hit", "miss"),
        ("strong stronger", "weak weaker"),
        ("good better best", "bad worse worst"),
        ("big bigger large larger", "small smaller little"),
        ("new newer", "old older"),
        ("true", "false"),
        ("read reads", "write writes"),
        ("inbound incoming", "outbound outgoing"),
    )
)
_CONTRACTION = re.compile(r"n['’]t\b")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Words that carry no subject: a text adding or dropping them still says the same thing.
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "its",
        "it",
        "this",
        "that",
        "these",
        "those",
        "as",
        "into",
        "onto",
        "via",
        "due",
        "because",
        "after",
    ]
)
_NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "hundred",
        "thousand",
        "million",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "last",
    ]
)


def _is_label(word: str) -> bool:
    """Numbers, number words and one-letter names ("service B") tell things apart."""
    return (
        any(c.isdigit() for c in word)
        or word in _NUMBER_WORDS
        or (len(word) == 1 and word.isalpha() and word not in {"a", "i"})
    )


def epoch_ms(dt: datetime) -> int:
    """Exact epoch milliseconds of an aware datetime (no float rounding)."""
    return (dt.astimezone(UTC) - _EPOCH) // _MS


def from_ms(ms: int) -> datetime:
    """The aware UTC datetime of epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=int(ms))


def _words(text: str) -> list[str]:
    split = _CAMEL.sub(" ", text)
    return normalize_description(_CONTRACTION.sub(" not", split.casefold())).split()


def _same_stem(a: str, b: str) -> bool:
    """ "crash"/"crashed", "deploy"/"deployment": one word extends the other."""
    short, long = sorted((a, b), key=len)
    return len(short) >= 3 and long.startswith(short[: max(3, len(short) - 1)])


def _uncovered(words: set[str], other: set[str]) -> set[str]:
    return {w for w in words - _FILLER if not any(_same_stem(w, v) for v in other)}


def lexically_compatible(a: str, b: str) -> bool:
    """False when two texts that embed close together still say different things.

    They must contain the same numbers (versions, ids, number words, one-letter
    names like "service B"), agree on negation and on
    "fixed"-like state words, and not differ by opposite words (increased /
    decreased, missing / added, ...). Nor may each side have a word the other
    lacks: that is one subject put in place of another ("romeo cluster down" /
    "juliet cluster down", "AuthService" / "AuthController"), while a text that
    only adds words to the other ("AUTH_SECRET missing from config") refines it.
    """
    wa, wb = _words(a), _words(b)
    sa, sb = set(wa), set(wb)
    if {w for w in wa if _is_label(w)} != {w for w in wb if _is_label(w)}:
        return False
    only_a, only_b = sa - sb, sb - sa
    if _uncovered(only_a, sb) and _uncovered(only_b, sa):
        return False
    if (only_a | only_b) & _FLIPPERS:
        return False
    for left, right in _POLARITY:
        if (only_a & left and only_b & right) or (only_a & right and only_b & left):
            return False
    return True


def _unique(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for raw in names:
        name = raw.strip()
        if not name:
            raise InvalidInput("an entity name is empty; give each entity a name or a uuid")
        if len(name) > 256:
            raise InvalidInput(f"entity name {name[:40]!r}... is longer than 256 characters")
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


@dataclass(frozen=True)
class StoredEntity:
    """An entity a lookup found: what a write needs to decide and report."""

    uuid: str
    name: str
    name_key: str
    entity_type: str
    properties: Any = None
    origin: Any = None


# Every entity a name can answer to, for many names in one query: by uuid and by
# normalised key (both range-indexed). `decide_entity` applies the rule to the rows.
LOOKUP_ENTITIES = f"""
UNWIND $refs AS r MATCH (n:{ENTITY} {{uuid: r[0]}})
RETURN r[0] AS ref, 'uuid' AS how, n.uuid AS uuid, n.name AS name, n.name_key AS key,
    n.entity_type AS type, n.properties AS props, n.origin AS origin
UNION ALL
UNWIND $refs AS r MATCH (n:{ENTITY} {{name_key: r[1]}})
RETURN r[0] AS ref, 'key' AS how, n.uuid AS uuid, n.name AS name, n.name_key AS key,
    n.entity_type AS type, n.properties AS props, n.origin AS origin
"""

EntityRows = dict[str, tuple[list[StoredEntity], list[StoredEntity]]]
"""Per name (stripped): the entities with that uuid, and those with its normalised key."""


def lookup_params(names: Iterable[str]) -> list[list[str]]:
    """The `$refs` of `LOOKUP_ENTITIES` for names (stripped, blank ones left out)."""
    out: dict[str, list[str]] = {}
    for raw in names:
        name = raw.strip()
        if name and name not in out:
            # A name without letters or digits is keyed by its case-folded text (as
            # `graphs/base.name_key` stores it); only its exact spelling matches then.
            out[name] = [name, normalize_name(name) or name.casefold()]
    return list(out.values())


def entity_rows(rows: Iterable[Sequence[Any]]) -> EntityRows:
    """Group the rows of `LOOKUP_ENTITIES` (columns ref, how, uuid, name, key, type,
    props, origin) by name."""
    out: EntityRows = {}
    for ref, how, uid, name, key, etype, properties, origin in rows:
        by_uuid, by_key = out.setdefault(str(ref), ([], []))
        found = StoredEntity(
            str(uid), str(name), str(key), str(etype or "entity"), properties, origin
        )
        (by_uuid if how == "uuid" else by_key).append(found)
    return out


async def lookup_entities(store: FalkorStore, namespace: str, names: Iterable[str]) -> EntityRows:
    """The stored entities each name can answer to, in one query (see `decide_entity`)."""
    refs = lookup_params(names)
    if not refs:
        return {}
    res = await store.query(namespace, LOOKUP_ENTITIES, {"refs": refs}, read_only=True)
    return entity_rows(res.rows)


def _candidates(found: Sequence[StoredEntity], limit: int = 5) -> list[Candidate]:
    return [Candidate(e.uuid, e.name, ENTITY, 1.0) for e in found[:limit]]


def decide_entity(name: str, rows: EntityRows) -> StoredEntity | None:
    """The one entity `name` names on a write: its uuid, its exact name, or its normalised
    name; None when nothing matches.

    Raises:
        AmbiguousName: several entities have the exact name, or (without one of exact
            spelling) the normalised name.
    """
    text = name.strip()
    by_uuid, by_key = rows.get(text, ([], []))
    if len(by_uuid) == 1:
        return by_uuid[0]
    exact = [e for e in by_key if e.name == text]
    steps = (exact, by_key) if normalize_name(text) else (exact,)
    for found in steps:
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousName("entity", name, _candidates(found))
    return None


async def ensure_entity_uuids(
    store: FalkorStore,
    resolver: NameResolver,
    embedder: Embedder,
    namespace: str,
    names: Sequence[str],
    *,
    created: dict[str, str] | None = None,
) -> dict[str, str]:
    """Map each entity name (or uuid) to an entity uuid, creating plain entities when missing.

    Each name is resolved by uuid, exact or normalised name, never by meaning (one
    lookup query for all names, `decide_entity`). Names that match nothing become
    `E_Entity {entity_type: "entity"}` nodes, MERGEd on (name_key, entity_type) in one
    query, so retries and concurrent calls do not duplicate them. The entities this
    call created are added to `created` (uuid to name) when given.

    Raises:
        InvalidInput: an empty or overlong name.
        AmbiguousName: a name matches several entities about equally well.
    """
    wanted = _unique(names)
    got = await resolve_entity_names(store, embedder, namespace, wanted, created=created)
    out: dict[str, str] = {}
    for name in wanted:
        value = got[name]
        if isinstance(value, Exception):
            raise value
        out[name] = value
    return out


async def resolve_entity_names(
    store: FalkorStore,
    embedder: Embedder,
    namespace: str,
    names: Sequence[str],
    *,
    created: dict[str, str] | None = None,
) -> dict[str, str | InvalidInput | AmbiguousName]:
    """`ensure_entity_uuids` for a batch whose names fail one by one: each name (stripped)
    maps to its entity uuid, or to the error that name raises. One lookup query, one
    embedding call and one write for the names nothing matched."""
    out: dict[str, str | InvalidInput | AmbiguousName] = {}
    wanted: list[str] = []
    for raw in dict.fromkeys(names):
        try:
            wanted.extend(_unique([raw]))
        except InvalidInput as exc:
            out[raw.strip()] = exc
    if not wanted:
        return out
    rows = await lookup_entities(store, namespace, wanted)
    missing: list[str] = []
    for name in dict.fromkeys(wanted):
        # Exact steps only: a name close in meaning to a stored one is still another
        # entity ("payments-db-secondary" is not "payments-db-primary").
        try:
            found = decide_entity(name, rows)
        except AmbiguousName as exc:
            out[name] = exc
            continue
        if found is not None:
            out[name] = found.uuid
        elif not normalize_name(name):
            out[name] = InvalidInput(
                f"entity name {name!r} has no letters or digits; give a real name"
            )
        else:
            missing.append(name)
    if not missing:
        return out
    await store.ensure_schema(namespace)
    await ensure_vectors(store, namespace, embedder)
    vectors = await embedder.embed(missing)
    written = await write_ensured(
        store,
        namespace,
        [(name, [float(x) for x in vectors[i]]) for i, name in enumerate(missing)],
    )
    for name, (uid, new) in written.items():
        out[name] = uid
        if new and created is not None:
            created[uid] = name
    return out


async def created_entities(
    resolver: NameResolver, namespace: str, created: Mapping[str, str]
) -> list[WrittenNode]:
    """How a write reports the entities it created (`created`: uuid to name, as
    `ensure_entity_uuids` fills it): each with the stored entities close in meaning,
    one k-NN query for all (`NameResolver.similar_to_created`)."""
    if not created:
        return []
    near = await resolver.similar_to_created(namespace, ENTITY_NAMES, list(created))
    return [
        WrittenNode(
            uuid=uid,
            name=name,
            label=ENTITY,
            created=True,
            similar_existing=similar_nodes(near.get(uid, [])),
        )
        for uid, name in created.items()
    ]


async def write_ensured(
    store: FalkorStore, namespace: str, items: Sequence[tuple[str, list[float] | None]]
) -> dict[str, tuple[str, bool]]:
    """Write the plain entities of names nothing matched: (name, vector) in, name to
    (uuid, created) out. One query of the typed entity write (`graphs/entity.py`,
    `MERGE_ENTITIES`) on (name_key, "entity"), marked `origin = "ensure"`."""
    # The entity graph imports this module for its name rule; its writer is imported here.
    from polyg_core.graphs.entity import ORIGIN_ENSURED, entity_row, merge_entity_rows

    if not items:
        return {}
    # One row per key: a MERGE in an UNWIND does not see nodes earlier rows created.
    rows: dict[str, dict[str, Any]] = {}
    for name, vec in items:
        key = normalize_name(name)
        if key not in rows:
            rows[key] = entity_row(
                len(rows), name, "entity", None, exists=False, origin=ORIGIN_ENSURED, vec=vec
            )
    written = await merge_entity_rows(store, namespace, list(rows.values()))
    out: dict[str, tuple[str, bool]] = {}
    for name, _ in items:
        row = rows[normalize_name(name)]
        entity, new = written[row["i"]]
        out[name] = (entity.uuid, new and row["name"] == name)
    logger.debug("ensured %d entities in %s", len(written), namespace)
    return out
