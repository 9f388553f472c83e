"""Settings are plain models; only `settings_from_env` turns environment variables into them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from polyg_core.config import (
    Settings,
    StorageSettings,
    environment_variables,
    settings_from_env,
)
from polyg_core.errors import InvalidInput
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[3]

# Documented variables that are not settings: read by litellm (provider keys), by the
# server's own flags (stateless HTTP, SSE), or by tests and scripts only.
NOT_SETTINGS = {
    "OPENAI_API_KEY",
    "POLYG_HTTP_STATELESS",
    "POLYG_HTTP_SSE",
    "POLYG_HEAVY_TESTS",
    "POLYG_UI_SCREENSHOT",
}
VARIABLE = re.compile(
    r"\b(?:POLYG|FALKORDB|MAGMA|LLM|EMBEDDING|CLASSIFIER|SYNTHESIZER|OPENAI)_[A-Z_]*[A-Z]\b"
)


def _documented() -> set[str]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pages += sorted((ROOT / "packages").glob("*/README.md"))
    return {name for page in pages for name in VARIABLE.findall(page.read_text("utf-8"))}


def _read() -> set[str]:
    return set(environment_variables(Settings)) | set(environment_variables(StorageSettings))


def test_every_documented_variable_is_a_setting() -> None:
    documented = _documented()
    assert {"FALKORDB_GRAPH", "POLYG_TOOLS", "MAGMA_SEMANTIC_TOP_K"} <= documented
    assert documented - NOT_SETTINGS <= _read()


@pytest.mark.parametrize(
    ("variable", "value", "read", "expected"),
    [
        ("FALKORDB_HOST", "db.internal", "storage.host", "db.internal"),
        ("FALKORDB_PORT", "6390", "storage.port", 6390),
        ("FALKORDB_GRAPH", "team-notes", "namespace", "team-notes"),
        ("POLYG_DATA_DIR", "/var/lib/polyg", "storage.data_dir", Path("/var/lib/polyg")),
        ("POLYG_APPENDFSYNC", "always", "storage.appendfsync", "always"),
        ("POLYG_EMBEDDED_LINGER_S", "0", "storage.embedded_linger_s", 0.0),
        ("LLM_MODEL", "openai/gpt-4o-mini", "llm_model", "openai/gpt-4o-mini"),
        ("EMBEDDING_MODEL", "ollama/nomic-embed-text", "embedding_model", "ollama/nomic-embed-text"),
        ("MAGMA_MULTI_VIEW_BOOST", "2.5", "magma_multi_view_boost", 2.5),
        ("POLYG_PARALLEL_TIMEOUT", "1.5", "parallel_timeout_s", 1.5),
        ("POLYG_PORT", "8080", "port", 8080),
        ("POLYG_TOOLS", "memory,scratch", "tools", "memory,scratch"),
        ("POLYG_ALLOW_DESTRUCTIVE", "yes", "allow_destructive", True),
        ("POLYG_SAMPLING", "off", "sampling", False),
    ],
)  # fmt: skip
def test_a_variable_sets_its_setting(
    variable: str, value: str, read: str, expected: object
) -> None:
    assert _setting(Settings(), read) != expected
    assert _setting(settings_from_env({variable: value}), read) == expected


def _setting(settings: Settings, path: str) -> object:
    value: object = settings
    for name in path.split("."):
        value = getattr(value, name)
    return value


def test_polyg_max_retries_reaches_both_the_store_and_the_providers() -> None:
    settings = settings_from_env({"POLYG_MAX_RETRIES": "7"})
    assert settings.max_retries == 7 and settings.storage.max_retries == 7


def test_llm_base_url_wins_over_the_openai_alias() -> None:
    assert settings_from_env({"OPENAI_BASE_URL": "http://a"}).llm_base_url == "http://a"
    both = {"OPENAI_BASE_URL": "http://a", "LLM_BASE_URL": "http://b"}
    assert settings_from_env(both).llm_base_url == "http://b"


def test_unset_and_unrelated_variables_leave_the_defaults() -> None:
    # PORT and HOST are commonly set by hosting platforms for other programs.
    settings = settings_from_env({"PORT": "1", "HOST": "elsewhere", "HOME": "/home/ada"})
    assert settings == Settings()
    assert settings.port == 3000 and settings.storage.port == 6379
    assert settings.host == "127.0.0.1" and settings.storage.host is None


def test_every_bad_variable_is_named_in_one_error() -> None:
    bad = {"FALKORDB_PORT": "sixty", "POLYG_PORT": "0", "POLYG_LOG_LEVEL": "loud"}
    with pytest.raises(InvalidInput) as caught:
        settings_from_env(bad)
    message = str(caught.value)
    assert message.startswith("invalid configuration: ")
    for variable, value in bad.items():
        assert f"{variable}={value!r}" in message
    assert "'DEBUG', 'INFO', 'WARNING' or 'ERROR'" in message


def test_a_negative_linger_is_refused_naming_the_variable() -> None:
    with pytest.raises(InvalidInput, match=r"POLYG_EMBEDDED_LINGER_S='-5'"):
        settings_from_env({"POLYG_EMBEDDED_LINGER_S": "-5"})
    assert settings_from_env({"POLYG_EMBEDDED_LINGER_S": "90"}).storage.embedded_linger_s == 90


def test_a_bad_graph_name_is_refused_with_the_rule() -> None:
    with pytest.raises(InvalidInput, match=r"FALKORDB_GRAPH='my notes'.*letters, digits"):
        settings_from_env({"FALKORDB_GRAPH": "my notes"})
    with pytest.raises(ValidationError, match="invalid graph name"):
        StorageSettings(graph="x" * 65)


def test_replicas_without_a_primary_name_the_variables_to_set() -> None:
    with pytest.raises(InvalidInput, match="FALKORDB_REPLICAS needs the primary too"):
        settings_from_env({"FALKORDB_REPLICAS": "replica-1:6379"})


def test_settings_built_in_code_read_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FALKORDB_GRAPH", "from-the-environment")
    monkeypatch.setenv("POLYG_PORT", "9999")
    assert Settings().namespace == "polyg" and Settings().port == 3000
    assert StorageSettings().graph == "polyg"


def test_a_misspelt_setting_is_refused() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Settings.model_validate({"tool": "all"})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        StorageSettings.model_validate({"graph_name": "notes"})
