"""The fixed vocabulary of labels and relationship types, and per-namespace schema bootstrap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ENTITY: Final = "E_Entity"
EVENT: Final = "T_Event"
FACT: Final = "T_Fact"
CAUSAL: Final = "C_Node"
CONCEPT: Final = "S_Concept"
MEMORY: Final = "S_Memory"
SCRATCH: Final = "G_Node"
META: Final = "P_Meta"

R_RELATES: Final = "E_RELATES"
R_BEFORE: Final = "T_BEFORE"
R_CAUSES: Final = "C_CAUSES"
R_SOLVED_BY: Final = "C_SOLVED_BY"
R_SIMILAR: Final = "S_SIMILAR_TO"
R_ABOUT: Final = "S_ABOUT"
R_SCRATCH: Final = "G_EDGE"
X_REPRESENTS: Final = "X_REPRESENTS"
X_INVOLVES: Final = "X_INVOLVES"
X_AFFECTS: Final = "X_AFFECTS"
X_REFERS_TO: Final = "X_REFERS_TO"

MEMORY_LABELS: Final = (ENTITY, EVENT, FACT, CAUSAL, CONCEPT, MEMORY)
LABELS: Final = (*MEMORY_LABELS, SCRATCH, META)
CROSS_LINKS: Final = (X_REPRESENTS, X_INVOLVES, X_AFFECTS, X_REFERS_TO)
RELATIONSHIP_TYPES: Final = (
    R_RELATES,
    R_BEFORE,
    R_CAUSES,
    R_SOLVED_BY,
    R_SIMILAR,
    R_ABOUT,
    R_SCRATCH,
    *CROSS_LINKS,
)

GRAPH_OF_LABEL: Final = {
    ENTITY: "entity",
    EVENT: "temporal",
    FACT: "temporal",
    CAUSAL: "causal",
    CONCEPT: "semantic",
    MEMORY: "semantic",
}
LABELS_OF_GRAPH: Final = {
    "entity": (ENTITY,),
    "temporal": (EVENT, FACT),
    "causal": (CAUSAL,),
    "semantic": (CONCEPT, MEMORY),
}
EDGES_OF_GRAPH: Final = {
    "entity": (R_RELATES,),
    "temporal": (R_BEFORE,),
    "causal": (R_CAUSES, R_SOLVED_BY),
    "semantic": (R_SIMILAR, R_ABOUT),
}

# Labels whose nodes carry an `embedding` vector (one HNSW index each).
# Events and facts carry none: they are found through the entities they involve, their
# time, their memory and full-text search, and a vector on each would be most of the
# store at scale (three events and one fact per entity, ~4.5 KB per indexed vector).
EMBEDDED_LABELS: Final = (ENTITY, CAUSAL, CONCEPT, MEMORY, SCRATCH)


@dataclass(frozen=True)
class HnswOptions:
    """The HNSW parameters of a vector index (options of FalkorDB's CREATE VECTOR INDEX).

    Attributes:
        m: links per node and layer (twice that on the bottom layer): memory and insert
            cost grow with it, and so does how well the graph is connected.
        ef_construction: candidates an insert examines to choose its links: insert CPU
            (also at every server start, which rebuilds the index) grows with it.
        ef_runtime: candidates a query examines at least; a query asking for k > ef_runtime
            examines k (polyg asks 2k + 16, `storage/vector.knn`).
    """

    m: int
    ef_construction: int
    ef_runtime: int

    def cypher(self, dimension: int) -> str:
        """The OPTIONS map of a cosine index of `dimension`, with these parameters."""
        return (
            f"{{dimension: {int(dimension)}, similarityFunction: 'cosine', M: {int(self.m)}, "
            f"efConstruction: {int(self.ef_construction)}, efRuntime: {int(self.ef_runtime)}}}"
        )


FALKORDB_HNSW: Final = HnswOptions(m=16, ef_construction=200, ef_runtime=10)
"""FalkorDB's own defaults, which every vector index polyg created before had. Those
indexes are left as they are (an index change in the replayed part of the append-only
file is what breaks FalkorDB 4.16.3's vector indexes, docs/reliability.md)."""

DEFAULT_HNSW: Final = HnswOptions(m=16, ef_construction=100, ef_runtime=64)
"""What polyg gives a new vector index (docs/benchmarks.md, section 18, "HNSW parameters",
100,000 name vectors): efConstruction 100 instead of 200 costs a third less CPU per insert
and per vector at every server start (which rebuilds the index), for k-NN recall@10 of
0.945 against 0.953 at what polyg's queries examine (2k + 16 = 36 before, efRuntime 64
now). M 8 would save ~330 bytes per vector (of ~2.2 KB) for recall@10 0.85: kept at 16."""

HNSW_OPTIONS: Final[dict[str, HnswOptions]] = {label: DEFAULT_HNSW for label in EMBEDDED_LABELS}
"""The options polyg gives a vector index it creates, per label (docs/benchmarks.md,
section 18, "HNSW parameters"); `StorageSettings.hnsw_*` override them for every label."""


RANGE_INDEXES: Final[dict[str, tuple[str, ...]]] = {
    ENTITY: ("uuid", "name_key", "entity_type"),
    EVENT: ("uuid", "occurred_at"),
    FACT: ("uuid", "subject_key", "predicate_key", "valid_from", "valid_to"),
    CAUSAL: ("uuid", "key"),
    CONCEPT: ("uuid", "name_key"),
    MEMORY: ("uuid", "created_at", "recorded_at", "content_hash"),
    SCRATCH: ("uuid", "name_key", "node_type"),
    META: ("key",),
}

# Full-text indexes only where a query reads them: events and facts carry no vector and
# are seeded by the words they share with a question (`storage/fulltext.word_search`).
# Names, causal descriptions, concepts and memories are found by their vectors, their
# normalised keys and recall's own lexical index (the catalogue file), so a full-text
# index on them was written on every insert and read by nothing (~120 bytes per entity,
# ~220 per memory). Namespaces written before keep those indexes; nothing reads them.
FULLTEXT_INDEXES: Final[dict[str, tuple[str, ...]]] = {
    EVENT: ("description",),
    FACT: ("subject", "predicate", "object"),
}


def check_label(label: str) -> str:
    """Return `label` if it is one of polyg's labels.

    Raises:
        ValueError: any other label (labels are never taken from user input).
    """
    if label not in LABELS:
        raise ValueError(f"unknown label {label!r}")
    return label


def check_relationship(rel: str) -> str:
    """Return `rel` if it is one of polyg's relationship types.

    Raises:
        ValueError: any other type (user relation names are stored as properties).
    """
    if rel not in RELATIONSHIP_TYPES:
        raise ValueError(f"unknown relationship type {rel!r}")
    return rel
