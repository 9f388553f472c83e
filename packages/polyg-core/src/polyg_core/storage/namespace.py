"""Namespace (graph key) names."""

from __future__ import annotations

from polyg_shared.types import is_graph_name

from polyg_core.errors import InvalidNamespace


def validate_namespace(name: str) -> str:
    """Return `name` if it is a valid namespace, else raise.

    Raises:
        InvalidNamespace: the name is empty, longer than 64 characters or has other
            characters than letters, digits, `_`, `.` and `-`.
    """
    if not is_graph_name(name):
        raise InvalidNamespace(
            f"invalid graph name {name!r}: use 1-64 characters from letters, digits, '_', '.' and '-' "
            "(for example 'polyg', 'project-x' or 'scratch_1')"
        )
    return name
