"""Names of a package that need an optional extra, loaded on first use.

A package whose modules import an extra's library (``inspect_ai``, ``mcp``) keeps the names that
need it out of its import: its module ``__getattr__`` is ``lazy_names(...)``, which imports the
holding module when a name is first asked for. When the extra is missing, the ``ImportError`` says
which extra to install; any other import error is raised as it is (it is a bug, not an install).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, modules: Mapping[str, str], extra: str, libraries: tuple[str, ...]
) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``modules`` maps each lazy name to the private
    module holding it; ``libraries`` are the top-level modules the extra ``extra`` installs."""

    def load(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            loaded = importlib.import_module(f"{package}.{module}")
        except ImportError as exc:
            if exc.name and exc.name.split(".")[0] in libraries:
                raise ImportError(
                    f"{package}.{name} needs the {extra} extra: pip install 'sopbench[{extra}]'"
                ) from exc
            raise
        return getattr(loaded, name)

    return load
