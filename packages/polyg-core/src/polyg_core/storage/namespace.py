"""Namespace (graph key) names."""

from __future__ import annotations

import re

from polyg_core.errors import InvalidNamespace

_VALID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def validate_namespace(name: str) -> str:
    """Return `name` if it is a valid namespace, else raise.

    Raises:
        InvalidNamespace: the name is empty, longer than 64 characters or has other
            characters than letters, digits, `_`, `.` and `-`.
    """
    if not isinstance(name, str) or not _VALID.match(name):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidNamespace(
            f"invalid graph name {name!r}: use 1-64 characters from letters, digits, '_', '.' and '-' "
            "(for example 'polyg', 'project-x' or 'scratch_1')"
        )
    return name
