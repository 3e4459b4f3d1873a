"""A package's names loaded on first use (PEP 562).

``app.stream`` and ``app.mcp`` re-export names from their submodules, but a
command that needs one piece (``inert`` for a printed line, ``.config`` at
every start) must not import the rest with it. This is the one loader both
use; it imports nothing itself, so the sans-I/O core stays so.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False  # typing is not imported: ``callstream --help`` passes through here
if TYPE_CHECKING:
    from typing import Any


def lazy_exports(package: str, where: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``where`` maps a relative
    submodule (``".blocks"``) to the names it holds. A name is imported the
    first time it is asked for, then kept in the package's namespace so the
    next lookup never comes back here."""
    owner = {name: module for module, names in where.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
