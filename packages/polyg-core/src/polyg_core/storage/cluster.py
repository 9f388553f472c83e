"""Redis Cluster support: open a cluster-aware client, list graphs on every shard.

A namespace is one graph key, so it lives in one hash slot and therefore on one
shard; the falkordb client (redis-py's `RedisCluster` underneath) routes each
graph command by its key. Only commands without a key (GRAPH.LIST) need to be
sent to every master and their answers merged.
"""

from __future__ import annotations

import warnings
from typing import Any, cast
from urllib.parse import urlsplit

from falkordb.asyncio import FalkorDB
from redis.asyncio.cluster import ClusterNode, RedisCluster

from polyg_core.config import StorageSettings

__all__ = ["cluster_graphs", "open_cluster", "parse_address", "shard_of"]


def parse_address(value: str, default_port: int = 6379) -> tuple[str, int, str | None]:
    """`host:port`, `host` or a `redis://`/`falkor://` URL as (host, port, password).

    Raises:
        ValueError: the value is not an address.
    """
    text = value.strip()
    if "://" in text:
        parts = urlsplit(text)
        if not parts.hostname:
            raise ValueError(f"{value!r} has no host; write it as host:port or redis://host:port")
        return parts.hostname, parts.port or default_port, parts.password
    host, sep, port = text.rpartition(":")
    if not sep:
        return text, default_port, None
    if not host or not port.isdigit():
        raise ValueError(f"{value!r} is not an address; write it as host:port (127.0.0.1:6380)")
    return host, int(port), None


def open_cluster(settings: StorageSettings, connect_timeout: float = 10.0) -> FalkorDB:
    """A falkordb client on the cluster named by `settings.cluster` (blocking: it probes a node).

    Raises:
        ValueError: no cluster is configured, or an address is malformed.
        redis.exceptions.ConnectionError: the first startup node cannot be reached.
    """
    nodes = [parse_address(a) for a in settings.cluster_addresses]
    if not nodes:
        raise ValueError("FALKORDB_CLUSTER is empty; list the cluster's nodes as host:port,...")
    host, port, url_password = nodes[0]
    password = settings.password.get_secret_value() if settings.password else url_password
    # No `retry=` here: the client's cluster probe copies the connection kwargs, and a
    # Retry object among them breaks it.
    with warnings.catch_warnings():
        # The falkordb client passes redis-py arguments that redis-py has deprecated.
        warnings.simplefilter("ignore", DeprecationWarning)
        db = FalkorDB(
            host=host,
            port=port,
            password=password,
            socket_connect_timeout=connect_timeout,
            # As the single server's client: a reply is awaited past the query timeout
            # (redis-py's 5 s default cut long writes off while the server applied them).
            socket_timeout=(
                settings.query_timeout_ms / 1000 + 30 if settings.query_timeout_ms else None
            ),
            startup_nodes=[ClusterNode(h, p) for h, p, _ in nodes],
        )
    if not isinstance(db.connection, RedisCluster):
        raise ValueError(
            f"FALKORDB_CLUSTER names {host}:{port}, which is not in cluster mode; use "
            "FALKORDB_HOST for a single server, or start the nodes with --cluster-enabled yes"
        )
    return db


def _conn(db: FalkorDB) -> RedisCluster:
    return cast(RedisCluster, db.connection)


async def cluster_graphs(db: FalkorDB) -> dict[str, list[str]]:
    """GRAPH.LIST on every master: shard address -> graph names."""
    conn = _conn(db)
    primaries = conn.get_primaries()
    answers: Any = await conn.execute_command("GRAPH.LIST", target_nodes=primaries)
    if not isinstance(answers, dict):  # one master answers with a bare list
        answers = {primaries[0].name: answers}
    out: dict[str, list[str]] = {}
    for shard, names in cast(dict[str, Any], answers).items():
        out[str(shard)] = [n.decode() if isinstance(n, bytes) else str(n) for n in names or ()]
    return out


def shard_of(db: FalkorDB, namespace: str) -> str:
    """The address (`host:port`) of the master that holds a namespace's hash slot."""
    node = _conn(db).get_node_from_key(namespace)
    return node.name if node is not None else "unassigned"


def primaries(db: FalkorDB) -> list[str]:
    """Addresses of the cluster's masters, as the client currently knows them."""
    return [n.name for n in _conn(db).get_primaries()]
