"""Finding names takes shortcuts (a pattern is not searched in a text it cannot match, a
new name's type is not guessed for a caller that reads only names); they change nothing
that is found."""

# pyright: reportPrivateUsage=false
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.text import names
from polyg_core.text.names import EntityMatcher, NameMention, find_names

# Invented pieces that each pattern of the finder matches, and pieces that look close.
_PIECES = [
    *("auth-service", "payments_db", "AUTH_SECRET", "worker-7", "lib.core", "x-y"),
    *("deploy v2.3.1", "Deployment 4.0", "release 1.2", "Build 10.4.2", "build v3"),
    *("config.yaml", "src/app.py", "notes.md", "index.tsx", "run.sh", "a.txt"),
    *("api.example.io", "docs.tidepool.dev", "mail.internal", "site.com", "co.uk"),
    *("AuthService", "iPhone", "OrbitDB", "dataLake", "McKay", "ABC"),
    *("the billing team", "our search service", "a new data project", "the ops squad"),
    *("service X", "Server Alpha", "host Q", "node N7", "database R", "cluster Ceres"),
    *("the Y disk", "our Zeta queue", "its Mira cache", "a Nova db", "the Io volume"),
    *("Jonas", "Priya said", "Mirela's", "Ölund", "José", "Tomasz Wiśniewski"),
    *("The Quiet Foxes", "Dr Anselm", "Kestrel Labs Inc", "Hey Ilse", "Thanks, Bo"),
    *("I", "A", "we", "the", "to", "in", "at", "moved to", "joined", "my sister"),
    *("Monday", "Q3", "FY2025", "2024", "v1.2", "API", "OK"),
    *(".", ",", "!", "?", ":", ";", "\n", "'s", "’s", "(", ")", '"', "-", "_", "/"),
    *("hosting", "code", "most", "buildings", "released", "teams", "dbx", "nodes"),
]

_texts = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=14).map(" ".join),
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.text(alphabet="aAbBdDeEsStTvV019 .-_/@#'’:\n", max_size=40),
)

_KNOWN = ["auth-service", "Payments DB", "Jonas", "billing proxy", "Team Kestrel", "Ölund"]


def _every_pattern(text: str) -> list[tuple[int, int, str, bool]]:
    """The candidates as found before the shortcuts: every pattern searched in every text."""
    return [
        *names._matches(names._FILE, text),
        *names._matches(names._DEPLOY, text),
        *names._identifiers(text),
        *names._matches(names._CAMEL, text),
        *names._lower_kind_names(text),
        *names._matches(names._DOMAIN, text),
        *names._kind_named(names._KIND_BEFORE, text),
        *names._kind_named(names._KIND_AFTER, text),
        *names._capitalised(text),
    ]


def _untyped(mentions: list[NameMention]) -> list[tuple[str, tuple[int, int], bool, float]]:
    return [(m.name, m.span, m.known, m.score) for m in mentions]


@settings(max_examples=400)
@given(_texts)
def test_a_pattern_is_skipped_only_where_it_finds_nothing(text: str) -> None:
    assert names._candidates(text) == _every_pattern(text)


@settings(max_examples=300)
@given(_texts)
def test_without_types_the_same_names_are_found(text: str) -> None:
    matcher = EntityMatcher.from_known(_KNOWN)
    for with_known in (None, matcher):
        typed = find_names(text, with_known)
        untyped = find_names(text, with_known, typed=False)
        assert _untyped(untyped) == _untyped(typed)
        # A known name keeps the type its matcher gave it; a new one is not guessed.
        known_types = {m.span: m.entity_type for m in typed if m.known}
        for m in untyped:
            assert m.entity_type == known_types.get(m.span, "entity")


def test_every_kind_of_name_is_still_found_in_one_text() -> None:
    text = (
        "Jonas said the deploy v2.3.1 of auth-service read config.yaml from api.example.io; "
        "the billing team moved OrbitDB to host Q, and the Y disk filled."
    )
    found = [m.name for m in find_names(text, typed=False)]
    for name in (
        "Jonas",
        "deploy v2.3.1",
        "auth-service",
        "config.yaml",
        "api.example.io",
        "billing team",
        "OrbitDB",
        "Q",
        "Y",
    ):
        assert name in found, (name, found)
    assert [m.name for m in find_names(text)] == found
