"""The one rule for list answers: a page of at most `limit` results that fits in
`max_tokens`, and an opaque cursor to the rest.

A handler opens the page from its input, asks its source for the results from
`page.offset` on (one more than `page.limit`, so the page knows whether more
exist), and lets `page.fill` build the answer:

    page = Page.open(inp, limit=inp.limit)
    events = await mem.temporal.timeline(ns, ..., limit=page.fetch)
    return page.fill(page.window(events), lambda part: TimelineOutput(events=part, ...))

The cursor is the offset of the next result and a digest of the call's other
arguments, base64-encoded: passed back with the same arguments it continues; with
other arguments it is refused, so a page never silently mixes two queries. Offsets
follow the source's order, which every list source keeps stable (by time, name,
score then id); writes between two pages can shift the rest by the number of
results added or removed.

Tokens are estimated (`estimate_tokens`), never counted with a model's tokenizer,
and the estimate errs high: tests/test_paging.py checks it against cl100k_base on
the tools' own answers. A page always holds at least one result, so paging always
advances; a single result larger than the budget has its longest texts and lists
shortened (`truncated: true`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast

from polyg_core.errors import InvalidInput
from polyg_shared.pages import PageInput, PageOutput
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

T = TypeVar("T")
OutT = TypeVar("OutT", bound=PageOutput)
M = TypeVar("M", bound=BaseModel)

MAX_OFFSET: Final = 10_000
"""How far paging reaches into one result list; past it a narrower query is asked for."""
_CURSOR_RESERVE: Final = 40
"""Tokens kept for next_cursor and truncated, which are set after the page is filled."""
_ELLIPSIS: Final = "…"
_PIECE = re.compile(r"[A-Za-z]+|[0-9]+|[^\x00-\x7f]|\s+|[^A-Za-z0-9\s]")
# The pieces counted by class over the text's UTF-8 bytes, each class seen through a
# translation that keeps its own characters and turns every other byte into one filler
# (bytes outside ASCII are never a letter, a digit or a space, as the pieces have it).
_LETTER, _DIGIT, _SPACE, _OTHER = ord("a"), ord("0"), ord(" "), ord("x")
_ASCII_SPACE: Final = frozenset(c for c in range(128) if chr(c).isspace())


def _view(keep: Callable[[int], bool], mark: int) -> bytes:
    return bytes(mark if c < 128 and keep(c) else _OTHER for c in range(256))


_LETTER_VIEW = _view(lambda c: chr(c).isalpha(), _LETTER)
_DIGIT_VIEW = _view(lambda c: chr(c).isdigit(), _DIGIT)
_SPACE_VIEW = _view(lambda c: c in _ASCII_SPACE, _SPACE)
_PUNCTUATION = bytes(c for c in range(128) if not (chr(c).isalnum() or c in _ASCII_SPACE))
_WIDE_SPACE = re.compile(r"(?=\s)[^\x00-\x7f]")
_PAGING_FIELDS: Final = frozenset({"cursor", "max_tokens"})


def estimate_tokens(text: str) -> int:
    """Tokens of a text as an LLM tokenizer cuts it, estimated on the high side.

    Letters count one token per word (more for long runs), digits one per two,
    punctuation one each, characters outside ASCII one per UTF-8 byte (the most a
    byte-level tokenizer spends). On the tools' JSON answers it runs about 1.2-1.5
    times cl100k_base's count (twice or more for non-Latin text); uuids, numbers and
    non-Latin text are where a plain characters-per-token rule falls short. Strings
    of random letters are the exception: cl100k_base cuts them finer than words.
    """
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the piece walk says so as before
        return _estimate_by_piece(text)
    if len(data) != len(text) and _WIDE_SPACE.search(text):
        return _estimate_by_piece(text)  # a run of spaces may take in a wide one
    letters = b"x" + data.translate(_LETTER_VIEW)
    digits = b"x" + data.translate(_DIGIT_VIEW)
    spaces = b"x" + data.translate(_SPACE_VIEW)
    ascii_count = len(text.encode("ascii", "ignore"))
    return (
        _letter_tokens(letters)
        + _digit_tokens(digits)
        + _space_tokens(spaces)
        + len(data)
        - len(data.translate(None, _PUNCTUATION))
        + len(data)
        - ascii_count  # bytes outside ASCII
    )


def _digit_tokens(view: bytes) -> int:
    """One token per two digits of each run, rounded up: half of all digits and of the
    runs of odd length (what is left of a run once its pairs are taken out)."""
    digits = view.count(b"0")
    odd_runs = view.replace(b"00", b"").count(b"0")
    return (digits + odd_runs) // 2


def _letter_tokens(view: bytes) -> int:
    """One token per run of letters, and one more per three letters past the sixth: with
    each three letters written as one mark, a run of n letters holds n // 3 marks, of
    which all but two count."""
    thirds = view.replace(b"aaa", b"b")
    past_six = thirds.count(b"b") - thirds.count(b"xb") - thirds.count(b"xbb")
    return view.count(b"xa") + past_six


def _space_tokens(view: bytes) -> int:
    """One token per eight characters of each run of spaces, rounded down."""
    total = 0
    length = 8
    while found := view.count(b"x" + b" " * length):  # runs of at least `length`
        total += found
        length += 8
    return total


def _estimate_by_piece(text: str) -> int:
    """`estimate_tokens` piece by piece: the rule itself, for text holding whitespace
    outside ASCII (a run of spaces may take it in)."""
    count = 0
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        first = piece[0]
        if first.isspace():
            count += len(piece) // 8
        elif first.isdigit() and first.isascii():
            count += (len(piece) + 1) // 2
        elif first.isascii() and first.isalpha():
            count += 1 + max(0, len(piece) - 6) // 3
        elif first.isascii():
            count += 1
        else:
            count += len(first.encode())
    return count


def _fits_outright(empty: BaseModel, results: Sequence[Any], max_tokens: int) -> bool:
    """Whether the empty answer and every result fit `max_tokens` with room for the
    cursor, by their JSON's UTF-8 length: `estimate_tokens` never counts more tokens than a
    text has bytes, so then `Page.fill` counting them one by one would keep them all."""
    size = len(_json(empty).encode()) + _CURSOR_RESERVE
    for result in results:
        size += len(_json(result).encode())
        if size > max_tokens:
            return False
    return size <= max_tokens


def json_tokens(value: Any) -> int:
    """Estimated tokens of a value as compact JSON (models by alias)."""
    return estimate_tokens(_json(value))


def _json(value: Any) -> str:
    return _dumps(to_jsonable_python(value, by_alias=True))


@dataclass(frozen=True)
class Page:
    """One page of a list answer: where it starts, how many results, the token budget."""

    offset: int
    limit: int
    max_tokens: int
    query: str

    @classmethod
    def open(cls, inp: PageInput, *, limit: int, limit_field: str | None = "limit") -> Page:
        """The page a call asks for.

        Args:
            inp: the tool's validated input.
            limit: the most results the page holds (the input's limit field).
            limit_field: the input's name for it, left out of the query digest so a
                later page may ask for more or fewer (None: the limit also decides
                what the results are, and must stay).

        Raises:
            InvalidInput: the cursor is not one this server gave, or it continues a
                call with other arguments.
        """
        query = _digest(inp, limit_field)
        offset = 0 if inp.cursor is None else _decode(inp.cursor, query)
        return cls(offset=offset, limit=limit, max_tokens=inp.max_tokens, query=query)

    @property
    def fetch(self) -> int:
        """How many results to ask the source for, counted from the first (one more than
        the page ends at, to know whether more exist)."""
        return self.offset + self.limit + 1

    def window(self, results: Sequence[T]) -> list[T]:
        """The part of `results` (counted from the first) this page may hold, and one more."""
        return list(results[self.offset : self.fetch])

    def fill(self, window: Sequence[T], build: Callable[[list[T]], OutT]) -> OutT:
        """The answer for this page.

        Args:
            window: the results from `offset` on: up to `limit` of them, and any more
                (which only says that there are more).
            build: makes the answer from the results it holds.
        """
        candidates = list(window[: self.limit])
        if _fits_outright(build([]), candidates, self.max_tokens):
            # Every result fits: counting them one by one would keep them all.
            kept, shortened = candidates, False
        else:
            kept, shortened = self._kept(candidates, build)
        more = len(window) > len(kept)
        next_cursor = _encode(self.offset + len(kept), self.query) if more else None
        answer = build(kept)
        return answer.model_copy(
            update={"next_cursor": next_cursor, "truncated": more or shortened}
        )

    def _kept(self, candidates: list[T], build: Callable[[list[T]], OutT]) -> tuple[list[T], bool]:
        """The results that fit the budget, counted one by one (the first one shortened
        when even it does not fit), and whether one was shortened."""
        budget = self.max_tokens - json_tokens(build([])) - _CURSOR_RESERVE
        kept: list[T] = []
        used = 0
        shortened = False
        for item in candidates:
            cost = json_tokens(item)
            if used + cost > budget:
                if kept:
                    break
                item, shortened = _shorten(item, budget), True
                cost = json_tokens(item)
            kept.append(item)
            used += cost
        return kept, shortened

    def fill_field(self, answer: OutT, field: str) -> OutT:
        """`fill` for an answer that already holds the results (from the first) in `field`."""
        results: list[Any] = getattr(answer, field)
        return self.fill(self.window(results), lambda part: answer.model_copy(update={field: part}))


def within_budget(
    answer: M, max_tokens: int, drop: Sequence[str], trim: Sequence[str] = ()
) -> tuple[M, list[str]]:
    """An answer that fits `max_tokens`: the fields of `drop` emptied in turn, then the
    lists of `trim` cut from the end (one item stays), until it fits.

    The answer's JSON is estimated once; each step then adds the estimate of what it put
    in and takes off that of what it took out. That is exact: in compact JSON a field's
    value and a list's items are bounded by punctuation, which `estimate_tokens` never
    joins to a neighbouring piece, so a text's estimate is the sum of its parts'.

    Returns:
        The answer and the names of the fields emptied or cut, in that order.
    """
    budget = max_tokens - _CURSOR_RESERVE
    data = cast(dict[str, Any], to_jsonable_python(answer, by_alias=True))
    text = _dumps(data)
    if len(text.encode()) <= budget:  # the estimate never exceeds the bytes
        return answer, []
    total = estimate_tokens(text)
    keys = _json_keys(type(answer))
    omitted: list[str] = []
    for field in drop:
        if total <= budget:
            return answer, omitted
        emptied = _emptied(getattr(answer, field))
        answer = answer.model_copy(update={field: emptied})
        key = keys[field]
        new = to_jsonable_python(emptied, by_alias=True)
        total += estimate_tokens(_dumps(new)) - estimate_tokens(_dumps(data[key]))
        data[key] = new
        omitted.append(field)
    for field in trim:
        if total <= budget:
            break
        key = keys[field]
        items = cast(list[Any], data[key])
        costs = [estimate_tokens(_dumps(item)) for item in items]
        kept = len(items)
        while kept > 1 and total > budget:
            fewer = kept // 2 if kept > 8 else kept - 1
            total -= _list_tokens(costs[:kept]) - _list_tokens(costs[:fewer])
            kept = fewer
        if kept < len(items):
            answer = answer.model_copy(update={field: list(getattr(answer, field))[:kept]})
            data[key] = items[:kept]
            omitted.append(field)
    return answer, omitted


def _list_tokens(costs: Sequence[int]) -> int:
    """The estimate of a JSON list whose items' estimates are `costs`: its brackets and
    the commas between items are a token each."""
    return 2 + sum(costs) + max(0, len(costs) - 1)


def _json_keys(model: type[BaseModel]) -> dict[str, str]:
    """Each field's key in the model's JSON by alias."""
    return {
        name: info.serialization_alias or info.alias or name
        for name, info in model.model_fields.items()
    }


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _emptied(value: Any) -> Any:
    """The empty value of a field: [] for a list, {} for a dict, '' for text; a model with
    its lists and long texts emptied (short strings, such as kinds, stay); None otherwise."""
    if isinstance(value, BaseModel):
        return value.model_copy(
            update={
                name: _emptied(part)
                for name, part in value
                if isinstance(part, list | dict) or (isinstance(part, str) and len(part) > 64)
            }
        )
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    if isinstance(value, str):
        return ""
    return None


def _digest(inp: PageInput, limit_field: str | None) -> str:
    skip = {*_PAGING_FIELDS, *([limit_field] if limit_field else [])}
    args = inp.model_dump(mode="json", exclude=skip)
    text = json.dumps([type(inp).__name__, args], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _encode(offset: int, query: str) -> str:
    raw = json.dumps({"o": offset, "q": query}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str, query: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        offset, made_for = data["o"], data["q"]
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise InvalidInput(
            "cursor is not one this tool gave: pass next_cursor from the previous answer "
            "unchanged, or leave cursor out for the first page"
        ) from None
    if made_for != query:
        raise InvalidInput(
            "this cursor continues a call with other arguments: repeat that call's "
            "arguments with it (only limit and max_tokens may change), or leave cursor "
            "out to start again"
        )
    if not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(
            f"paging reaches {MAX_OFFSET:,} results at most: narrow the query (a filter, "
            "a time window) instead of paging further"
        )
    return offset


def _shorten(item: T, budget: int) -> T:
    """The item with its longest strings and lists cut until it fits `budget` tokens."""
    data = to_jsonable_python(item, by_alias=True)
    for _ in range(64):
        if estimate_tokens(json.dumps(data, ensure_ascii=False)) <= max(budget, 1):
            break
        data = _cut_largest(data)
    if isinstance(item, BaseModel):
        return cast(T, type(item).model_validate(data))
    return cast(T, data)


def _cut_largest(data: Any) -> Any:
    """`data` with its largest string halved (ending in '…') or largest list halved."""
    path, size = _largest(data, ())
    if not path and size == 0:
        return data
    return _replace(data, path)


def _largest(data: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...], int]:
    best: tuple[tuple[Any, ...], int] = ((), 0)
    if isinstance(data, str):
        return (path, len(data)) if len(data) > 8 else best
    if isinstance(data, list):
        items = cast(list[Any], data)
        best = (path, len(_json(items))) if len(items) > 1 else best
        children = enumerate(items)
    elif isinstance(data, dict):
        children = cast(dict[str, Any], data).items()
    else:
        return best
    for key, child in children:
        found = _largest(child, (*path, key))
        if found[1] > best[1]:
            best = found
    return best


def _replace(data: Any, path: tuple[Any, ...]) -> Any:
    if path:
        head, rest = path[0], path[1:]
        if isinstance(data, list):
            copy = list(cast(list[Any], data))
        else:
            copy = dict(cast(dict[str, Any], data))
        copy[head] = _replace(copy[head], rest)
        return copy
    if isinstance(data, str):
        return data[: len(data) // 2].rstrip(_ELLIPSIS) + _ELLIPSIS
    items = cast(list[Any], data)
    return items[: max(1, len(items) // 2)]
