from typing import Any, Self

class AbstractConnection:
    def __init__(self, **kwargs: Any) -> None: ...

class Connection(AbstractConnection): ...

class UnixDomainSocketConnection(AbstractConnection):
    def __init__(self, *, path: str = "", **kwargs: Any) -> None: ...

class ConnectionPool:
    def __init__(
        self,
        connection_class: type[AbstractConnection] = ...,
        max_connections: int | None = None,
        **connection_kwargs: Any,
    ) -> None: ...
    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Self: ...
    async def get_connection(
        self, command_name: str | None = None, *keys: Any, **options: Any
    ) -> AbstractConnection: ...
    async def release(self, connection: AbstractConnection) -> None: ...
    async def disconnect(self, inuse_connections: bool = True) -> None: ...
    async def aclose(self) -> None: ...

class BlockingConnectionPool(ConnectionPool):
    def __init__(
        self,
        max_connections: int = 50,
        timeout: float | None = 20,
        connection_class: type[AbstractConnection] = ...,
        **connection_kwargs: Any,
    ) -> None: ...
