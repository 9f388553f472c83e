"""Names a package exports but imports only on first use (a heavy module behind them)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `modules` (name ->
    the module that defines it) when it is first asked for.

    `package.__getattr__ = lazy_exports(__name__, {...})`; any other name is an
    AttributeError, as for a module without one.
    """

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
