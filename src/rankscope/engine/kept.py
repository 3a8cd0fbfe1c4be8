"""A bound on the arrays a :class:`~rankscope.engine.context.Context` keeps for later kernels.

A context keeps what its kernels work out (the relevant and judged row sets,
each row's grade as an integer, a gain table's ideal rankings, ...) so that the
next kernel reading it does not make it again. Every such value is a pure
function of the rankings and its key, so letting one go costs only the time to
make it again, the same to the bit. On large evaluations (10^7 judged rows) the
kept values of ``-m all_trec`` held about 900 MB until the end; a :class:`Kept`
bounds them: once what the context (and its levels view) keeps is past
:data:`BUDGET` bytes of arrays, the values read least recently go, first those
no kernel holds at that moment (letting go of one a kernel still holds frees
nothing and would make a second copy if asked for again).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

if TYPE_CHECKING:
    from rankscope.engine.context import Context

__all__ = ["BUDGET", "WATCHED_FROM", "Bounded", "Kept", "held_bytes", "kept_property"]

_T = TypeVar("_T")

BUDGET = 512 * 2**20
"""Bytes of arrays a context and its levels view keep for later kernels at most (past
it the least recently read go; a value larger than this alone is kept until the next)."""

WATCHED_FROM = 2_000_000
"""Ranked plus judged rows from which a context's kept values are bounded: below it
everything is kept (at most a few dozen arrays of a few MB), and a small call pays
nothing for the book-keeping."""

_SMALL = 256
"""A value under 1/_SMALL of the budget (2 MB of 512) is neither counted nor let go:
one number a query, made again as often as it was let go, frees next to nothing."""

_HELD = 2
"""References to a kept value when only the cache and this module's own look hold it."""


class Bounded:
    """What keeps values under a :class:`Kept` of its own (a context): not counted as
    held by a value that refers to it, nor let go with it."""

    __slots__ = ()


def held_bytes(value: object, depth: int = 0) -> int:
    """Bytes of the numpy arrays ``value`` holds (in a tuple, list, dict or an object's
    attributes, a few levels deep); a context inside (a :class:`Bounded`) counts nothing."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if depth > 3 or isinstance(value, (str, bytes, int, float)):
        return 0
    if isinstance(value, (tuple, list)):
        return sum(held_bytes(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return sum(held_bytes(item, depth + 1) for item in value.values())
    if isinstance(value, Bounded):
        return 0
    attributes = getattr(value, "__dict__", None)
    return 0 if attributes is None else held_bytes(attributes, depth + 1)


class Kept:
    """The least recently read values of one or more contexts' caches, bounded by size.

    A context calls :meth:`add` for each value it makes and :meth:`read` each time
    it finds one; :meth:`add` lets go of the least recently read values (never the
    one just added) until the rest fit in ``limit`` bytes.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self.let_go = 0
        """How many values were let go (for tests and measurements)."""
        self._clock = 0
        # (context, key) by id -> [context, key, bytes, last read]
        self._entries: dict[tuple[int, tuple[object, ...]], list[Any]] = {}

    def add(self, ctx: Context, key: tuple[object, ...], value: object) -> None:
        """Count ``value``, just kept by ``ctx`` under ``key``; let go of older ones."""
        size = held_bytes(value)
        if size * _SMALL < self.limit:
            return  # little to gain by letting it go (one value a query, a context)
        self._clock += 1
        self._entries[(id(ctx), key)] = [ctx, key, size, self._clock]
        self.total += size
        if self.total > self.limit:
            self._shrink((id(ctx), key))

    def read(self, ctx: Context, key: tuple[object, ...], value: object) -> None:
        """Mark ``ctx``'s ``key`` read now, and count what it holds now (an object's
        lazily made attributes grow it)."""
        entry = self._entries.get((id(ctx), key))
        if entry is None:
            return
        self._clock += 1
        entry[3] = self._clock
        if not isinstance(value, np.ndarray):
            size = held_bytes(value)
            self.total += size - entry[2]
            entry[2] = size

    def _shrink(self, spare: tuple[int, tuple[object, ...]]) -> None:
        oldest_first = sorted((e for k, e in self._entries.items() if k != spare),
                              key=lambda e: int(e[3]))
        # first the values only the cache holds (letting go frees them), then the rest
        for free_only in (True, False):
            for entry in oldest_first:
                if self.total <= self.limit:
                    return
                ctx, key, size, _ = entry
                cache = ctx._cache  # the cache this budget bounds
                value = cache.get(key)
                if (id(ctx), key) not in self._entries or value is None:
                    continue
                # the cache's reference, and the one of getrefcount's argument
                if free_only and sys.getrefcount(value) > _HELD + 1:
                    continue
                del value
                del cache[key]
                del self._entries[(id(ctx), key)]
                self.total -= size
                self.let_go += 1


class kept_property(Generic[_T]):  # a decorator, as cached_property
    """A context's attribute made once and kept: in its cache (:meth:`Context.cached`)
    when the context is bounded, so that its :class:`Kept` budget may let it go (it is
    made again when next read); else in the instance, as ``functools.cached_property``
    does, where reading it again costs one attribute lookup (a small call reads some
    a thousand times)."""

    def __init__(self, make: Callable[[Any], _T]) -> None:
        self.make = make
        self.name = make.__name__
        self.key = (make.__name__,)
        self.__doc__ = make.__doc__

    def __get__(self, ctx: Context | None, owner: type | None = None) -> _T:
        if ctx is None:  # read on the class (documentation, introspection)
            return self  # type: ignore[return-value]
        make = self.make
        if ctx.kept is None:
            value = ctx.__dict__[self.name] = make(ctx)  # read from the instance from now
            return value
        return ctx.cached(self.key, lambda: make(ctx))  # type: ignore[no-any-return]
