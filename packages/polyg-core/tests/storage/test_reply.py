"""The store's own reading of GRAPH.QUERY replies and writing of parameters: the same
values as the falkordb client's parser and the same Cypher text as its header."""

from __future__ import annotations

from typing import Any, cast

import falkordb.helpers as client_helpers  # pyright: ignore[reportMissingTypeStubs]
import pytest
from falkordb.asyncio.query_result import (  # pyright: ignore[reportMissingTypeStubs]
    QueryResult as ClientResult,
)
from hypothesis import given
from hypothesis import strategies as st
from polyg_core.storage import FalkorStore
from polyg_core.storage.reply import NeedsSchema, cypher_params, param_text, read_reply
from polyg_core.storage.store import VectorLiteral

pytestmark = pytest.mark.anyio

SEED = (
    "CREATE (:E_Entity {uuid: 'p1', name: 'Odile \"Dee\" Marchetti', age: 41, height: 1.68, "
    "active: true, tags: ['kayak', 'pottery'], since: 1700000000000, "
    "embedding: vecf32([0.25, -0.5, 0.125])}), "
    "(:E_Entity {uuid: 'p2', name: 'Tomasz Wr\u00f3bel \U0001f6f6', age: 29, active: false})"
)

QUERIES = [
    # Projected properties (what recall reads), with the embedding left out.
    "MATCH (e:E_Entity) RETURN e {.*, embedding: null} ORDER BY e.uuid",
    # Scalars of every common kind, nulls and nested lists and maps.
    "MATCH (e:E_Entity) RETURN e.uuid, e.name, e.age, e.height, e.active, e.tags, e.missing, "
    "[e.age, [e.name, null], {k: e.height}] ORDER BY e.uuid",
    # A stored vector, a computed similarity, a point, aggregates.
    "MATCH (e:E_Entity {uuid: 'p1'}) RETURN e.embedding, "
    "1.0 - vec.cosineDistance(e.embedding, vecf32([0.25, -0.5, 0.125])), "
    "point({latitude: 52.2, longitude: 21.0})",
    "MATCH (e:E_Entity) RETURN count(e), sum(e.age), avg(e.age), collect(e.uuid)",
    # No rows, no columns.
    "MATCH (e:E_Entity {uuid: 'nobody'}) RETURN e.name",
]


async def _raw(store: FalkorStore, namespace: str, cypher: str) -> Any:
    db = await store._ensure_db()  # pyright: ignore[reportPrivateUsage]
    return await db.connection.execute_command("GRAPH.RO_QUERY", namespace, cypher, "--compact")


async def _client_rows(store: FalkorStore, namespace: str, raw: Any) -> list[list[Any]]:
    db = await store._ensure_db()  # pyright: ignore[reportPrivateUsage]
    parsed: Any = ClientResult(db.select_graph(namespace))  # untyped client
    await parsed.parse(raw)
    rows = cast(list[list[Any]], parsed.result_set)
    return [[_plain(v) for v in row] for row in rows]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


@pytest.mark.parametrize("cypher", QUERIES)
async def test_replies_read_to_the_client_parsers_values(
    store: FalkorStore, namespace: str, cypher: str
) -> None:
    await store.query(namespace, SEED)
    raw = await _raw(store, namespace, cypher)
    ours = read_reply(raw)
    theirs = await _client_rows(store, namespace, raw)
    assert ours.rows == theirs
    assert [type(v) for row in ours.rows for v in row] == [type(v) for row in theirs for v in row]


async def test_store_rows_are_plain_values(store: FalkorStore, namespace: str) -> None:
    await store.query(namespace, SEED)
    res = await store.query(
        namespace,
        "MATCH (e:E_Entity) RETURN e {.*, embedding: null} ORDER BY e.uuid",
        read_only=True,
    )
    first = res.rows[0][0]
    assert type(first) is dict
    assert first["name"] == 'Odile "Dee" Marchetti'
    assert first["tags"] == ["kayak", "pottery"]
    assert first["active"] is True and res.rows[1][0]["active"] is False


async def test_write_counts_come_from_the_replys_statistics(
    store: FalkorStore, namespace: str
) -> None:
    res = await store.query(namespace, SEED)
    assert (res.nodes_created, res.properties_set) == (2, 12)
    res = await store.query(
        namespace,
        "MATCH (a:E_Entity {uuid: 'p1'}), (b:E_Entity {uuid: 'p2'}) "
        "CREATE (a)-[:E_RELATES {relationship_type: 'paddles_with'}]->(b)",
    )
    assert res.relationships_created == 1
    res = await store.query(namespace, "MATCH (e:E_Entity {uuid: 'p2'}) DETACH DELETE e")
    assert (res.nodes_deleted, res.relationships_deleted) == (1, 1)


async def test_nodes_and_edges_still_come_back_with_their_names(
    store: FalkorStore, namespace: str
) -> None:
    await store.query(namespace, SEED)
    raw = await _raw(store, namespace, "MATCH (e:E_Entity {uuid: 'p2'}) RETURN e")
    with pytest.raises(NeedsSchema):
        read_reply(raw)
    res = await store.query(
        namespace, "MATCH (e:E_Entity {uuid: 'p2'}) RETURN e, e.uuid", read_only=True
    )
    node, uuid = res.rows[0]
    assert uuid == "p2"
    assert node["_labels"] == ["E_Entity"]
    assert node["name"] == "Tomasz Wr\u00f3bel \U0001f6f6"


async def test_a_hostile_string_parameter_round_trips(store: FalkorStore, namespace: str) -> None:
    text = 'x\'}) MATCH (n) DETACH DELETE n // "quoted" and \\ backslash \u00e9'
    await store.query(namespace, "CREATE (:E_Entity {uuid: $u, name: $n})", {"u": "h", "n": text})
    res = await store.query(
        namespace, "MATCH (e:E_Entity) WHERE e.name = $n RETURN e.uuid", {"n": text}
    )
    assert res.rows == [["h"]]


async def test_a_query_error_is_raised_as_before(store: FalkorStore, namespace: str) -> None:
    from polyg_core.errors import StorageError

    await store.query(namespace, SEED)
    with pytest.raises(StorageError, match="FalkorDB rejected"):
        await store.query(namespace, "MATCH (e:E_Entity) RETURN e.age / 'x'", read_only=True)


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.builds(VectorLiteral, st.lists(st.floats(width=32, allow_nan=False), max_size=4)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(min_size=1).filter(lambda k: "`" not in k), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(_values)
def test_parameters_are_written_as_the_client_writes_them(value: Any) -> None:
    assert param_text(value) == cast(str, client_helpers.stringify_param_value(value))  # pyright: ignore[reportUnknownMemberType]


@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), _values))
def test_the_parameter_header_is_the_clients(params: dict[str, Any]) -> None:
    from falkordb.graph import Graph  # pyright: ignore[reportMissingTypeStubs]

    assert cypher_params(params) == Graph._build_params_header(  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
        None,  # pyright: ignore[reportArgumentType]
        params,
    )


@pytest.mark.parametrize(
    ("elements", "expected"),
    [
        ([0.25, -0.5, 0.125], [0.25, -0.5, 0.125]),  # hiredis: floats already
        (["0.25", "-0.5", "1"], [0.25, -0.5, 1.0]),  # a parser that hands over text
        ([b"0.25", b"2"], [0.25, 2.0]),
        ([], []),
    ],
)
def test_a_vector_cell_reads_as_floats_whatever_the_parser_gave(
    elements: list[Any], expected: list[float]
) -> None:
    value = read_reply([["v"], [[[12, elements]]], []]).rows[0][0]
    assert value == expected
    assert all(type(x) is float for x in value)


def test_a_map_cell_reads_every_kind_of_value_and_key() -> None:
    # Text and integers are read inline; the rest goes through the per-kind readers.
    cell = [
        10,
        [
            "name",
            [2, "Wren Adebayo"],
            b"visits",
            [3, 4],
            "score",
            [5, "0.75"],
            "left",
            [1, None],
            "tags",
            [6, [[2, "kiln"], [3, 2]]],
            "ok",
            [4, "true"],
            "raw",
            [2, b"bytes text"],
            "nested",
            [10, ["a", [3, 1]]],
        ],
    ]
    value = read_reply([["m"], [[cell]], []]).rows[0][0]
    assert value == {
        "name": "Wren Adebayo",
        "visits": 4,
        "score": 0.75,
        "left": None,
        "tags": ["kiln", 2],
        "ok": True,
        "raw": "bytes text",
        "nested": {"a": 1},
    }
