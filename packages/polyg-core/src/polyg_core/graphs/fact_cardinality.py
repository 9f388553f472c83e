"""Which predicates hold one value at a time and which accumulate values.

A single-valued predicate (team, manager, city, owner) has one current value: a new
value ends the old one. A multi-valued predicate (skills, likes, visited) keeps every
value current side by side. The kind comes from the caller (`add_fact`'s
`cardinality`), else from the LLM extractor, else from the small list below; an
unknown predicate is single-valued, and the values it replaced stay as history.
This module is the one owner of that choice; `ADD_FACT` applies it.
"""

from __future__ import annotations

from typing import Literal

from polyg_core.errors import InvalidInput
from polyg_core.text.normalize import normalize_name

Cardinality = Literal["single", "multi"]
CARDINALITIES: tuple[Cardinality, ...] = ("single", "multi")

# Normalised predicate keys (see `normalize_name`) that accumulate values.
_MULTI_VALUED_PREDICATES = """
skill skills has_skill knows speaks language languages likes loves enjoys dislikes hobby
hobbies interest interests visited has_visited traveled_to travelled_to read has_read
owns_pet pet pets friend friends friend_of knows_person tag tags uses tool tools
certification certifications award awards child children sibling siblings alias aliases
contributes_to attended plays instrument
"""
MULTI_VALUED: frozenset[str] = frozenset(
    normalize_name(p) for p in _MULTI_VALUED_PREDICATES.split()
)


def check_cardinality(value: str | None) -> Cardinality | None:
    """The given kind, checked; None when not given.

    Raises:
        InvalidInput: neither 'single' nor 'multi'.
    """
    if value is None:
        return None
    kind = value.strip().lower()
    if kind == "single":
        return "single"
    if kind == "multi":
        return "multi"
    raise InvalidInput(
        f"cardinality must be 'single' (a new value ends the old one, e.g. team) or "
        f"'multi' (values accumulate, e.g. skills), not {value!r}"
    )


def cardinality_of(predicate: str, given: str | None = None) -> Cardinality:
    """The kind of `predicate`: the caller's when given, else the built-in list's,
    else single-valued.

    Raises:
        InvalidInput: `given` is neither 'single' nor 'multi'.
    """
    checked = check_cardinality(given)
    if checked is not None:
        return checked
    return "multi" if normalize_name(predicate) in MULTI_VALUED else "single"
