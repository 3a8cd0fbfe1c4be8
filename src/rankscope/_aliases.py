"""Old import paths kept working for one release after a module moved (deprecated).

A renamed module stays importable under its old name: :func:`redirect` maps
the old dotted names to the new ones, and importing an old name gives a thin
stand-in module that hands out the new module's names (the same objects) and
warns once with a :class:`DeprecationWarning` naming the new path. A module
split after it moved names the modules its names went on to (``also``): the
stand-in hands out their names too and its warning names them. Nothing in
the package imports an old path; the layers test places the stand-ins above
everything else.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["AliasModule", "redirect", "warn_moved"]

_MOVED: dict[str, str] = {}
"""Old dotted name -> new dotted name (modules and packages)."""

_ALSO: dict[str, tuple[str, ...]] = {}
"""Old dotted name -> the modules the new one's names went on to when it was split."""


class AliasModule(types.ModuleType):
    """A stand-in for a moved module: its attributes are the new module's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        for new in (_MOVED[self.__name__], *_ALSO.get(self.__name__, ())):
            target = importlib.import_module(new)
            if hasattr(target, name):
                return getattr(target, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({name for new in (_MOVED[self.__name__], *_ALSO.get(self.__name__, ()))
                       for name in dir(importlib.import_module(new))})


def warn_moved(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated for ``new`` (``stacklevel``: the caller's caller)."""
    warnings.warn(f"{old} moved to {new}; the old path goes in the next release",
                  DeprecationWarning, stacklevel=stacklevel)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = AliasModule(spec.name)
        new = _MOVED[spec.name]
        module.__doc__ = f"Deprecated: moved to :mod:`{new}`."
        if any(old.startswith(spec.name + ".") for old in _MOVED):
            module.__path__ = []  # a package: its old submodules are found by the finder
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # the import machinery's own frames are skipped: the warning names the importer
        warn_moved(module.__name__, " and ".join(
            (_MOVED[module.__name__], *_ALSO.get(module.__name__, ()))), stacklevel=3)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader())


_FINDER = _Finder()


def redirect(moved: Mapping[str, str],
             also: Mapping[str, Sequence[str]] | None = None) -> None:
    """Make each old dotted name of ``moved`` import as a stand-in for its new module.

    Called by the package that held the old modules (or by a stand-in package
    itself), before Python looks for them. ``also`` maps an old name to the
    modules its new module was split into later: their names are handed out
    too, the new module's first.
    """
    _MOVED.update(moved)
    _ALSO.update({old: tuple(news) for old, news in (also or {}).items()})
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
