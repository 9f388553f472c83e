"""Settings: plain models passed down as objects.

The library never reads the environment. Entry points (the server, the CLI, the
worker) call `settings_from_env(os.environ)` once; everything below them takes the
settings it is given, and a `Settings()` built in code holds the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from polyg_shared.types import is_graph_name
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from polyg_core.errors import InvalidInput


class StorageSettings(BaseModel):
    """Where FalkorDB is and how to talk to it."""

    # Each field takes its name or its environment variable (the alias).
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # repr=False: a URL may carry the password (redis://:password@host:port).
    url: str | None = Field(
        default=None, repr=False, validation_alias=AliasChoices("FALKORDB_URL", "url")
    )
    host: str | None = Field(default=None, validation_alias=AliasChoices("FALKORDB_HOST", "host"))
    port: int = Field(default=6379, validation_alias=AliasChoices("FALKORDB_PORT", "port"))
    password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FALKORDB_PASSWORD", "password")
    )
    graph: str = Field(default="polyg", validation_alias=AliasChoices("FALKORDB_GRAPH", "graph"))
    data_dir: Path | None = Field(
        default=None, validation_alias=AliasChoices("POLYG_DATA_DIR", "data_dir")
    )
    appendfsync: Literal["everysec", "always"] = Field(
        default="everysec",
        validation_alias=AliasChoices("POLYG_APPENDFSYNC", "appendfsync"),
        description=(
            "When the embedded FalkorDB fsyncs its append-only file: everysec (a power loss "
            "can lose the last second of acknowledged writes) or always (before each reply; "
            "slower writes)."
        ),
    )
    query_timeout_ms: int = Field(
        default=30_000,
        ge=0,
        validation_alias=AliasChoices("POLYG_QUERY_TIMEOUT_MS", "query_timeout_ms"),
        description="Per-query timeout in milliseconds (0 = none).",
    )
    max_retries: int = Field(
        default=3, ge=0, le=20, validation_alias=AliasChoices("POLYG_MAX_RETRIES", "max_retries")
    )
    max_connections: int = Field(
        default=64,
        ge=1,
        le=10_000,
        validation_alias=AliasChoices("POLYG_MAX_CONNECTIONS", "max_connections"),
        description="Connections to FalkorDB per process; further queries wait for a free one.",
    )
    # repr=False: replica URLs may carry passwords too.
    replicas: str | None = Field(
        default=None,
        repr=False,
        validation_alias=AliasChoices("FALKORDB_REPLICAS", "replicas"),
        description="Read replicas of the primary: comma-separated host:port or redis:// URLs.",
    )
    cluster: str | None = Field(
        default=None,
        repr=False,
        validation_alias=AliasChoices("FALKORDB_CLUSTER", "cluster"),
        description="Redis Cluster startup nodes: comma-separated host:port or redis:// URLs.",
    )
    read_your_writes_ms: int = Field(
        default=5_000,
        ge=0,
        validation_alias=AliasChoices("POLYG_READ_YOUR_WRITES_MS", "read_your_writes_ms"),
        description=(
            "After a write, the session's reads stay on the primary until a replica has "
            "caught up with the write, for at most this long (0 = no read-your-writes)."
        ),
    )
    replica_max_lag_bytes: int = Field(
        default=1_048_576,
        ge=0,
        validation_alias=AliasChoices("POLYG_REPLICA_MAX_LAG_BYTES", "replica_max_lag_bytes"),
        description="A replica further behind the primary's replication offset gets no reads.",
    )
    replica_check_ms: int = Field(
        default=250,
        ge=10,
        validation_alias=AliasChoices("POLYG_REPLICA_CHECK_MS", "replica_check_ms"),
        description="How often replica health and replication offsets are re-read.",
    )

    @field_validator("graph")
    @classmethod
    def _graph_name(cls, value: str) -> str:
        if not is_graph_name(value):
            raise ValueError(
                f"invalid graph name {value!r}: use 1-64 characters from letters, digits, "
                "'_', '.' and '-' (for example 'polyg' or 'project-x')"
            )
        return value

    @model_validator(mode="after")
    def _one_topology(self) -> StorageSettings:
        if self.replicas and self.cluster:
            raise ValueError(
                "FALKORDB_REPLICAS and FALKORDB_CLUSTER cannot be combined: use replicas with "
                "one primary (FALKORDB_HOST/FALKORDB_URL), or a cluster (its shards may have "
                "their own Redis replicas)"
            )
        if self.replicas and not (self.url or self.host):
            raise ValueError(
                "FALKORDB_REPLICAS needs the primary too: set FALKORDB_HOST (and FALKORDB_PORT) "
                "or FALKORDB_URL to the primary's address"
            )
        return self

    @property
    def external(self) -> bool:
        """True when an external FalkorDB server is configured."""
        return bool(self.url or self.host or self.cluster)

    @property
    def replica_addresses(self) -> list[str]:
        """The configured replicas, one `host:port` or URL each (empty when none)."""
        return _split(self.replicas)

    @property
    def cluster_addresses(self) -> list[str]:
        """The configured cluster startup nodes (empty when no cluster is configured)."""
        return _split(self.cluster)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class Settings(BaseModel):
    """Everything polyg is configured with (DESIGN.md, Configuration); the aliases are the
    environment variables `settings_from_env` reads."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    storage: StorageSettings = Field(default_factory=StorageSettings)

    llm_model: str | None = Field(
        default=None, validation_alias=AliasChoices("LLM_MODEL", "llm_model")
    )
    llm_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LLM_BASE_URL", "OPENAI_BASE_URL", "llm_base_url"),
    )
    llm_timeout_s: float = Field(
        default=30.0, gt=0, validation_alias=AliasChoices("LLM_TIMEOUT", "llm_timeout_s")
    )
    embedding_model: str = Field(
        default="local/minilm", validation_alias=AliasChoices("EMBEDDING_MODEL", "embedding_model")
    )
    classifier_max_tokens: int = Field(
        default=500,
        gt=0,
        validation_alias=AliasChoices("CLASSIFIER_MAX_TOKENS", "classifier_max_tokens"),
    )
    synthesizer_max_tokens: int = Field(
        default=1000,
        gt=0,
        validation_alias=AliasChoices("SYNTHESIZER_MAX_TOKENS", "synthesizer_max_tokens"),
    )
    max_retries: int = Field(
        default=3, ge=0, le=20, validation_alias=AliasChoices("POLYG_MAX_RETRIES", "max_retries")
    )
    parallel_timeout_s: float = Field(
        default=5.0,
        gt=0,
        validation_alias=AliasChoices("POLYG_PARALLEL_TIMEOUT", "parallel_timeout_s"),
        description="Per-view timeout of the parallel expansion, in seconds.",
    )
    magma_semantic_top_k: int = Field(
        default=10,
        gt=0,
        le=200,
        validation_alias=AliasChoices("MAGMA_SEMANTIC_TOP_K", "magma_semantic_top_k"),
    )
    magma_min_semantic_score: float = Field(
        default=0.3,
        ge=0,
        le=1,
        validation_alias=AliasChoices("MAGMA_MIN_SEMANTIC_SCORE", "magma_min_semantic_score"),
    )
    magma_multi_view_boost: float = Field(
        default=1.5,
        ge=1,
        validation_alias=AliasChoices("MAGMA_MULTI_VIEW_BOOST", "magma_multi_view_boost"),
    )
    magma_max_context_tokens: int = Field(
        default=4000,
        gt=0,
        validation_alias=AliasChoices("MAGMA_MAX_CONTEXT_TOKENS", "magma_max_context_tokens"),
    )

    port: int = Field(
        default=3000, ge=1, le=65535, validation_alias=AliasChoices("POLYG_PORT", "port")
    )
    host: str = Field(default="127.0.0.1", validation_alias=AliasChoices("POLYG_HOST", "host"))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", validation_alias=AliasChoices("POLYG_LOG_LEVEL", "log_level")
    )
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("POLYG_API_KEY", "api_key")
    )
    allowed_origins: str = Field(
        default="", validation_alias=AliasChoices("POLYG_ALLOWED_ORIGINS", "allowed_origins")
    )
    allowed_hosts: str = Field(
        default="",
        validation_alias=AliasChoices("POLYG_ALLOWED_HOSTS", "allowed_hosts"),
        description=(
            "Host header values (comma-separated, `name` or `name:port`) the HTTP server "
            "answers besides loopback names (and the bind address itself); any other Host "
            "gets 421, whatever the bind address."
        ),
    )
    allow_unauthenticated: bool = Field(
        default=False,
        validation_alias=AliasChoices("POLYG_ALLOW_UNAUTHENTICATED", "allow_unauthenticated"),
        description=(
            "Serve HTTP on a non-loopback address without POLYG_API_KEY (refused otherwise)."
        ),
    )
    http_header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        validation_alias=AliasChoices("POLYG_HTTP_HEADER_TIMEOUT", "http_header_timeout_s"),
        description="Seconds a connection has to send a request's headers (else 408, closed).",
    )
    http_body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        validation_alias=AliasChoices("POLYG_HTTP_BODY_TIMEOUT", "http_body_timeout_s"),
        description="Seconds a request has to send its whole body (else 408, closed).",
    )
    http_keep_alive_s: int = Field(
        default=5,
        ge=1,
        validation_alias=AliasChoices("POLYG_HTTP_KEEP_ALIVE", "http_keep_alive_s"),
        description="Seconds an idle keep-alive connection stays open between requests.",
    )
    http_max_connections: int = Field(
        default=256,
        ge=1,
        validation_alias=AliasChoices("POLYG_HTTP_MAX_CONNECTIONS", "http_max_connections"),
        description="Open HTTP connections served at once; a request on one more gets 503.",
    )
    auth_free_failures: int = Field(
        default=5,
        ge=0,
        validation_alias=AliasChoices("POLYG_AUTH_FREE_FAILURES", "auth_free_failures"),
        description=(
            "Failed authentications per client address answered at once; each further one "
            "makes the address wait (1 s, doubling)."
        ),
    )
    auth_max_delay_s: float = Field(
        default=60.0,
        ge=0,
        validation_alias=AliasChoices("POLYG_AUTH_MAX_DELAY", "auth_max_delay_s"),
        description="The longest wait after failed authentications, in seconds (0: no wait).",
    )
    tools: str = Field(
        default="memory",
        validation_alias=AliasChoices("POLYG_TOOLS", "tools"),
        description=(
            "Tool profiles (memory, graph, retrieval, admin, scratch, all) and tool names "
            "the MCP server offers, comma-separated."
        ),
    )
    output_schemas: bool = Field(
        default=False,
        validation_alias=AliasChoices("POLYG_OUTPUT_SCHEMAS", "output_schemas"),
        description=(
            "Advertise each tool's outputSchema in tools/list (results are structured "
            "either way; the schemas cost context tokens)."
        ),
    )
    allow_destructive: bool = Field(
        default=False, validation_alias=AliasChoices("POLYG_ALLOW_DESTRUCTIVE", "allow_destructive")
    )
    scratch_ttl_s: float = Field(
        default=7200.0, ge=0, validation_alias=AliasChoices("POLYG_SCRATCH_TTL", "scratch_ttl_s")
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        gt=0,
        validation_alias=AliasChoices("POLYG_MAX_BODY_BYTES", "max_body_bytes"),
    )
    stdio_max_message_bytes: int = Field(
        default=4 * 1024 * 1024,
        gt=0,
        validation_alias=AliasChoices("POLYG_STDIO_MAX_MESSAGE_BYTES", "stdio_max_message_bytes"),
        description="The longest stdio message (one line); longer ones get a JSON-RPC error.",
    )
    job_workers: int = Field(
        default=4,
        ge=0,
        le=64,
        validation_alias=AliasChoices("POLYG_JOB_WORKERS", "job_workers"),
        description=(
            "Background jobs the MCP server runs at once in its own process "
            "(0 = none: run `polyg worker` processes instead)."
        ),
    )
    remember_wait_max_chars: int = Field(
        default=2000,
        ge=0,
        validation_alias=AliasChoices("POLYG_REMEMBER_WAIT_MAX_CHARS", "remember_wait_max_chars"),
        description=(
            "remember without `wait` answers when written for content up to this many "
            "characters and queues longer content as a background job."
        ),
    )

    sampling: bool = Field(
        default=True,
        validation_alias=AliasChoices("POLYG_SAMPLING", "sampling"),
        description=(
            "Without LLM_MODEL, ask the MCP client's model through sampling when the client "
            "supports it (off: the rule-based path answers)."
        ),
    )

    @property
    def namespace(self) -> str:
        """The default memory namespace."""
        return self.storage.graph


def settings_from_env(environ: Mapping[str, str]) -> Settings:
    """Settings from environment variables (`FALKORDB_*`, `LLM_MODEL`, `POLYG_*`, `MAGMA_*`, ...).

    Only entry points call this, with `os.environ`; unset variables keep their defaults.

    Raises:
        InvalidInput: a variable has a value its setting does not take (the message
            names each variable, its value and what it must be).
    """
    problems: list[str] = []
    try:
        storage = StorageSettings.model_validate(_variables_of(StorageSettings, environ))
    except ValidationError as exc:
        problems += _explain(exc)
        storage = StorageSettings()
    settings: Settings | None = None
    try:
        settings = Settings.model_validate({**_variables_of(Settings, environ), "storage": storage})
    except ValidationError as exc:
        problems += _explain(exc)
    if problems or settings is None:
        raise InvalidInput("invalid configuration: " + "; ".join(dict.fromkeys(problems)))
    return settings


def environment_variables(model: type[BaseModel]) -> dict[str, str]:
    """The environment variables a settings model reads, each with its field's name.

    A field with several (`LLM_BASE_URL`, `OPENAI_BASE_URL`) lists them in the order
    they count: the first one set wins.
    """
    names: dict[str, str] = {}
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else []
        for choice in choices:
            if isinstance(choice, str) and choice.isupper():
                names[choice] = field_name
    return names


def _variables_of(model: type[BaseModel], environ: Mapping[str, str]) -> dict[str, Any]:
    chosen: dict[str, Any] = {}
    fields_set: set[str] = set()
    for variable, field_name in environment_variables(model).items():
        if variable in environ and field_name not in fields_set:
            chosen[variable] = environ[variable]
            fields_set.add(field_name)
    return chosen


def _explain(exc: ValidationError) -> list[str]:
    lines: list[str] = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if where:
            secret = "PASSWORD" in where or "KEY" in where or "URL" in where
            value = "***" if secret else repr(error["input"])
            lines.append(f"{where}={value}: {message}")
        else:
            lines.append(message)
    return lines
