"""A package's names loaded on first use: the one ``__getattr__`` of the lazy facades.

``rankscope.compare``, ``rankscope.fusion`` and ``rankscope.llm_judge`` name
their public objects in their ``__init__`` without importing the modules that
define them (a command that needs one pays only for it):
:func:`lazy_exports` gives the module ``__getattr__`` that imports the
defining module when a name is first read and keeps the object, and the
``__dir__`` that lists the public names.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str],
                 names: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose name ``N`` lives in ``exports[N]``.

    Examples
    --------
    >>> getattr_, dir_ = lazy_exports("rankscope.fusion", {"fuse": "rankscope.fusion.combine"},
    ...                               ["fuse"])
    >>> getattr_("fuse").__module__, dir_()
    ('rankscope.fusion.combine', ['fuse'])
    """
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        sys.modules[package].__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__
