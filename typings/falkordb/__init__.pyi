from typing import Any

from redis import Redis

class Node:
    id: int | None
    alias: str | None
    labels: list[str] | None
    properties: dict[str, Any]

class Edge:
    id: int | None
    alias: str | None
    src_node: Node | int | None
    dest_node: Node | int | None
    relation: str | None
    properties: dict[str, Any]

class Path:
    def nodes(self) -> list[Node]: ...
    def edges(self) -> list[Edge]: ...

class QueryResult:
    header: list[Any]
    result_set: list[list[Any]]

class Graph:
    name: str
    def query(
        self, q: str, params: dict[str, Any] | None = None, timeout: int | None = None
    ) -> QueryResult: ...
    def ro_query(
        self, q: str, params: dict[str, Any] | None = None, timeout: int | None = None
    ) -> QueryResult: ...

class FalkorDB:
    connection: Redis
    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        password: str | None = None,
        unix_socket_path: str | None = None,
        **kwargs: Any,
    ) -> None: ...
    def select_graph(self, graph_id: str) -> Graph: ...
    def list_graphs(self) -> list[str]: ...
