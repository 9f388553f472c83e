"""Finding entity names in text: known names (any spelling) and new name-like words."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from polyg_core.text.gazetteer import (
    FIRST_NAMES,
    GREETINGS,
    KINSHIP,
    ORG_SUFFIXES,
    PLACE_NAMES,
    words,
)
from polyg_core.text.normalize import normalize_name

__all__ = [
    "STOP_WORDS",
    "EntityMatcher",
    "KnownEntities",
    "NameMention",
    "as_name",
    "find_names",
    "guess_entity_type",
    "is_word_name",
    "named_in_text",
    "words",
]

KnownEntities = Iterable[tuple[str, str] | str]
"""Known entity names: (name, normalized key) pairs, or bare names (the key is computed)."""

MAX_NGRAM = 5
FUZZY_CUTOFF = 90.0
_FUZZY_BUDGET = 5_000  # n-grams tried fuzzily per text; long texts fall back to exact matches
_MIN_FUZZY_KEY = 6

_TOKEN = re.compile(r"[\w](?:[\w.\-/@#'’]*[\w])?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def _char_class(keep: Callable[[str], bool], ascii_part: str) -> str:
    """A regex class body: `ascii_part` plus the letters past ASCII (Latin, Greek,
    Cyrillic, ... up to U+1FFF) that `keep` accepts, as ranges. Python's `re` has no
    `\\p{Lu}`; `[A-Z]` alone read "José" as "Jos" and "Zürich" as "rich"."""
    chars = [c for c in map(chr, range(0x80, 0x2000)) if keep(c)]
    parts: list[str] = []
    i = 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and ord(chars[j + 1]) == ord(chars[j]) + 1:
            j += 1
        parts.append(
            re.escape(chars[i]) if i == j else f"{re.escape(chars[i])}-{re.escape(chars[j])}"
        )
        i = j + 1
    return ascii_part + "".join(parts)


UPPER = _char_class(str.isupper, "A-Z")
"""Upper-case letters (a regex class body, without the brackets)."""
LOWER = _char_class(str.islower, "a-z")
"""Lower-case letters (a regex class body, without the brackets)."""
LETTER = _char_class(str.isalpha, "A-Za-z")
"""Letters of any case (a regex class body, without the brackets)."""
_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[\W_]+")


STOP_WORDS = words(
    """
    a an the and or but if then so of to in on at by for with from about into onto over
    under is are was were be been being am do does did done has have had having will
    would shall should can could may might must it its this that these those there here
    what which who whom whose why when where how me my we our us you your he him his she
    her they them their i not no yes any some all each every much many more most less
    than too very just also only up down out off as tell show give describe explain list
    find know happen happened happens going get got
    """
)

_GENERIC_HEADS = words(
    """
    project service services team api app data new old main test user users system
    server config deploy deployment release build job task issue bug the auth
    """
) - {"auth"}

_KIND_WORDS = words(
    """
    service svc api server gateway team project app db database worker system cluster
    module library lib repo pipeline squad
    """
)
_OTHER_KINDS = words("team squad project db database repo library lib")
# A sentence's first word counts as a name when its type is this clear from the word itself.
_STRONG_TYPES = frozenset({"person", "database", "place", "organization", "team", "project"})
_PERSON_VERBS = words(
    """
    said says told tells asked asks wrote writes thinks thought reported reports noticed
    found deployed fixed merged approved reviewed owns owned leads led manages managed
    joined left works worked working suggested proposed decided agreed mentioned
    explained called emailed pinged shipped built wrote moved transferred switched
    visited loves loved likes liked enjoys enjoyed bought met married adopted graduated
    painted plays played lives lived feels felt wants wanted
    """
)
_PERSON_BEFORE = words(
    """
    asked told ping pinged thanks thank cc ask tell with
    """
)
_PLACE_BEFORE = words(
    """
    in to from visited visit visiting near around across
    """
)
_ORG_BEFORE = words(
    """
    at for joined join joining
    """
)

_NOT_NAMES = (
    words(
        """
    The This That These Those It Its We I They He She You Our My Your Their His Her
    Because But And So Then When Why Who Whom Whose What Which Where How After Before
    Since If Yes No Also However Therefore Please Tell Show Describe List Find Give
    Explain Is Are Was Were Did Does Do Can Could Would Should Will Has Have Had There
    Here Today Yesterday Tomorrow Tonight Monday Tuesday Wednesday Thursday Friday
    Saturday Sunday January February March April May June July August September October
    November December Last Next Every Each All Some Any On In At For From To Of With By
    Not Then Thus Hence Meanwhile Later Earlier First Second Finally Once While Although
    Though Until Due Run Use Set Add Make Check Open Click Install Note Let Ok OK
    Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun Jan Feb Mar Apr Jun Jul Aug Sep Sept
    Oct Nov Dec Am Pm AM PM
    API APIs CPU GPU RAM DNS TLS SSL OOM HTTP HTTPS URL URLs SQL VPN SLA SLO CI CD PR PRs
    QA UI UX ETA FAQ IP TTL ID IDs OS PDF CSV JSON YAML
    """
    )
    | GREETINGS
)
_QUARTER = re.compile(r"[QH][1-4]|FY\d{2,4}")

# Given names that are also ordinary words. Such a name (and a month's or a modal's,
# "June", "May", "Will") stands for the person only where it is written as a name
# (`as_name`): "I hope so" is not Hope, "in June" is a month, "Will you come?" asks.
_WORD_NAMES = words(
    """
    april may june july august will hope grace faith joy mark bill rose summer autumn
    dawn eve iris ivy lily daisy holly pearl ruby amber crystal robin wren sage jade
    hazel olive violet heather penny victor drew chase gene miles guy ray sandy sunny
    frank rob pat sue jack art don bob rich sky river storm rain honey
    """
)
_CALENDAR_WORDS = words(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """
)
# A word before a month that makes it a time ("in June", "since May", "mid-April").
_TIME_BEFORE = words(
    "in on since until till during by early mid late last next this every through of"
)
_NAME_AFTER = re.compile(r"['’]s\b|\s*[:,!?]|\s+and\s+(?:I|me|my)\b")
_LAST_WORD = re.compile(r"(\w+)\W*$")


def is_word_name(key: str) -> bool:
    """Whether a one-word name's key is also an ordinary word, a month or a weekday."""
    return key in _WORD_NAMES or key in STOP_WORDS or key in _CALENDAR_WORDS


def as_name(text: str, start: int, end: int) -> bool:
    """Whether the word at text[start:end] (a possessive included) is written as a name.

    It is capitalised; no number follows ("June 5", "May 2024") and no time word comes
    before it ("in June", "mid-May"); at a sentence's start a possessive, a colon, a comma,
    "and I" or a verb of what people do follows ("Will's", "Hope: ...", "June said").
    """
    word = text[start:end]
    if not word[:1].isupper():
        return False
    after = text[end:]
    if _POSSESSIVE.search(word):
        return True
    if re.match(r"\s*\d", after):
        return False
    if _sentence_initial(text, start):
        following = re.match(r"\s+(\w+)", after)
        return bool(_NAME_AFTER.match(after)) or (
            following is not None and following.group(1).lower() in _PERSON_VERBS
        )
    before = _LAST_WORD.search(text[max(0, start - 20) : start])
    return before is None or before.group(1).lower() not in _TIME_BEFORE


def named_in_text(text: str, name: str) -> bool:
    """Whether `name` occurs in `text` as a name: any whole-word occurrence, or for a name
    that is also an ordinary word, one written as a name (`as_name`)."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", re.IGNORECASE)
    if not is_word_name(normalize_name(name)):
        return pattern.search(text) is not None
    return any(as_name(text, m.start(), m.end()) for m in pattern.finditer(text))


_TECH_PARTS = words(
    """
    service svc api gateway server worker daemon db database cache queue cluster app bot
    proxy lb node pod job cron pipeline repo sdk cli ui frontend backend web auth
    """
)
_FILE = re.compile(
    r"\b[\w\-/]+\.(?:py|ts|tsx|js|jsx|go|rs|java|rb|yaml|yml|json|toml|md|sql|sh|cfg|ini|env|txt)\b"
)
_DEPLOY = re.compile(r"\b(?:[Dd]eploy(?:ment)?|[Rr]elease|[Bb]uild)\s+v?\d+(?:\.\d+)+\b")
_DOMAIN = re.compile(
    r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|internal|local|cloud)\b"
)
_IDENT = re.compile(r"(?<![\w.\-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+")
_CAMEL = re.compile(r"\b(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_CAPS = re.compile(rf"\b[{UPPER}][{LETTER}]+(?:[ \t]+(?:[{UPPER}][{LETTER}0-9]*|\d+))*\b")
# "service X crashed", "the Y disk filled": a name too short or too plain for the other
# patterns, said to be a service, host or database by the word next to it.
_KIND_BEFORE = re.compile(
    r"\b(?:[Ss]ervice|[Ss]erver|[Hh]ost|[Nn]ode|[Dd]atabase|[Cc]luster)\s+"
    rf"(?P<name>[{UPPER}][{LETTER}0-9]*(?:-[{LETTER}0-9]+)*)\b"
)
_KIND_AFTER = re.compile(
    r"\b(?:[Tt]he|[Oo]ur|[Tt]heir|[Ii]ts|a|an)\s+"
    rf"(?P<name>[{UPPER}][{LETTER}0-9]*(?:-[{LETTER}0-9]+)*)\s+"
    r"(?P<kind>disk|disks|host|server|node|volume|database|db|cluster|queue|cache|service)\b"
)
# "the payments team", "our billing service": a lower-case name made by its kind word.
_LOWER_KIND = re.compile(
    r"\b(?:[Tt]he|[Oo]ur|[Mm]y|[Tt]heir|[Hh]is|[Hh]er|[Yy]our|a|an)\s+"
    r"(?P<name>(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*\s+){1,2}(?:team|squad|service|project))\b"
)
# The patterns the type rules and the candidates' trimming apply, compiled once: built
# from the letter classes above, their text is thousands of characters long, and
# `re.fullmatch(text, ...)` hashed it again for each name it looked up in re's cache.
_TITLE_CASE = re.compile(rf"[{UPPER}][{LOWER}]+(?: [{UPPER}][{LOWER}]+)?")
_TITLE_WORDS = re.compile(rf"[{UPPER}][{LOWER}]+(?: [{UPPER}][{LOWER}]+){{0,2}}")
_CONFIG_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DEPLOY_NAME = re.compile(r"(?:deploy|deployment|release|build)[\W_]*v?\d", re.IGNORECASE)
_VERSION = re.compile(r"v?\d+(?:\.\d+)+\S*", re.IGNORECASE)
_IDENT_PARTS = re.compile(r"[-_.]")
_WORD = re.compile(r"\S+")
_NOT_MODIFIERS = words(
    """
    new old same other whole entire next last first second best main own big small
    local one two this that every each whole entire
    """
)


@dataclass(frozen=True)
class NameMention:
    """A name found in text.

    Attributes:
        name: the canonical known name, or the name as written for a new one.
        span: (start, end) character offsets in the text.
        known: True when it matched a known entity.
        entity_type: a guessed type ("person", "service", "config", ...; "entity" if unsure).
        score: 1.0 for an exact (normalized) match, less for fuzzy or partial ones.
    """

    name: str
    span: tuple[int, int]
    known: bool
    entity_type: str = "entity"
    score: float = 1.0


def _split_words(name: str) -> list[str]:
    return [w.lower() for w in _CAMEL_SPLIT.split(name) if w]


def guess_entity_type(name: str, following: str = "", preceding: str = "") -> str:
    """A likely entity type from the name's shape and the words around it."""
    around = _Around.of(name, following, preceding)
    for rule in _TYPE_RULES:
        kind = rule(around)
        if kind is not None:
            return kind
    return "entity"


def _first_word(text: str) -> str:
    split = text.split()
    return split[0].lower().strip(".,;:!?") if split else ""


# What the type rules read of a name alone, kept per name: a conversation says the same
# few hundred names (and capitalised sentence starts) again and again.
_PER_NAME = 1 << 14


@functools.lru_cache(maxsize=_PER_NAME)
def _name_facts(name: str) -> tuple[tuple[str, ...], str, bool]:
    """A name's words, its key and whether it is one or two title-case words."""
    return tuple(_split_words(name)), normalize_name(name), _TITLE_CASE.fullmatch(name) is not None


@functools.lru_cache(maxsize=_PER_NAME)
def _key_of(name: str) -> str:
    """`normalize_name`, kept per name."""
    return normalize_name(name)


@dataclass(frozen=True)
class _Around:
    """A name, its words and the words next to it, as the type rules read them."""

    name: str
    words: tuple[str, ...]
    key: str
    following: str
    next_word: str
    last_before: str
    prev_word: str
    place_word: str
    capitalised: bool

    @classmethod
    def of(cls, name: str, following: str, preceding: str) -> _Around:
        before = preceding.split()
        prev_word = before[-1].lower().strip(".,;:!?") if before else ""
        # "moved to the ...": the word before the article says what kind of name follows.
        before_article = before[:-1][-1:] if prev_word == "the" else []
        words, key, capitalised = _name_facts(name)
        return cls(
            name=name,
            words=words,
            key=key,
            following=following,
            next_word=_first_word(following),
            last_before=before[-1].lower() if before else "",
            prev_word=prev_word,
            place_word=before_article[0].lower() if before_article else prev_word,
            capitalised=capitalised,
        )

    @property
    def first(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def last(self) -> str:
        return self.words[-1] if self.words else ""


def _by_shape(a: _Around) -> str | None:
    """CONFIG_NAMES, files, deployments and versions, by how they are written."""
    return _shape_of(a.name)


@functools.lru_cache(maxsize=_PER_NAME)
def _shape_of(name: str) -> str | None:
    if _CONFIG_NAME.fullmatch(name):
        return "config"
    if _FILE.fullmatch(name):
        return "file"
    if _DEPLOY_NAME.search(name):
        return "deployment"
    if _VERSION.fullmatch(name):
        return "version"
    return None


def _by_kind_next_to_it(a: _Around) -> str | None:
    """The kind word next to the name: "service X", "the X disk", "database X"."""
    if a.last_before in {"service", "server"} or a.next_word == "service":
        return "service"
    if a.next_word in {"disk", "disks", "host", "server", "node", "volume"}:
        return "host"
    if a.last_before in {"host", "node"}:
        return "host"
    if a.next_word in {"database", "db", "cluster"} or a.last_before in {"database", "cluster"}:
        return "database"
    return None


def _by_kind_in_it(a: _Around) -> str | None:
    """The kind word in the name: "auth-service", "billing proxy", "usersdb", "team Kestrel"."""
    if a.last in {"service", "svc", "api", "gateway", "server", "worker", "daemon", "proxy"}:
        return "service"
    if a.next_word in {"service", "api", "app", "server"}:
        return "service"
    if a.key.endswith(("db", "database", "sql")) or a.key in {
        "redis",
        "postgres",
        "mongo",
        "falkor",
    }:
        return "database"
    if "project" in (a.first, a.last) or a.next_word == "project":
        return "project"
    if a.first == "team" or a.last in ("team", "squad") or a.next_word == "team":
        return "team"
    return None


def _by_person_cue(a: _Around) -> str | None:
    """A capitalised name that acts like a person: "Jane said", "my sister Jane", "Jane: ..."."""
    if not a.capitalised:
        return None
    if a.next_word in _PERSON_VERBS or a.prev_word in _PERSON_BEFORE:
        return "person"
    if a.following.lower().lstrip().startswith(("is working", "was working")):
        return "person"
    if a.prev_word in KINSHIP or a.following.startswith(":"):
        return "person"
    return None


def _by_gazetteer(a: _Around) -> str | None:
    """Organisation suffixes, known places and known first names."""
    if len(a.words) >= 2 and a.last in ORG_SUFFIXES:
        return "organization"
    if a.key in PLACE_NAMES:
        return "place"
    if a.capitalised and a.first in FIRST_NAMES:
        return "person"
    return None


def _by_word_before(a: _Around) -> str | None:
    """A title-case name after a place word ("moved to") or an organisation word ("at")."""
    if not _TITLE_WORDS.fullmatch(a.name):
        return None
    if a.place_word in _PLACE_BEFORE:
        return "place"
    if a.prev_word in _ORG_BEFORE:
        return "organization"
    return None


_TYPE_RULES: tuple[Callable[[_Around], str | None], ...] = (
    _by_shape,
    _by_kind_next_to_it,
    _by_kind_in_it,
    _by_person_cue,
    _by_gazetteer,
    _by_word_before,
)
"""The type rules in the order they decide: the first that knows wins."""


_Match = tuple[int, str, float]
"""A match at a token: how many words it spans, the known name, its score."""


@dataclass
class EntityMatcher:
    """Finds mentions of known entity names in text, whatever their spelling.

    Word n-grams of the text are normalized with `normalize_name`, so "auth
    service" finds "AuthService" and "auth-service"; n-grams of at least six
    characters that miss may still match a known key with a rapidfuzz ratio of
    90 or more; a lone word that begins exactly one known multi-word name
    ("auth" for "auth-service") matches it with a lower score.
    """

    by_key: dict[str, str] = field(default_factory=dict[str, str])
    heads: dict[str, str] = field(default_factory=dict[str, str])

    @classmethod
    def from_known(cls, known: KnownEntities) -> EntityMatcher:
        """Build a matcher from (name, key) pairs or bare names."""
        by_key: dict[str, str] = {}
        head_count: dict[str, list[str]] = {}
        for item in known:
            name, key = (item, "") if isinstance(item, str) else item
            key = key or normalize_name(name)
            if not name.strip() or not key or key in by_key:
                continue
            by_key[key] = name
            words = _split_words(name)
            # "auth" stands for "auth service", not for "auth secret": only kind words may follow.
            if (
                len(words) >= 2
                and len(words[0]) >= 4
                and words[0] not in _GENERIC_HEADS
                and all(w in _KIND_WORDS for w in words[1:])
            ):
                head_count.setdefault(words[0], []).append(name)
        heads = {w: names[0] for w, names in head_count.items() if len(names) == 1}
        return cls(by_key=by_key, heads=heads)

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def find(self, text: str) -> list[NameMention]:
        """Known-entity mentions in text order, longest match first, not overlapping."""
        if not self.by_key:
            return []
        tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
        keys = list(self.by_key)
        out: list[NameMention] = []
        budget = _FUZZY_BUDGET
        i = 0
        while i < len(tokens):
            grams = self._grams(text, tokens, i)
            best = self._exact(grams)
            if best is None and budget > 0 and tokens[i][2].lower() not in STOP_WORDS:
                best, budget = self._fuzzy(grams, keys, budget)
            if best is None:
                best = self._head(tokens, i)
            if best is not None and best[0] == 1 and not self._written_as_name(text, tokens[i]):
                best = None
            if best is None:
                i += 1
                continue
            n, name, score = best
            span = (tokens[i][0], tokens[i + n - 1][1])
            entity_type = guess_entity_type(name, text[span[1] :][:40], text[: span[0]][-20:])
            out.append(NameMention(name, span, True, entity_type, score))
            i += n
        return out

    @staticmethod
    def _written_as_name(text: str, token: tuple[int, int, str]) -> bool:
        """A one-word match stands: unless the word is also an ordinary one ("will",
        "hope", "june") and is not written as a name here."""
        start, end, word = token
        if not is_word_name(normalize_name(_POSSESSIVE.sub("", word))):
            return True
        return as_name(text, start, end)

    def _exact(self, grams: list[tuple[int, str]]) -> _Match | None:
        """The longest word n-gram here that is a known name's key."""
        for n, gram_key in grams:
            if gram_key in self.by_key:
                return (n, self.by_key[gram_key], 1.0)
        return None

    def _fuzzy(
        self, grams: list[tuple[int, str]], keys: list[str], budget: int
    ) -> tuple[_Match | None, int]:
        """The longest n-gram here close enough to a known key, and the fuzzy budget left
        (each n-gram tried spends one)."""
        for n, gram_key in grams:
            if len(gram_key) < _MIN_FUZZY_KEY:
                continue
            budget -= 1
            hit = process.extractOne(gram_key, keys, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
            if hit is not None:
                return (n, self.by_key[hit[0]], float(hit[1]) / 100.0), budget
        return None, budget

    def _head(self, tokens: list[tuple[int, int, str]], i: int) -> _Match | None:
        """A known name by its first word alone ("auth" for "auth-service"), unless the
        next word makes it another thing ("auth team")."""
        word = _POSSESSIVE.sub("", tokens[i][2]).lower()
        following = tokens[i + 1][2].lower() if i + 1 < len(tokens) else ""
        if word in self.heads and following not in _OTHER_KINDS:
            return (1, self.heads[word], 0.8)
        return None

    @staticmethod
    def _grams(text: str, tokens: list[tuple[int, int, str]], i: int) -> list[tuple[int, str]]:
        """(length, key) of the n-grams starting at token i, longest first, within one phrase."""
        grams: list[tuple[int, str]] = []
        words = [tokens[i][2]]
        for j in range(i + 1, min(i + MAX_NGRAM, len(tokens))):
            if text[tokens[j - 1][1] : tokens[j][0]].strip():
                break  # punctuation between words ends the phrase
            words.append(tokens[j][2])
        for n in range(len(words), 0, -1):
            gram = " ".join(words[:n])
            key = normalize_name(_POSSESSIVE.sub("", gram))
            if key:
                grams.append((n, key))
        return grams


def _not_name(word: str) -> bool:
    """A word that cannot start or end a name: a greeting, a stop word, a bare number."""
    return (
        word in _NOT_NAMES
        or word.lower() in STOP_WORDS
        or word.isdigit()
        or _QUARTER.fullmatch(word) is not None
    )


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?\n:;"


_Candidate = tuple[int, int, str, bool]
"""(start, end, name, weak) of a name-like word; a weak one counts only if seen elsewhere."""


# What each pattern below cannot match without: a text holding none of a pattern's
# strings is not searched with it. Most texts are plain sentences, and searching one
# with a pattern that finds nothing cost 5-12 µs (a third of `find_names`); looking for
# a few plain strings costs well under one.
def _any_of(*needs: str) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, needs)))


_DEPLOY_NEEDS = _any_of("eploy", "elease", "uild")  # [Dd]eploy, [Rr]elease, [Bb]uild
_FILE_NEEDS = re.compile(
    r"\.(?:py|ts|js|go|rs|java|rb|yaml|yml|json|toml|md|sql|sh|cfg|ini|env|txt)"
)
_DOMAIN_NEEDS = re.compile(r"\.(?:com|org|net|io|dev|internal|local|cloud)")
_IDENT_NEEDS = re.compile(r"[-_.][A-Za-z0-9]")  # a separator and what follows it
_CAMEL_NEEDS = re.compile(r"[a-z0-9][A-Z]")  # both of _CAMEL's forms hold one
_LOWER_KIND_NEEDS = _any_of("team", "squad", "service", "project")
_KIND_BEFORE_NEEDS = _any_of("ervice", "erver", "ost", "ode", "atabase", "luster")
_KIND_AFTER_NEEDS = _any_of(
    *("disk", "host", "server", "node", "volume", "db", "database"),
    *("cluster", "queue", "cache", "service"),
)


def _candidates(text: str) -> list[_Candidate]:
    """Name-like words of the text, pattern by pattern (the order breaks ties)."""
    out: list[_Candidate] = []
    if _FILE_NEEDS.search(text):
        out.extend(_matches(_FILE, text))
    if _DEPLOY_NEEDS.search(text):
        out.extend(_matches(_DEPLOY, text))
    if _IDENT_NEEDS.search(text):
        out.extend(_identifiers(text))
    if _CAMEL_NEEDS.search(text):
        out.extend(_matches(_CAMEL, text))
    if _LOWER_KIND_NEEDS.search(text):
        out.extend(_lower_kind_names(text))
    if _DOMAIN_NEEDS.search(text):
        out.extend(_matches(_DOMAIN, text))
    if _KIND_BEFORE_NEEDS.search(text):
        out.extend(_kind_named(_KIND_BEFORE, text))
    if _KIND_AFTER_NEEDS.search(text):
        out.extend(_kind_named(_KIND_AFTER, text))
    out.extend(_capitalised(text))
    return out


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[_Candidate]:
    for m in pattern.finditer(text):
        yield m.start(), m.end(), m.group(0), False


def _identifiers(text: str) -> Iterator[_Candidate]:
    """kebab, snake and dotted identifiers with a digit or a technical part."""
    for m in _IDENT.finditer(text):
        name = m.group(0)
        parts = _IDENT_PARTS.split(name)
        if (
            any(c.isdigit() for c in name)
            or ("_" in name and len(name) >= 4)
            or any(p.lower() in _TECH_PARTS for p in parts)
        ):
            yield m.start(), m.end(), name, False


def _lower_kind_names(text: str) -> Iterator[_Candidate]:
    """Lower-case team, service and project names: the words before the kind word."""
    for m in _LOWER_KIND.finditer(text):
        parts = list(_WORD.finditer(m.group("name")))
        while len(parts) > 1 and (
            parts[0].group(0) in _NOT_MODIFIERS or parts[0].group(0) in STOP_WORDS
        ):
            parts.pop(0)
        if len(parts) > 1:
            start = m.start("name") + parts[0].start()
            yield start, m.end("name"), text[start : m.end("name")], False


def _kind_named(pattern: re.Pattern[str], text: str) -> Iterator[_Candidate]:
    """Short names that the word next to them (`_KIND_BEFORE`, `_KIND_AFTER`) calls a
    service, host or database."""
    for m in pattern.finditer(text):
        if not _not_name(m.group("name")):
            yield m.start("name"), m.end("name"), m.group("name"), False


def _capitalised(text: str) -> Iterator[_Candidate]:
    """Runs of capitalised words, trimmed of words that cannot start or end a name."""
    for m in _CAPS.finditer(text):
        words = _trimmed_words(text, m)
        if not words:
            continue
        start, end = words[0][0], words[-1][1]
        name = text[start:end]
        # A capitalised first word is usually just the start of a sentence: keep it only
        # when a person verb follows, or when the name also appears elsewhere.
        weak = (
            _sentence_initial(text, start)
            and len(words) == 1
            and guess_entity_type(name, text[end:][:30]) not in _STRONG_TYPES
        )
        yield start, end, name, weak


def _trimmed_words(text: str, m: re.Match[str]) -> list[tuple[int, int, str]]:
    words = [
        (m.start() + w.start(), m.start() + w.end(), w.group(0)) for w in _WORD.finditer(m.group(0))
    ]
    # "a band called The Night Owls": a capital "The" inside a sentence belongs to the name.
    titled = (
        len(words) >= 2
        and words[0][2] == "The"
        and not _sentence_initial(text, words[0][0])
        and not _not_name(words[-1][2])
    )
    while words and not titled and _not_name(words[0][2]):
        words.pop(0)
    while words and _not_name(words[-1][2]):
        words.pop()
    return words


def find_names(
    text: str, matcher: EntityMatcher | None = None, *, typed: bool = True
) -> list[NameMention]:
    """Known entity mentions plus new name-like words, every occurrence, in text order.

    New names are CamelCase, kebab-case or snake_case identifiers with a digit or a
    technical part ("auth-service", "deploy-v2.3.1", "AUTH_SECRET"), file names,
    "deploy v1.2" phrases, and capitalised words that do not start a sentence
    (or do, when a verb like "said" follows: "Alice said ..."). Later occurrences
    of a name carry the name (and type) of its first occurrence.

    With `typed=False` a new name's type is not guessed (its `entity_type` is
    "entity"): the same names at the same spans, for a caller that reads only the
    names, at about two thirds of the cost.
    """
    known = matcher.find(text) if matcher else []
    taken = [m.span for m in known]
    by_key: dict[str, NameMention] = {}
    for m in known:
        by_key.setdefault(normalize_name(m.name), m)
    out = list(known)
    cands = [
        (start, end, _POSSESSIVE.sub("", name), weak)
        for start, end, name, weak in sorted(
            _candidates(text), key=lambda c: (c[0], -(c[1] - c[0]))
        )
    ]
    # A key ignores the spaces `strip` takes off a name: one key per candidate serves both.
    keys = [_key_of(c[2]) for c in cands]
    strong = set(by_key) | {key for key, c in zip(keys, cands, strict=True) if not c[3]}
    for (start, end, name, weak), key in zip(cands, keys, strict=True):
        name = name.strip()
        if not _free_name(name, key, (start, end), taken) or (weak and key not in strong):
            continue
        taken.append((start, end))
        first = by_key.get(key)
        if first is not None:
            out.append(NameMention(first.name, (start, end), first.known, first.entity_type))
            continue
        mention = _first_mention(text, name, key, (start, end), matcher, typed)
        by_key[key] = mention
        out.append(mention)
    out.sort(key=lambda m: m.span[0])
    return out


def _free_name(name: str, key: str, span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    """A candidate that can be a name here: not blank, not one letter (but a capital
    other than "I"/"A": "service X"), and not overlapping a name already found."""
    short = len(name) < 2 and not (name.isupper() and name not in ("I", "A"))
    start, end = span
    return bool(key) and not short and not any(s < end and start < e for s, e in taken)


def _first_mention(
    text: str,
    name: str,
    key: str,
    span: tuple[int, int],
    matcher: EntityMatcher | None,
    typed: bool = True,
) -> NameMention:
    """The first mention of a name: a known entity by its stored name, else a new name
    with the type its words and surroundings suggest (when `typed`)."""
    if matcher and key in matcher.by_key:
        return NameMention(matcher.by_key[key], span, True, "entity", 1.0)
    if not typed:
        return NameMention(name, span, False, "entity", 1.0)
    start, end = span
    etype = guess_entity_type(name, text[end:][:40], text[:start][-20:])
    return NameMention(name, span, False, etype, 1.0)


def ngram_keys(text: str, max_words: int = 4) -> list[str]:
    """Normalised keys of every word n-gram (n ≤ max_words) of `text`."""
    words = [w for w in text.replace("?", " ").replace(",", " ").split() if w]
    keys: set[str] = set()
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i : i + n])
            # "June's" is June's: the name without its possessive is a key too.
            for form in {gram, _POSSESSIVE.sub("", gram)}:
                key = normalize_name(form)
                if len(key) >= 2:
                    keys.add(key)
    return sorted(keys)
