"""Settings: plain models passed down as objects.

The library never reads the environment. Entry points (the server, the CLI, the
worker) call `settings_from_env(os.environ)` once; everything below them takes the
settings it is given, and a `Settings()` built in code holds the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from polyg_shared.types import check_graph_name
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

# Each field takes its name or its environment variable (the alias).
_ONE_NAME_OR_VARIABLE = ConfigDict(extra="forbid", populate_by_name=True)


def setting(
    default: Any,
    *variables: str,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    secret: bool = False,
    description: str | None = None,
) -> Any:
    """One setting field: its default, the environment variables that set it (the first
    one set wins) and its bounds.

    A `secret` one (a password, a URL that may carry one) stays out of the settings' repr.
    """
    return Field(
        default=default,
        validation_alias=AliasChoices(*variables),
        ge=ge,
        gt=gt,
        le=le,
        repr=not secret,
        description=description,
    )


class StorageSettings(BaseModel):
    """Where FalkorDB is and how to talk to it."""

    model_config = _ONE_NAME_OR_VARIABLE

    # secret: a URL may carry the password (redis://:password@host:port).
    url: str | None = setting(None, "FALKORDB_URL", secret=True)
    host: str | None = setting(None, "FALKORDB_HOST")
    port: int = setting(6379, "FALKORDB_PORT")
    password: SecretStr | None = setting(None, "FALKORDB_PASSWORD")
    graph: str = setting("polyg", "FALKORDB_GRAPH")
    data_dir: Path | None = setting(None, "POLYG_DATA_DIR")
    appendfsync: Literal["everysec", "always"] = setting(
        "everysec",
        "POLYG_APPENDFSYNC",
        description=(
            "When the embedded FalkorDB fsyncs its append-only file: everysec (a power loss "
            "can lose the last second of acknowledged writes) or always (before each reply; "
            "slower writes)."
        ),
    )
    embedded_linger_s: float = setting(
        600.0,
        "POLYG_EMBEDDED_LINGER_S",
        ge=0,
        le=7 * 24 * 3600,
        description=(
            "Seconds the embedded FalkorDB stays up after its last polyg process left, so "
            "that the next one (a new stdio session) adopts it instead of starting it again "
            "(a large data dir's start rebuilds its vector indexes: minutes); 0 stops it "
            "with the last process."
        ),
    )
    query_timeout_ms: int = setting(
        30_000,
        "POLYG_QUERY_TIMEOUT_MS",
        ge=0,
        description="Per-query timeout in milliseconds (0 = none).",
    )
    max_retries: int = setting(3, "POLYG_MAX_RETRIES", ge=0, le=20)
    hnsw_m: int | None = setting(
        None,
        "POLYG_HNSW_M",
        ge=4,
        le=128,
        description=(
            "HNSW links per node of the vector indexes polyg creates from now on (unset: "
            "polyg's default per label); existing indexes keep theirs."
        ),
    )
    hnsw_ef_construction: int | None = setting(
        None,
        "POLYG_HNSW_EF_CONSTRUCTION",
        ge=8,
        le=4096,
        description=(
            "Candidates an insert into a new vector index examines (unset: polyg's default "
            "per label); higher costs insert CPU and server start time."
        ),
    )
    hnsw_ef_runtime: int | None = setting(
        None,
        "POLYG_HNSW_EF_RUNTIME",
        ge=1,
        le=4096,
        description=(
            "Candidates a k-NN query on a new vector index examines at least (unset: polyg's "
            "default per label); a query asking for more examines that many."
        ),
    )
    max_connections: int = setting(
        64,
        "POLYG_MAX_CONNECTIONS",
        ge=1,
        le=10_000,
        description="Connections to FalkorDB per process; further queries wait for a free one.",
    )
    # secret: replica URLs may carry passwords too.
    replicas: str | None = setting(
        None,
        "FALKORDB_REPLICAS",
        secret=True,
        description="Read replicas of the primary: comma-separated host:port or redis:// URLs.",
    )
    cluster: str | None = setting(
        None,
        "FALKORDB_CLUSTER",
        secret=True,
        description="Redis Cluster startup nodes: comma-separated host:port or redis:// URLs.",
    )
    read_your_writes_ms: int = setting(
        5_000,
        "POLYG_READ_YOUR_WRITES_MS",
        ge=0,
        description=(
            "After a write, the session's reads stay on the primary until a replica has "
            "caught up with the write, for at most this long (0 = no read-your-writes)."
        ),
    )
    replica_max_lag_bytes: int = setting(
        1_048_576,
        "POLYG_REPLICA_MAX_LAG_BYTES",
        ge=0,
        description="A replica further behind the primary's replication offset gets no reads.",
    )
    replica_check_ms: int = setting(
        250,
        "POLYG_REPLICA_CHECK_MS",
        ge=10,
        description="How often replica health and replication offsets are re-read.",
    )

    @field_validator("graph")
    @classmethod
    def _graph_name(cls, value: str) -> str:
        check_graph_name(value, "for example 'polyg' or 'project-x'")
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

    model_config = _ONE_NAME_OR_VARIABLE

    storage: StorageSettings = Field(default_factory=StorageSettings)

    llm_model: str | None = setting(None, "LLM_MODEL")
    llm_base_url: str | None = setting(None, "LLM_BASE_URL", "OPENAI_BASE_URL")
    llm_timeout_s: float = setting(30.0, "LLM_TIMEOUT", gt=0)
    embedding_model: str = setting("local/minilm", "EMBEDDING_MODEL")
    classifier_max_tokens: int = setting(500, "CLASSIFIER_MAX_TOKENS", gt=0)
    synthesizer_max_tokens: int = setting(1000, "SYNTHESIZER_MAX_TOKENS", gt=0)
    max_retries: int = setting(3, "POLYG_MAX_RETRIES", ge=0, le=20)
    parallel_timeout_s: float = setting(
        5.0,
        "POLYG_PARALLEL_TIMEOUT",
        gt=0,
        description="Per-view timeout of the parallel expansion, in seconds.",
    )
    magma_semantic_top_k: int = setting(10, "MAGMA_SEMANTIC_TOP_K", gt=0, le=200)
    magma_min_semantic_score: float = setting(0.3, "MAGMA_MIN_SEMANTIC_SCORE", ge=0, le=1)
    magma_multi_view_boost: float = setting(1.5, "MAGMA_MULTI_VIEW_BOOST", ge=1)
    magma_max_context_tokens: int = setting(4000, "MAGMA_MAX_CONTEXT_TOKENS", gt=0)

    port: int = setting(3000, "POLYG_PORT", ge=1, le=65535)
    host: str = setting("127.0.0.1", "POLYG_HOST")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = setting("INFO", "POLYG_LOG_LEVEL")
    api_key: SecretStr | None = setting(None, "POLYG_API_KEY")
    allowed_origins: str = setting("", "POLYG_ALLOWED_ORIGINS")
    allowed_hosts: str = setting(
        "",
        "POLYG_ALLOWED_HOSTS",
        description=(
            "Host header values (comma-separated, `name` or `name:port`) the HTTP server "
            "answers besides loopback names (and the bind address itself); any other Host "
            "gets 421, whatever the bind address."
        ),
    )
    allow_unauthenticated: bool = setting(
        False,
        "POLYG_ALLOW_UNAUTHENTICATED",
        description=(
            "Serve HTTP on a non-loopback address without POLYG_API_KEY (refused otherwise)."
        ),
    )
    http_header_timeout_s: float = setting(
        10.0,
        "POLYG_HTTP_HEADER_TIMEOUT",
        gt=0,
        description="Seconds a connection has to send a request's headers (else 408, closed).",
    )
    http_body_timeout_s: float = setting(
        30.0,
        "POLYG_HTTP_BODY_TIMEOUT",
        gt=0,
        description="Seconds a request has to send its whole body (else 408, closed).",
    )
    http_keep_alive_s: int = setting(
        5,
        "POLYG_HTTP_KEEP_ALIVE",
        ge=1,
        description="Seconds an idle keep-alive connection stays open between requests.",
    )
    http_max_connections: int = setting(
        256,
        "POLYG_HTTP_MAX_CONNECTIONS",
        ge=1,
        description="Open HTTP connections served at once; a request on one more gets 503.",
    )
    auth_free_failures: int = setting(
        5,
        "POLYG_AUTH_FREE_FAILURES",
        ge=0,
        description=(
            "Failed authentications per client address answered at once; each further one "
            "makes the address wait (1 s, doubling)."
        ),
    )
    auth_max_delay_s: float = setting(
        60.0,
        "POLYG_AUTH_MAX_DELAY",
        ge=0,
        description="The longest wait after failed authentications, in seconds (0: no wait).",
    )
    tools: str = setting(
        "memory",
        "POLYG_TOOLS",
        description=(
            "Tool profiles (memory, graph, retrieval, admin, scratch, all) and tool names "
            "the MCP server offers, comma-separated."
        ),
    )
    output_schemas: bool = setting(
        False,
        "POLYG_OUTPUT_SCHEMAS",
        description=(
            "Advertise each tool's outputSchema in tools/list (results are structured "
            "either way; the schemas cost context tokens)."
        ),
    )
    allow_destructive: bool = setting(False, "POLYG_ALLOW_DESTRUCTIVE")
    scratch_ttl_s: float = setting(7200.0, "POLYG_SCRATCH_TTL", ge=0)
    max_body_bytes: int = setting(4 * 1024 * 1024, "POLYG_MAX_BODY_BYTES", gt=0)
    stdio_max_message_bytes: int = setting(
        4 * 1024 * 1024,
        "POLYG_STDIO_MAX_MESSAGE_BYTES",
        gt=0,
        description="The longest stdio message (one line); longer ones get a JSON-RPC error.",
    )
    job_workers: int = setting(
        4,
        "POLYG_JOB_WORKERS",
        ge=0,
        le=64,
        description=(
            "Background jobs the MCP server runs at once in its own process "
            "(0 = none: run `polyg worker` processes instead)."
        ),
    )
    remember_wait_max_chars: int = setting(
        2000,
        "POLYG_REMEMBER_WAIT_MAX_CHARS",
        ge=0,
        description=(
            "remember without `wait` answers when written for content up to this many "
            "characters and queues longer content as a background job."
        ),
    )

    sampling: bool = setting(
        True,
        "POLYG_SAMPLING",
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
