"""Memory categories and WHO / WHEN / PROJECT / WHY tags, and recall's filters on them.

A memory is classified procedural / episodic / semantic (by the extractor or given to
`remember`) and carries free tags. WHO, PROJECT and WHY are tags with a prefix
(`who:alice`, `project:polyg`, `why:incident follow-up`); WHEN is the memory's
`created_at` (the reference time it was remembered at). Filters apply to memories
(`S_Memory` nodes) only: other nodes carry no category or tags and are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from polyg_shared.nodes import MemoryCategory

from polyg_core.errors import InvalidInput, check_choice
from polyg_core.recall.decay import MemoryMeta

WHO = "who"
PROJECT = "project"
WHY = "why"


def _clean(value: str, what: str) -> str:
    text = " ".join(value.split())
    if not text:
        raise InvalidInput(f"{what} is blank; give a non-empty value or leave it out")
    return text


def prefixed_tags(
    tags: Sequence[str] = (),
    *,
    who: str | None = None,
    project: str | None = None,
    why: str | None = None,
) -> list[str]:
    """The tags to store: the given ones plus `who:...`, `project:...`, `why:...`.

    Raises:
        InvalidInput: a blank who / project / why.
    """
    out = list(tags)
    for prefix, value in ((WHO, who), (PROJECT, project), (WHY, why)):
        if value is not None:
            out.append(f"{prefix}:{_clean(value, prefix)}")
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a recall keeps (all given conditions must hold; matching ignores case)."""

    category: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    project: str | None = None
    who: str | None = None

    @classmethod
    def of(
        cls,
        *,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        project: str | None = None,
        who: str | None = None,
    ) -> MemoryFilter:
        """A validated filter.

        Raises:
            InvalidInput: an unknown category or a blank value.
        """
        if category is not None:
            check_choice(MemoryCategory, category, "memory category")
        return cls(
            category=category,
            tags=tuple(_clean(t, "tag") for t in tags or ()),
            project=_clean(project, PROJECT) if project is not None else None,
            who=_clean(who, WHO) if who is not None else None,
        )

    @property
    def active(self) -> bool:
        """True when any condition is set."""
        return bool(self.category or self.tags or self.project or self.who)

    def required_tags(self) -> set[str]:
        """Lower-cased tags a memory must carry."""
        wanted = {t.lower() for t in self.tags}
        if self.project:
            wanted.add(f"{PROJECT}:{self.project}".lower())
        if self.who:
            wanted.add(f"{WHO}:{self.who}".lower())
        return wanted

    def matches(self, meta: MemoryMeta) -> bool:
        """Whether a memory with this metadata passes the filter."""
        return self.matches_entry(meta.category, meta.tags)

    def matches_entry(self, category: str | None, tags: Sequence[str]) -> bool:
        """Whether a memory of this category with these tags passes the filter."""
        if self.category and (category or "").lower() != self.category.lower():
            return False
        have = {t.lower() for t in tags}
        return self.required_tags() <= have

    def describe(self) -> dict[str, Any]:
        """The set conditions, for the recall report."""
        out: dict[str, Any] = {}
        if self.category:
            out["category"] = self.category
        if self.tags:
            out["tags"] = list(self.tags)
        if self.project:
            out["project"] = self.project
        if self.who:
            out["who"] = self.who
        return out
