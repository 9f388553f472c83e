"""Import/export formats: round trips, malformed and hostile input, size limits, detection."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.algorithms.formats import FORMATS, Limits, detect_format, dump, parse
from polyg_core.algorithms.model import DEFAULT_RELATION, EdgeData, GraphData, NodeData
from polyg_core.errors import InvalidInput

# --- random graphs --------------------------------------------------------------------

# Text without surrounding whitespace (CSV and Mermaid strip cells/labels).
words = (
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
    .map(str.strip)
    .filter(bool)
)
prop_keys = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(
    lambda k: (
        k
        not in {
            "label",
            "type",
            "relation",
            "weight",
            "id",
            "name",
            "source",
            "target",
            "rel",
            "relationship",
            "from",
            "to",
            "properties",
        }
        and not k.startswith(("source_", "target_"))
    )
)
scalars = st.one_of(
    words,
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.booleans(),
)
values = st.one_of(scalars, st.lists(st.one_of(words, st.integers(-99, 99)), max_size=3))


@st.composite
def graphs(draw: st.DrawFn, props: st.SearchStrategy[Any] = values) -> GraphData:
    ids = draw(st.lists(words, min_size=1, max_size=6, unique=True))
    nodes = [
        NodeData(
            node_id,
            draw(st.one_of(st.just(node_id), words)),
            draw(st.one_of(st.none(), words)),
            draw(st.dictionaries(prop_keys, props, max_size=3)),
        )
        for node_id in ids
    ]
    edges = [
        EdgeData(
            draw(st.sampled_from(ids)),
            draw(st.sampled_from(ids)),
            draw(words),
            draw(st.dictionaries(prop_keys, props, max_size=3)),
            draw(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))),
        )
        for _ in range(draw(st.integers(0, 8)))
    ]
    return GraphData(nodes, edges)


def as_text(value: Any) -> str:
    """How the text-only formats write a value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def node_view(g: GraphData, *, props: bool = True, stringify: bool = False) -> list[Any]:
    return sorted(
        (
            n.id,
            n.name,
            repr(n.type),
            sorted((k, as_text(v) if stringify else repr(v)) for k, v in n.properties.items())
            if props
            else [],
        )
        for n in g.nodes
    )


def edge_view(
    g: GraphData, *, props: bool = True, stringify: bool = False, weight: bool = True
) -> list[Any]:
    return sorted(
        (
            e.source,
            e.target,
            e.relation,
            repr(e.weight) if weight else "",
            sorted((k, as_text(v) if stringify else repr(v)) for k, v in e.properties.items())
            if props
            else [],
        )
        for e in g.edges
    )


def roundtrip(g: GraphData, fmt: str) -> GraphData:
    result = parse(dump(g, fmt), fmt)
    assert result.errors == []
    return result.graph


# --- round trips ----------------------------------------------------------------------


@settings(max_examples=40)
@given(graphs())
@pytest.mark.parametrize("fmt", ["json", "cypher"])
def test_lossless_formats_round_trip_everything(fmt: str, g: GraphData) -> None:
    back = roundtrip(g, fmt)
    assert [n.id for n in back.nodes] == [n.id for n in g.nodes]
    assert node_view(back) == node_view(g)
    assert edge_view(back) == edge_view(g)


def xml_safe(g: GraphData) -> GraphData:
    """The graph as GraphML keeps it: control characters XML cannot hold become U+FFFD."""

    def clean(value: Any) -> Any:
        return (
            re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "\ufffd", value)
            if isinstance(value, str)
            else value
        )

    return GraphData(
        [
            NodeData(
                clean(n.id),
                clean(n.name),
                clean(n.type),
                {clean(k): clean(v) for k, v in n.properties.items()},
            )
            for n in g.nodes
        ],
        [
            EdgeData(
                clean(e.source),
                clean(e.target),
                clean(e.relation),
                {clean(k): clean(v) for k, v in e.properties.items()},
                e.weight,
            )
            for e in g.edges
        ],
    )


@settings(max_examples=40)
@given(graphs(props=scalars))
def test_graphml_round_trips_typed_scalars(g: GraphData) -> None:
    # GraphML is lossless while each property name keeps one type: name them by type.
    for item in [*g.nodes, *g.edges]:
        item.properties = {f"{k}_{type(v).__name__}": v for k, v in item.properties.items()}
    back = roundtrip(g, "graphml")
    assert node_view(back) == node_view(xml_safe(g))
    assert edge_view(back) == edge_view(xml_safe(g))


@settings(max_examples=25)
@given(graphs())
def test_dot_round_trips_with_string_values(g: GraphData) -> None:
    back = roundtrip(g, "dot")
    assert node_view(back, stringify=True) == node_view(g, stringify=True)
    assert edge_view(back, stringify=True) == edge_view(g, stringify=True)


@settings(max_examples=40)
@given(graphs())
@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_edge_lists_round_trip_edges_names_and_types(fmt: str, g: GraphData) -> None:
    back = roundtrip(g, fmt)
    assert node_view(back, props=False) == node_view(g, props=False)
    assert edge_view(back, stringify=True) == edge_view(g, stringify=True)


@settings(max_examples=40)
@given(graphs())
def test_mermaid_round_trips_names_and_relations(g: GraphData) -> None:
    back = roundtrip(g, "mermaid")
    names = {n.id: n.name for n in g.nodes}
    back_names = {n.id: n.name for n in back.nodes}
    assert sorted(back_names.values()) == sorted(names.values())
    assert sorted(
        (back_names[e.source], back_names[e.target], e.relation) for e in back.edges
    ) == sorted((names[e.source], names[e.target], e.relation) for e in g.edges)


def test_mermaid_keeps_identifier_ids_and_types() -> None:
    g = GraphData.from_edges([("AuthService", "UserRepo", "uses")])
    g.nodes[0].type = "service"
    back = roundtrip(g, "mermaid")
    assert [(n.id, n.type) for n in back.nodes] == [("AuthService", "service"), ("UserRepo", None)]


# --- reading what people write --------------------------------------------------------


def test_dot_seed_example_reads_labels_as_relations() -> None:
    text = """
    digraph codebase {
        AuthController -> AuthService [label="calls"];
        AuthService -> UserRepository [label="uses"];
        "User Repository" [type=repo, label="The repo", owner=team];
        api -> {auth users};
    }
    """
    result = parse(text, "dot")
    g = result.graph
    assert result.errors == []
    assert g.name == "codebase"
    assert ("AuthController", "AuthService", "calls") in [
        (e.source, e.target, e.relation) for e in g.edges
    ]
    repo = next(n for n in g.nodes if n.id == "User Repository")
    assert (repo.name, repo.type, repo.properties) == ("The repo", "repo", {"owner": "team"})
    assert {(e.source, e.target, e.relation) for e in g.edges if e.source == "api"} == {
        ("api", "auth", DEFAULT_RELATION),
        ("api", "users", DEFAULT_RELATION),
    }


def test_undirected_dot_gives_both_directions_and_a_warning() -> None:
    result = parse("graph { a -- b }", "dot")
    assert {(e.source, e.target) for e in result.graph.edges} == {("a", "b"), ("b", "a")}
    assert result.warnings


def test_csv_seed_example_and_extra_columns() -> None:
    text = "source;target;relation;since\nAuthController;AuthService;calls;2021\nlonely;;;\n"
    g = parse(text, "csv").graph
    assert [(e.source, e.target, e.relation, e.properties) for e in g.edges] == [
        ("AuthController", "AuthService", "calls", {"since": "2021"})
    ]
    assert "lonely" in [n.id for n in g.nodes]


def test_json_accepts_id_and_name_nodes() -> None:
    text = '{"nodes": [{"id": "1", "name": "Auth"}, {"label": "DB", "type": "store", "extra": 3}],'
    text += ' "edges": [{"source": "Auth", "target": "DB", "relation": "uses"}]}'
    g = parse(text, "json").graph
    assert [(n.id, n.name, n.type, n.properties) for n in g.nodes] == [
        ("1", "Auth", None, {}),
        ("DB", "DB", "store", {"extra": 3}),
    ]
    assert [(e.source, e.target) for e in g.edges] == [("1", "DB")]


def test_mermaid_reads_shapes_chains_and_text_labels() -> None:
    text = """graph TD
    %% a comment
    A[Auth Service] -->|calls| B(User Repo) --> C{{"DB #quot;main#quot;"}}
    C -- reads from --> D
    classDef x fill:#f9f
    B <--> D
    """
    g = parse(text, "mermaid").graph
    names = {n.id: n.name for n in g.nodes}
    assert names == {"A": "Auth Service", "B": "User Repo", "C": 'DB "main"', "D": "D"}
    assert [(e.source, e.target, e.relation) for e in g.edges] == [
        ("A", "B", "calls"),
        ("B", "C", DEFAULT_RELATION),
        ("C", "D", "reads from"),
        ("B", "D", DEFAULT_RELATION),
        ("D", "B", DEFAULT_RELATION),
    ]


def test_cypher_reader_takes_other_labels_and_types() -> None:
    text = (
        "CREATE (a:Service {name: 'Auth', tier: 1});\n"
        "CREATE (b:Database {name: 'DB'})\n"
        "// comment\n"
        "CREATE (b)<-[:DEPENDS_ON {since: 2020}]-(a)\n"
    )
    g = parse(text, "cypher").graph
    assert [(n.id, n.type, n.properties) for n in g.nodes] == [
        ("Auth", "Service", {"tier": 1}),
        ("DB", "Database", {}),
    ]
    assert [(e.source, e.target, e.relation, e.properties) for e in g.edges] == [
        ("Auth", "DB", "DEPENDS_ON", {"since": 2020})
    ]


# --- malformed input ------------------------------------------------------------------


def test_csv_bad_rows_are_reported_by_line_and_rest_parsed() -> None:
    text = "source,target,relation,weight\na,b,x,1\nc,d\n,e,y,\nf,g,z,heavy\nh,i,w,2\n"
    result = parse(text, "csv")
    assert [e.line for e in result.errors] == [3, 4, 5]
    assert "expected 4 fields" in result.errors[0].message
    assert "heavy" in result.errors[2].message
    assert [(e.source, e.target) for e in result.graph.edges] == [("a", "b"), ("h", "i")]


def test_mermaid_bad_lines_are_reported_and_rest_parsed() -> None:
    result = parse("flowchart LR\nA --> B\nA -->\nC[unclosed --> D\nE --> F\n", "mermaid")
    assert [e.line for e in result.errors] == [3, 4]
    assert [(e.source, e.target) for e in result.graph.edges] == [("A", "B"), ("E", "F")]


def test_cypher_bad_lines_are_reported_and_never_executed() -> None:
    text = (
        "CREATE (a:G_Node {id: 'a', name: 'A', properties: '{}'})\n"
        "MATCH (n) DETACH DELETE n\n"
        "CREATE (a)-[:G_EDGE {relation: 'r'}]->(ghost)\n"
        "CREATE (b:G_Node {id: 'b', name: 'unclosed})\n"
        "CREATE (c:G_Node {id: 'c'}) RETURN c\n"
        "CREATE (d:G_Node {id: 'd', name: 'D', properties: 'not json'})\n"
        "CREATE (e:G_Node {id: 'e'})\n"
    )
    result = parse(text, "cypher")
    assert [e.line for e in result.errors] == [2, 3, 4, 5, 6]
    assert "only CREATE" in result.errors[0].message
    assert [n.id for n in result.graph.nodes] == ["a", "e"]


@pytest.mark.parametrize(
    ("fmt", "text", "line"),
    [
        ("json", '{"nodes": [{"label": "a"},\n  {"label": }]}', 2),
        ("dot", "digraph {\n  a -> b;\n  c -> ;\n}", 3),
        ("graphml", "<graphml>\n<graph>\n<node id='a'>\n</graph></graphml>", 4),
    ],
)
def test_structured_syntax_error_is_one_error_with_position(fmt: str, text: str, line: int) -> None:
    result = parse(text, fmt)
    assert len(result.errors) == 1
    assert result.errors[0].line == line
    assert result.errors[0].column is not None
    assert result.graph.nodes == []


def test_json_entries_with_problems_are_skipped_by_index() -> None:
    text = '{"nodes": [{"label": "a"}, {"type": "x"}, 5], "edges": [{"source": "a"}, {"source": "a", "target": "b", "weight": "x"}]}'
    result = parse(text, "json")
    assert [e.message.split(":")[0] for e in result.errors] == [
        "nodes[1]",
        "nodes[2]",
        "edges[0]",
        "edges[1]",
    ]
    assert [n.id for n in result.graph.nodes] == ["a"]


def test_graphml_bad_typed_value_is_reported_and_kept_as_text() -> None:
    text = """<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
      <key id="k" for="node" attr.name="count" attr.type="int"/>
      <graph edgedefault="directed"><node id="a"><data key="k">many</data></node></graph>
    </graphml>"""
    result = parse(text, "graphml")
    assert len(result.errors) == 1 and "not a valid int" in result.errors[0].message
    assert result.graph.nodes[0].properties == {"count": "many"}


# --- hostile input and limits ---------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<graphml><graph><node id="&lol3;"/></graph></graphml>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE g [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<graphml><graph><node id="&xxe;"/></graph></graphml>"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL_ENTITY])
def test_graphml_with_entities_is_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="DOCTYPE"):
        parse(text, "graphml")


def test_input_over_byte_limit_is_refused_before_parsing() -> None:
    with pytest.raises(InvalidInput, match="larger than 100 bytes"):
        parse("x" * 101 + "{", "json", limits=Limits(max_bytes=100))


def test_too_long_line_is_refused_for_line_based_formats() -> None:
    text = "source,target\n" + "a," + "b" * 200 + "\n"
    with pytest.raises(InvalidInput, match="Line 2"):
        parse(text, "csv", limits=Limits(max_line_length=100))


@pytest.mark.parametrize("fmt", FORMATS)
def test_node_and_edge_counts_are_bounded(fmt: str) -> None:
    g = GraphData.from_edges([(f"a{i}", f"b{i}") for i in range(6)])
    with pytest.raises(InvalidInput, match=r"more than 5 edges|over the limits"):
        parse(dump(g, fmt), fmt, limits=Limits(max_edges=5))
    with pytest.raises(InvalidInput, match=r"more than 4 nodes|over the limits"):
        parse(dump(g, fmt), fmt, limits=Limits(max_nodes=4))


def test_unknown_format_names_the_choices() -> None:
    with pytest.raises(InvalidInput, match="json, dot, csv"):
        parse("", "yaml")


# --- detection ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_detect_format_recognises_each_dump(fmt: str) -> None:
    g = GraphData.from_edges([("a", "b", "r"), ("b", "c", "s")])
    assert detect_format(dump(g, fmt)) == fmt


def test_detect_format_prefers_file_extension() -> None:
    assert detect_format("a,b", filename="graph.gv") == "dot"
    assert detect_format("digraph { a -> b }", filename="notes.txt") == "dot"
    assert detect_format("graph TD\n A --> B") == "mermaid"
    with pytest.raises(InvalidInput):
        detect_format("   ")
