"""Loading a Python file that belongs to no package (a script, an example) for its tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """The module of the file at `path`, run once and registered in `sys.modules` under
    the file's name (dataclasses look their module up there).

    Raises:
        ImportError: the file cannot be loaded as a module.
    """
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
