from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode

class QueryResult:
    header: list[Any]
    result_set: list[list[Any]]
    @property
    def nodes_created(self) -> int: ...
    @property
    def nodes_deleted(self) -> int: ...
    @property
    def relationships_created(self) -> int: ...
    @property
    def relationships_deleted(self) -> int: ...
    @property
    def properties_set(self) -> int: ...

class AsyncGraph:
    name: str
    async def query(
        self, q: str, params: dict[str, Any] | None = None, timeout: int | None = None
    ) -> QueryResult: ...
    async def ro_query(
        self, q: str, params: dict[str, Any] | None = None, timeout: int | None = None
    ) -> QueryResult: ...
    async def delete(self) -> None: ...

class FalkorDB:
    connection: Redis
    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        password: str | None = None,
        socket_timeout: float | None = None,
        socket_connect_timeout: float | None = None,
        unix_socket_path: str | None = None,
        max_connections: int | None = None,
        startup_nodes: list[ClusterNode] | None = None,
        **kwargs: Any,
    ) -> None: ...
    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> FalkorDB: ...
    def select_graph(self, graph_id: str) -> AsyncGraph: ...
    async def list_graphs(self) -> list[str]: ...
    async def aclose(self) -> None: ...
